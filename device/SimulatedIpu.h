// SimulatedIpu: Graphcore's IPU execution model as PopTorch exposes it, on CPU threads: a program compiled
// once for fixed shapes; the model split into pipeline stages at named blocks (Pipelined: all stages at once
// with micro-batches in flight, PopART's schedule; Sharded: one stage at a time), each stage of each replica on
// its own simulated IPU; gradients accumulated over micro-batches and reduced over replicas in a fixed order
// before one weight update; several updates per host request (device iterations); outputs per the output
// mode; a trace of every task. Numerics are exact: the weights equal those of CpuDevice with the combined
// batch (up to float rounding of the different summation order).
//
//   IpuOptions o;  o.replicationFactor = 2;  o.gradientAccumulation = 4;  o.pipelineSplits = {"layers/3"};
//   SimulatedIpu ipu;
//   auto program = ipu.compile(model, {lossFn}, &opt, firstMicroBatch, o);
//   program->enableTrace(2);
//   for (Batch request; loader.nextRequest(request);) program->run(request, args);
//   program->trace().writeChromeJson("trace.json", "GIN");
#pragma once
#include "device/Device.h"

namespace gnn {

class SimulatedIpu : public Device {
 public:
  const char* name() const override { return "ipu"; }
  std::unique_ptr<DeviceProgram> compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer, const Batch& shapes,
                                         const IpuOptions& options) override;
};

}  // namespace gnn
