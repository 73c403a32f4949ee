// ExecutionProgram: construction (stages, replicas, where the optimizer's state lives, the trace's tracks) and a
// host request's phases: split into micro-batches, exchange them between processes, complete the last update,
// send them over the host link, run the updates (or the inference pass), collect the outputs.
#include "device/ExecutionProgram.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "device/CompileCapture.h"
#include "device/ExecutionProgramParts.h"
#include "device/GradientReduction.h"
#include "device/HostIo.h"
#include "device/ProcessExchange.h"
#include "device/StageTaskRunner.h"
#include "device/TaskScheduler.h"
#include "gnn/optim/GradNorm.h"
#include "gnn/system/Check.h"
#include "gnn/system/Parallel.h"
#include "gnn/tensor/HalfPrecision.h"

namespace gnn {

double labelCount(const Tensor& mask, double fallback) {
  if (!mask.defined()) return fallback;
  GNN_CHECK_ARG(mask.dtype() == DType::U8, "labelCount: mask must be uint8");
  const uint8_t* m = mask.data<uint8_t>();
  int64_t n = 0;
  for (int64_t i = 0; i < mask.numel(); ++i) n += m[i] != 0;
  return static_cast<double>(n);
}

ExecutionProgram::ExecutionProgram(std::string deviceName, BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                   const Batch& shapes, const IpuOptions& options, bool simulated)
    : deviceName_(std::move(deviceName)),
      master_(model),
      loss_(std::move(lossFn)),
      opt_(optimizer),
      options_(options),
      training_(optimizer != nullptr) {
  layout_.simulated = simulated;
  GNN_CHECK_ARG(model.numBlocks() >= 1, "compile: the model has no blocks");
  if (training_) GNN_CHECK_ARG(static_cast<bool>(loss_.loss), "compile: a training program needs a loss function");
  if (!layout_.simulated) {
    GNN_CHECK_ARG(options_.replicationFactor == 1, "the CPU device runs one replica (got replicationFactor ",
                  options_.replicationFactor, "): use --device ipu for replicas, or a larger --batch-size");
    GNN_CHECK_ARG(options_.pipelineSplits.empty(),
                  "the CPU device runs the model whole: --pipeline-splits needs --device ipu");
  }
  stageBlocks_ = stageRanges(model.blockNames(), options_.pipelineSplits);
  layout_.stages = static_cast<int64_t>(stageBlocks_.size());
  options_.validate(training_, layout_.stages);
  GNN_CHECK_ARG(layout_.simulated || options_.describeMemoryOptions().empty(),
                "compile: ", options_.describeMemoryOptions(),
                ": options of the simulated IPU (--device ipu)");
  replicas_ = options_.replicationFactor;
  accumulation_ = training_ ? options_.gradientAccumulation : options_.deviceIterations;
  shard_ = options_.shard(training_);
  layout_.firstLocalReplica = shard_.first;
  layout_.localReplicas = shard_.count;
  shapes_ = shapes;
  GNN_CHECK_ARG(!distributed() || !options_.replicatedTensorSharding,
                "--replicated-tensor-sharding runs its replicas in one process: across MPI processes each would own "
                "optimizer state the others update (run it without mpirun, or without the option)");
  schedule_ = training_ ? PipelineSchedule::training(layout_.stages, accumulation_, options_.executionStrategy)
                        : PipelineSchedule::inference(layout_.stages, accumulation_, options_.executionStrategy);
  numIpus_ = layout_.simulated ? options_.numIpus(layout_.stages) : 1;
  fp16_ = options_.precision == Precision::FP16;
  streaming_ = std::make_shared<MemoryAccount>("streaming");
  weights_ = std::make_unique<ReplicaWeights>(master_, opt_, layout_.localReplicas, fp16_);
  makeIpus();
  update_ = std::make_unique<WeightUpdate>(WeightUpdate::Program{
      options_, training_, layout_, replicas_, shard_, ipus_, *weights_, opt_, [this] { return now(); },
      [this](TaskKind kind, int64_t iteration, double start, double end) {
        recordOnEveryIpu(kind, iteration, start, end);
      }});
  if (training_) placeOptimizerState();
  const int64_t lanes = layout_.localReplicas * static_cast<int64_t>(schedule_.lanes.size());
  // The cores this process may use (setCoreSlots: shared with the other processes of the job on this host).
  workers_ = options_.workers > 0 ? options_.workers : std::min<int64_t>(coreSlots(), lanes);
  workers_ = std::max<int64_t>(1, std::min(workers_, lanes));
  if (!layout_.simulated) workers_ = 1;
  startRecord(record_, shapes, master_.blockNames(), stageBlocks_, schedule_);
  stageTimes_ = StageTimes(layout_.stages);
  makeTracks();
}

void ExecutionProgram::makeIpus() {
  for (int64_t r = layout_.firstLocalReplica; r < layout_.localEnd(); ++r)
    for (int64_t s = 0; s < layout_.stages; ++s) {
      auto ip = std::make_unique<IpuRuntime>();
      ip->memory = std::make_shared<MemoryAccount>(
          layout_.simulated ? "ipu" + std::to_string(layout_.ipu(r, s)) : "cpu");
      ip->ctx.setMemoryAccount(ip->memory);
      ip->ctx.setGradientSink(&ip->sink);
      if (fp16_) ip->ctx.setRounding(options_.stochasticRounding ? Rounding::StochasticHalf : Rounding::Half);
      ip->ctx.setMatmulPrecision(matmulPrecisionOf(options_.precision));
      ipus_.push_back(std::move(ip));
    }
}

void ExecutionProgram::placeOptimizerState() {
  // Where the optimizer's state lives: on the IPU whose stage owns the parameter (replica 0's; with replicated
  // tensor sharding, replica r's for shard r), or in streaming memory when offloaded.
  std::vector<std::shared_ptr<MemoryAccount>> accounts;
  for (const auto& ip : ipus_) accounts.push_back(ip->memory);
  const auto owners = update_->ownerStages();
  const IpuLayout layout = layout_;
  // `replica` counts this process's replicas from its first.
  auto onIpu = [accounts, owners, layout](size_t replica, size_t i) {
    const int64_t s = i < owners->size() && (*owners)[i] >= 0 ? (*owners)[i] : 0;
    return accounts[static_cast<size_t>(layout.local(layout.firstLocalReplica + static_cast<int64_t>(replica), s))];
  };
  const auto streaming = streaming_;
  if (options_.offloadOptimizer) {
    opt_->setStateAccounts([streaming](size_t) { return streaming; });
    if (fp16_) {
      // The fp32 master weights are the optimizer's too: they move to streaming memory.
      ExecutionContext off;
      off.setMemoryAccount(streaming_);
      ContextScope use(off);
      for (Variable& p : weights_->master()) p.value() = p.value().clone();
    }
  } else {
    opt_->setStateAccounts([onIpu](size_t i) { return onIpu(0, i); });
  }
  if (options_.replicatedTensorSharding) {
    std::function<std::shared_ptr<MemoryAccount>(size_t, size_t)> where = onIpu;
    if (options_.offloadOptimizer) where = [streaming](size_t, size_t) { return streaming; };
    opt_->setShards(Optimizer::balancedRanges(opt_->numElements(), replicas_), where);
  } else if (opt_->numShards() > 0) {
    opt_->setShards({}, nullptr);
  }
}

void ExecutionProgram::makeTracks() {
  std::vector<std::string> tracks;
  for (int64_t r = layout_.firstLocalReplica; r < layout_.localEnd(); ++r)
    for (int64_t s = 0; s < layout_.stages; ++s)
      tracks.push_back(layout_.simulated ? "IPU " + std::to_string(layout_.ipu(r, s)) + " (replica " +
                                               std::to_string(r) + ", stage " + std::to_string(s) + ": " +
                                               record_.stages[static_cast<size_t>(s)].name + ")"
                                         : "CPU");
  tracks.push_back("host");
  trace_.setTracks(tracks);
}

ExecutionProgram::~ExecutionProgram() = default;

DeviceProgram::ExchangeBytes ExecutionProgram::exchangeBytes() const { return update_->exchangeBytes(); }

const MemoryAccount& ExecutionProgram::ipuMemory(int64_t id) const {
  return *ipus_.at(static_cast<size_t>(id))->memory;
}

double ExecutionProgram::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void ExecutionProgram::recordTask(const TaskRecord& r) {
  if (requests_ < traceRequests_) trace_.add(r);
}

std::vector<std::string> ExecutionProgram::stageNames() const {
  std::vector<std::string> out;
  for (const auto& s : record_.stages) out.push_back(s.name);
  return out;
}

void ExecutionProgram::recordOnEveryIpu(TaskKind kind, int64_t iteration, double start, double end) {
  for (int64_t r = layout_.firstLocalReplica; r < layout_.localEnd(); ++r)
    for (int64_t s = 0; s < layout_.stages; ++s) {
      TaskRecord t;
      t.kind = kind;
      t.ipu = layout_.track(r, s);
      t.replica = r;
      t.stage = s;
      t.request = requests_;
      t.iteration = iteration;
      t.cpu = {start, end - start};
      recordTask(t);
      if (!layout_.simulated) return;  // the CPU device has one track
    }
}

int64_t ExecutionProgram::microBatchesToRun(int64_t microBatches) const {
  const int64_t unit = training_ ? replicas_ * accumulation_ : replicas_;  // per update / per inference iteration
  if (microBatches % unit == 0) return microBatches;
  return options_.partialRequest == PartialRequest::Drop ? microBatches / unit * unit
                                                         : (microBatches + unit - 1) / unit * unit;
}

int64_t ExecutionProgram::updatesFor(int64_t microBatches) const {
  return training_ ? microBatchesToRun(microBatches) / (replicas_ * accumulation_) : 0;
}

RunResult ExecutionProgram::run(const Batch& request, const RunArgs& args) {
  try {
    return runRequest(request, args);
  } catch (...) {
    // A first request that failed leaves no half-captured record: the next one captures afresh.
    if (!record_.captured && capturing_) discardCapture(record_);
    capturing_ = false;
    throw;
  }
}

RunResult ExecutionProgram::runRequest(const Batch& request, const RunArgs& args) {
  if (!started_) {
    t0_ = std::chrono::steady_clock::now();
    started_ = true;
  }
  RunResult result;
  const double start = now();
  const std::string req = "host request " + std::to_string(requests_ + 1);
  std::exception_ptr splitError;
  std::vector<MicroBatchRun> all = splitIntoMicroBatches(request, req, splitError);
  if (distributed()) {
    // Micro-batch m of the request: device iteration m / (R·G), replica (m / G) % R, micro-batch m % G.
    std::vector<MicroBatchRun> mine = std::move(all);
    exchangeRequest(*options_.processes, ReplicaLayout{replicas_, layout_.stages, shard_}, requests_ + 1,
                    mine, splitError, all);
  }
  const auto real = static_cast<int64_t>(all.size());
  completeUpdates(all, req, result);
  sendToDevice(all, real, request, start);
  fillPadding(all, real);
  capturing_ = !record_.captured;
  // A profiler on the calling thread sees every task's ops (serialised when tasks run on several workers).
  SharedObserver shared;
  struct ObserverReset {
    std::vector<std::unique_ptr<IpuRuntime>>& ipus;
    ~ObserverReset() {
      for (auto& ip : ipus) ip->ctx.setObserver(nullptr);
    }
  } resetObservers{ipus_};
  if (OpObserver* caller = ExecutionContext::current().observer()) {
    shared.target = caller;
    for (auto& ip : ipus_) ip->ctx.setObserver(workers_ > 1 ? static_cast<OpObserver*>(&shared) : caller);
  }
  std::vector<MicroBatchRun> done;
  if (training_) runUpdates(all, args, result, done);
  else runInference(all, args, result, done);
  if (capturing_) {
    record_.captured = true;
    capturing_ = false;
  }
  collectOutputs(done, result);
  TaskRecord h;
  h.kind = TaskKind::DeviceToHost;
  h.ipu = layout_.hostTrack();
  h.request = requests_;
  for (const auto& o : result.outputs)
    if (o.output.defined()) h.bytes += static_cast<int64_t>(o.output.nbytes());
  h.cpu = {now(), 0};
  recordTask(h);
  result.seconds = now() - start;
  ++requests_;
  return result;
}

std::vector<MicroBatchRun> ExecutionProgram::splitIntoMicroBatches(const Batch& request, const std::string& req,
                                                                   std::exception_ptr& error) {
  // This process's micro-batches (every one of the request without processes; with them, its replicas' share,
  // possibly none). With processes an error is handed to the exchange, which raises it on every process.
  std::vector<MicroBatchRun> mine;
  try {
    const bool none = distributed() && request.numGraphs == 0;
    GNN_CHECK_ARG(none || (request.numGraphs > 0 && request.numGraphs % record_.numGraphs == 0 &&
                           request.numNodes == request.numGraphs / record_.numGraphs * record_.numNodes),
                  req, ": ", request.numNodes, " nodes in ", request.numGraphs,
                  " graph slots is not a whole number of the compiled micro-batch (", record_.numNodes, " nodes, ",
                  record_.numGraphs, " graph slots)");
    const int64_t localK = none ? 0 : request.numGraphs / record_.numGraphs;
    for (int64_t j = 0; j < localK; ++j) {
      MicroBatchRun mb;
      mb.index = j;
      mb.batch = localK == 1 ? request : microBatch(request, j, localK);
      record_.checkShapes(mb.batch, "micro-batch " + std::to_string(j) + " of " + req);
      mb.weight = loss_.weight ? loss_.weight(mb.batch)
                               : labelCount(mb.batch.yMask, static_cast<double>(mb.batch.numRealGraphs));
      GNN_CHECK_ARG(std::isfinite(mb.weight) && mb.weight >= 0, "loss weight of micro-batch ", j, " is ", mb.weight);
      mb.samples = mb.batch.numRealGraphs;
      mine.push_back(std::move(mb));
    }
  } catch (...) {
    if (!distributed()) throw;
    error = std::current_exception();
  }
  return mine;
}

int64_t ExecutionProgram::completeUpdates(std::vector<MicroBatchRun>& all, const std::string& req,
                                          RunResult& result) {
  const auto K = static_cast<int64_t>(all.size());
  const int64_t full = training_ ? options_.microBatchesPerRequest() : replicas_ * options_.deviceIterations;
  GNN_CHECK_ARG(K <= full, req, " holds ", K, " micro-batches but one request is micro-batch x deviceIterations (",
                options_.deviceIterations, ") x replicationFactor (", replicas_, ")",
                training_ ? " x gradientAccumulation (" + std::to_string(accumulation_) + ")" : std::string(), " = ",
                full, " micro-batches");
  const int64_t runCount = microBatchesToRun(K);  // real or padding
  result.droppedMicroBatches = std::max<int64_t>(0, K - runCount);
  result.paddedMicroBatches = std::max<int64_t>(0, runCount - K);
  all.resize(static_cast<size_t>(runCount));
  for (int64_t m = K; m < runCount; ++m) {
    // Weight 0: it runs like any other and changes nothing.
    MicroBatchRun& mb = all[static_cast<size_t>(m)];
    mb.index = m;
    mb.padding = true;
  }
  return runCount;
}

void ExecutionProgram::fillPadding(std::vector<MicroBatchRun>& all, int64_t real) {
  // Padding micro-batches this process runs: a copy of its last real one as the device holds it (the compiled
  // shapes when it has none).
  const Batch* last = &shapes_;
  for (int64_t m = 0; m < std::min<int64_t>(real, static_cast<int64_t>(all.size())); ++m)
    if (all[static_cast<size_t>(m)].batch.numGraphs > 0) last = &all[static_cast<size_t>(m)].batch;
  for (int64_t m = real; m < static_cast<int64_t>(all.size()); ++m)
    if (layout_.isLocal(shard_.replicaOf(m))) all[static_cast<size_t>(m)].batch = *last;
}

void ExecutionProgram::sendToDevice(std::vector<MicroBatchRun>& all, int64_t real, const Batch& request,
                                    double start) {
  TaskRecord h;
  h.kind = TaskKind::HostToDevice;
  h.ipu = layout_.hostTrack();
  h.request = requests_;
  h.bytes = sendOverHostLink(all, std::min<int64_t>(real, static_cast<int64_t>(all.size())), request,
                             options_.eightBitIo, fp16_);
  h.cpu = {start, now() - start};
  recordTask(h);
}

namespace {
// An update's loss (the weighted mean over its real micro-batches; the one's own with one) and samples.
UpdateResult summarizeUpdate(const std::vector<std::vector<MicroBatchRun>>& mbs, UpdateResult u, int64_t& real) {
  double W = 0, lossSum = 0, single = NAN;
  int64_t samples = 0;
  real = 0;
  for (const auto& rep : mbs)
    for (const auto& m : rep) {
      if (m.padding) continue;
      W += m.weight;
      ++real;
      single = m.loss;
      samples += m.samples;
    }
  for (const auto& rep : mbs)
    for (const auto& m : rep)
      if (!m.padding) lossSum += (W > 0 ? m.weight / W : 1.0 / static_cast<double>(real)) * m.loss;
  u.loss = real == 1 ? single : lossSum;
  u.samples = samples;
  return u;
}
}  // namespace

UpdateResult ExecutionProgram::runUpdate(Replicas& mbs, int64_t iteration, int64_t step, const RunArgs& args,
                                         RunResult& result) {
  const int64_t G = static_cast<int64_t>(mbs.front().size());
  const PipelineSchedule schedule =
      G == accumulation_ ? schedule_
      : training_        ? PipelineSchedule::training(layout_.stages, G, options_.executionStrategy)
                         : PipelineSchedule::inference(layout_.stages, G, options_.executionStrategy);
  double totalWeight = 0;
  for (const auto& rep : mbs)
    for (const auto& m : rep) totalWeight += m.padding ? 0.0 : m.weight;
  for (auto& ip : ipus_) {
    ip->sink.clear();
    ip->ctx.resetGradientOverflows();
  }
  weights_->sync();
  const StageTaskProgram program{layout_, stageBlocks_, loss_, ipus_, weights_->models(),
                                 training_, options_.recompute && training_, checkLossFinite_};
  const UpdateTasks update{mbs, requests_, iteration, step, args.seed, totalWeight, lossScale(),
                           capturing_ && iteration == 0};
  StageTaskReports reports{record_, stageTimes_, [this](const TaskRecord& t) { recordTask(t); },
                           [this] { return now(); }};
  StageTaskRunner tasks(program, update, reports, replicas_);
  const std::exception_ptr error = runLanes(
      lanesOf(schedule, layout_.firstLocalReplica, layout_.localReplicas), workers_,
      [&](int64_t r, const ScheduledTask& t) { return tasks.ready(r, t); },
      [&](int64_t r, const ScheduledTask& t) { tasks.run(r, t); });
  int64_t overflows = 0;
  std::vector<Tensor> grads =
      update_->reduce(mbs, error, iteration, capturing_ && iteration == 0 ? &record_ : nullptr, overflows);
  UpdateResult u;
  if (training_) update_->apply(grads, overflows, iteration, args, result, u);
  return u;
}

void ExecutionProgram::runUpdates(std::vector<MicroBatchRun>& all, const RunArgs& args, RunResult& result,
                                  std::vector<MicroBatchRun>& done) {
  const int64_t unit = replicas_ * accumulation_;
  const auto iterations = static_cast<int64_t>(all.size()) / unit;
  try {
    for (int64_t d = 0; d < iterations; ++d) {
      Replicas mbs(static_cast<size_t>(replicas_));
      for (int64_t r = 0; r < replicas_; ++r)
        for (int64_t k = 0; k < accumulation_; ++k)
          mbs[static_cast<size_t>(r)].push_back(std::move(all[static_cast<size_t>(d * unit + r * accumulation_ + k)]));
      const int64_t step = opt_->stepCount();
      if (args.baseLr) {
        if (args.schedule) args.schedule->apply(*opt_, *args.baseLr, step);
        else opt_->setLr(*args.baseLr);
      }
      int64_t real = 0;
      const UpdateResult u = summarizeUpdate(mbs, runUpdate(mbs, d, step, args, result), real);
      result.microBatches += real;
      result.samples += u.samples;
      for (auto& rep : mbs)
        for (auto& m : rep) {
          m.batch = Batch();  // free the micro-batch; keep the loss and output
          done.push_back(std::move(m));
        }
      // A finite gradient times a huge learning rate can still overflow a weight: stop before it is used.
      if (args.checkFinite)
        if (const int64_t bad = firstNonFiniteValue(master_.parameters()); bad >= 0) throw NonFiniteWeights(bad, d);
      result.updateResults.push_back(u);
    }
  } catch (RequestStopped& e) {
    e.setCompletedUpdates(result.updateResults);
    throw;
  }
}

void ExecutionProgram::runInference(std::vector<MicroBatchRun>& all, const RunArgs& args, RunResult& result,
                                    std::vector<MicroBatchRun>& done) {
  if (all.empty()) return;
  // Replica r runs micro-batches d·R + r for every device iteration d, as one pipelined pass.
  Replicas mbs(static_cast<size_t>(replicas_));
  for (auto& m : all) mbs[static_cast<size_t>(m.index % replicas_)].push_back(std::move(m));
  runUpdate(mbs, 0, args.step, args, result);
  for (auto& rep : mbs)
    for (auto& m : rep) {
      if (!m.padding) {
        ++result.microBatches;
        result.samples += m.samples;
      }
      m.batch = Batch();
      done.push_back(std::move(m));
    }
  std::sort(done.begin(), done.end(), [](const MicroBatchRun& a, const MicroBatchRun& b) { return a.index < b.index; });
}

void ExecutionProgram::collectOutputs(const std::vector<MicroBatchRun>& done, RunResult& result) {
  // Step j of a replica: j = iteration·G + micro-batch (inference: the iteration).
  const OutputMode mode = options_.resolvedOutputMode(training_);
  const int64_t per = training_ ? accumulation_ : 1;
  const int64_t unit = replicas_ * per;
  std::vector<MicroBatchOutput> outs;
  int64_t lastStep = -1;
  for (const auto& m : done) {
    if (m.padding) continue;
    MicroBatchOutput o;
    o.iteration = m.index / unit;
    o.replica = (m.index / per) % replicas_;
    o.microBatch = m.index % per;
    o.loss = m.loss;
    o.weight = m.weight;
    o.output = m.output;
    lastStep = std::max(lastStep, o.iteration * per + o.microBatch);
    outs.push_back(std::move(o));
  }
  auto stepOf = [&](const MicroBatchOutput& o) { return o.iteration * per + o.microBatch; };
  if (mode == OutputMode::All) {
    result.outputs = std::move(outs);
  } else if (mode == OutputMode::Final) {
    for (auto& o : outs)
      if (stepOf(o) == lastStep) result.outputs.push_back(std::move(o));
  } else if (mode == OutputMode::EveryN) {
    for (auto& o : outs)
      if ((stepOf(o) + 1) % options_.outputPeriod == 0) result.outputs.push_back(std::move(o));
  } else if (mode == OutputMode::Sum) {
    std::vector<MicroBatchOutput> sums(static_cast<size_t>(replicas_));
    for (int64_t r = 0; r < replicas_; ++r) sums[static_cast<size_t>(r)].replica = r;
    for (const auto& o : outs) {
      MicroBatchOutput& s = sums[static_cast<size_t>(o.replica)];
      s.loss += o.loss;
      s.weight += o.weight;
      s.output = s.output.defined() ? sumInto(s.output, o.output) : o.output.clone();
      s.iteration = o.iteration;
      s.microBatch = o.microBatch;
    }
    for (auto& s : sums)
      if (s.output.defined()) result.outputs.push_back(std::move(s));
  }
}

std::string ExecutionProgram::stageTable() const {
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "%-5s %-28s %9s %11s %12s %12s %10s %7s\n", "stage", "blocks", "ops f/b",
                "parameters", "GFLOP/mb", "saved MB/mb", "ms/mb", "stash");
  s << line;
  for (size_t i = 0; i < record_.stages.size(); ++i) {
    const StageRecord& st = record_.stages[i];
    const double ms = stageTimes_.perMicroBatch(static_cast<int64_t>(i));
    const std::string ops = std::to_string(st.forwardOps) + "/" + std::to_string(st.backwardOps);
    std::snprintf(line, sizeof line, "%-5zu %-28s %9s %11lld %12.4f %12.2f %10.2f %7lld\n", i, st.name.c_str(),
                  ops.c_str(), static_cast<long long>(st.parameters),
                  static_cast<double>(st.forwardFlops + st.backwardFlops) * 1e-9,
                  static_cast<double>(st.savedBytes) / 1e6, ms * 1e3, static_cast<long long>(st.maxStashed));
    s << line;
  }
  return s.str();
}

}  // namespace gnn
