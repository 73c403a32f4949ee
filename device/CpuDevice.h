// CpuDevice: the model run whole on this machine's cores, one micro-batch after another on the calling thread:
// today's training loop behind the Device interface. It accepts gradient accumulation and device iterations
// (a larger effective batch in the same memory) but not replicas or pipeline splits, which need SimulatedIpu.
//
//   CpuDevice cpu;
//   auto program = cpu.compile(model, {lossFn}, &opt, firstBatch, IpuOptions{});
//   program->run(batch, args);                         // forward, backward, one update
#pragma once
#include "device/Device.h"

namespace gnn {

class CpuDevice : public Device {
 public:
  const char* name() const override { return "cpu"; }
  std::unique_ptr<DeviceProgram> compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer, const Batch& shapes,
                                         const IpuOptions& options) override;
};

}  // namespace gnn
