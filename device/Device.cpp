#include "device/Device.h"

#include <cstdio>

#include <cmath>

#include "device/CpuDevice.h"
#include "device/ExecutionProgram.h"
#include "device/Plan.h"
#include "device/SimulatedIpu.h"
#include "gnn/io/Fnv1a.h"
#include "gnn/ops/Ops.h"
#include "gnn/system/Check.h"

namespace gnn {

std::unique_ptr<DeviceProgram> CpuDevice::compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                                  const Batch& shapes, const IpuOptions& options) {
  return std::make_unique<ExecutionProgram>("cpu", model, std::move(lossFn), optimizer, shapes, options, false);
}

Plan planProgram(BlockModel& model, const LossFn& lossFn, const Optimizer* optimizer, const Batch& shapes,
                 const IpuOptions& options) {
  const bool training = optimizer != nullptr;
  CompileRecord record;
  {
    // A copy of the model, trained by nothing (SGD at rate 0), run once on its own context: no observer (a
    // profiler) sees it, the caller's model and random streams are untouched (the record holds shapes and
    // counts, which no random draw changes). An inference program is captured
    // the same way, in eval mode (no dropout): its backward is not planned, but it is what tells which block
    // each parameter belongs to (the block whose backward reaches it first), so the weights are counted.
    std::unique_ptr<Module> copy = model.clone();
    auto* bm = dynamic_cast<BlockModel*>(copy.get());
    GNN_ASSERT(bm, "clone() of a BlockModel returned another kind of module");
    if (!training) bm->eval();
    auto none = std::make_unique<SGD>(std::vector<ParamGroup>{{bm->parameters(), 0.0}}, 0.0);
    ExecutionContext ctx;
    ContextScope use(ctx);
    LossFn captureLoss = lossFn;  // an inference program may have none: its outputs' sum stands in
    if (!captureLoss.loss) captureLoss.loss = [](const Variable& out, const Batch&) { return sum(out); };
    ExecutionProgram capture("capture", *bm, captureLoss, none.get(), shapes, IpuOptions{}, false);
    capture.checkLossFinite(false);
    capture.run(shapes, {});
    record = capture.record();
  }
  const ModelProfile profile =
      ModelProfile::from(record, training, training ? optimizer->stateTensorsPerParameter() : 0);
  const double samples = options.samplesPerMicroBatch > 0 ? options.samplesPerMicroBatch
                                                          : static_cast<double>(std::max<int64_t>(1, shapes.numRealGraphs));
  return makePlan(profile, options, samples);
}

std::unique_ptr<DeviceProgram> SimulatedIpu::compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                                     const Batch& shapes, const IpuOptions& options) {
  GNN_CHECK_ARG(options.precision != Precision::BF16,
                "bf16 is the CPU's bfloat16 matrix products; the simulated IPU computes in fp32 or fp16");
  auto plan = std::make_shared<Plan>(planProgram(model, lossFn, optimizer, shapes, options));
  if (!plan->fits()) throw OutOfMemory(*plan);
  // The plan resolves --pipeline-splits auto into block names.
  auto program = std::make_unique<ExecutionProgram>("ipu", model, std::move(lossFn), optimizer, shapes, plan->options, true);
  program->setPlan(plan);
  return program;
}

std::unique_ptr<Device> makeDevice(const std::string& name) {
  if (name == "cpu") return std::make_unique<CpuDevice>();
  if (name == "ipu") return std::make_unique<SimulatedIpu>();
  invalidArgument("unknown device '", name, "' (cpu, ipu)");
}

double paramL2(const Module& model) {
  double s = 0;
  for (const Variable& p : model.parameters()) {
    Tensor t = p.value().to(DType::F64);
    s += t.flat<double>().square().sum();
  }
  return std::sqrt(s);
}

std::string paramChecksum(const Module& model) {
  Fnv1a h;
  for (const Variable& p : model.parameters()) h.add(p.value().raw(), p.value().nbytes());
  return h.hex();
}

}  // namespace gnn
