// WeightUpdate: what a program does once the tasks of one update (or inference pass) have run: the results of the
// other processes' replicas exchanged (or the error one of them hit, raised everywhere), and in training the
// replicas' gradients summed in a fixed order (across processes by GradientExchange, with the same bits), fp16
// loss scaling, the gradient check and clipping RunArgs asks for, the optimizer (with replicated tensor sharding:
// each replica its range of the state, then the all-gather), and every replica's weights made equal to the
// updated ones again.
//
//   std::vector<Tensor> grads = update.reduce(mbs, error, iteration, capture, overflows);
//   if (training) update.apply(grads, overflows, iteration, args, result, u);
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "device/CompileRecord.h"
#include "device/Device.h"
#include "device/IpuLayout.h"
#include "device/LossScaler.h"
#include "device/ReplicaWeights.h"
#include "device/Trace.h"
#include "loaders/RequestShard.h"

namespace gnn {

struct IpuRuntime;
struct MicroBatchRun;
class GradientExchange;

class WeightUpdate {
 public:
  /// What an update reads of its program. `onEveryIpu(kind, iteration, start, end)`: a trace slice on every
  /// simulated IPU's track (the all-reduce, the optimizer); `now`: the program's clock.
  struct Program {
    const IpuOptions& options;
    bool training = false;
    const IpuLayout& layout;
    int64_t replicas = 1;  // in the job
    const RequestShard& shard;  // this process's micro-batches of a request
    const std::vector<std::unique_ptr<IpuRuntime>>& ipus;
    ReplicaWeights& weights;
    Optimizer* optimizer = nullptr;
    std::function<double()> now;
    std::function<void(TaskKind, int64_t, double, double)> onEveryIpu;
  };

  explicit WeightUpdate(Program program);
  ~WeightUpdate();

  /// After the tasks of update (or device iteration) `iteration` ran, `error` the first one a task threw: the
  /// other processes' results exchanged, the error rethrown; in training, the update's gradients summed over
  /// replicas and stages (in the optimizer's order), the IPUs' fp16 overflows added to `overflows`, and with
  /// `capture` the stages' parameters recorded. The IPUs' gradient sinks are empty afterwards, thrown or not.
  std::vector<Tensor> reduce(std::vector<std::vector<MicroBatchRun>>& mbs, std::exception_ptr error,
                             int64_t iteration, CompileRecord* capture, int64_t& overflows);
  /// The optimizer's step on `grads` (unless the loss scaler skips the update), into `update` and `result`.
  void apply(std::vector<Tensor>& grads, int64_t overflows, int64_t iteration, const RunArgs& args,
             RunResult& result, UpdateResult& update);

  LossScaler& lossScaler() { return lossScaler_; }
  const LossScaler& lossScaler() const { return lossScaler_; }
  /// Seconds spent reducing gradients (the all-reduce) since the program was built.
  double allReduceSeconds() const { return allReduceSeconds_; }
  /// The gradient exchange's bytes across processes (zeros within one process).
  DeviceProgram::ExchangeBytes exchangeBytes() const;
  /// Stage whose IPU first received each parameter's gradient (-1: not yet known): where its optimizer state
  /// lives.
  std::shared_ptr<const std::vector<int64_t>> ownerStages() const { return ownerStage_; }

 private:
  std::vector<Tensor> sumGradients(uint64_t exchange);
  // The runtime of the replica's stage (the replica by its job number, one of this process's).
  IpuRuntime& ipu(int64_t replica, int64_t stage) const;
  void clearSinks();
  bool distributed() const;

  Program p_;
  LossScaler lossScaler_;
  std::unique_ptr<GradientExchange> gradientExchange_;  // training across processes: sums the replicas' gradients
  std::shared_ptr<std::vector<int64_t>> ownerStage_;
  uint64_t exchanges_ = 0;
  int64_t gradientExchanges_ = 0;
  double allReduceSeconds_ = 0;
};

}  // namespace gnn
