#include "device/Device.h"

#include <cmath>

#include "device/CpuDevice.h"
#include "device/ExecutionProgram.h"
#include "device/SimulatedIpu.h"
#include "gnn/Check.h"

namespace gnn {

std::unique_ptr<DeviceProgram> CpuDevice::compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                                  const Batch& shapes, const IpuOptions& options) {
  return std::make_unique<ExecutionProgram>("cpu", model, std::move(lossFn), optimizer, shapes, options, false);
}

std::unique_ptr<DeviceProgram> SimulatedIpu::compile(BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                                     const Batch& shapes, const IpuOptions& options) {
  return std::make_unique<ExecutionProgram>("ipu", model, std::move(lossFn), optimizer, shapes, options, true);
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

}  // namespace gnn
