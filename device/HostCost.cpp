#include "device/HostCost.h"

#include <algorithm>
#include <sstream>
#include <thread>
#include <vector>

#include "device/PlanFormat.h"
#include "gnn/system/SystemInfo.h"
#include "loaders/FixedSizeDataLoader.h"

namespace gnn {

using planfmt::fmt;
using planfmt::ms;
using planfmt::pct;
using planfmt::thousands;

HostSample HostSample::given(double secondsPerMicroBatch, std::string source) {
  HostSample s;
  s.known = true;
  s.source = std::move(source);
  s.collateSeconds = secondsPerMicroBatch;
  return s;
}

HostSample timePreparation(const std::function<void(int64_t)>& prepare, const HostTiming& limits) {
  HostSample s;
  s.known = true;
  std::vector<double> each;
  const Stopwatch all;
  // At least one call; then until either bound. The median resists the other processes of a shared machine.
  for (int64_t i = 0; i == 0 || (i < limits.maxMicroBatches && all.ms() / 1e3 < limits.maxSeconds); ++i) {
    const Stopwatch one;
    prepare(i);
    each.push_back(one.ms() / 1e3);
  }
  s.wallSeconds = all.ms() / 1e3;
  s.microBatches = static_cast<int64_t>(each.size());
  std::sort(each.begin(), each.end());
  const size_t n = each.size();
  s.collateSeconds = n % 2 ? each[n / 2] : (each[n / 2 - 1] + each[n / 2]) / 2;
  return s;
}

HostSample timeLoader(FixedSizeDataLoader& loader, const HostTiming& limits, int64_t epoch) {
  const int64_t batches = std::max<int64_t>(1, loader.numBatches());
  // Collation of the epoch's micro-batches in order (the prefetch thread collates the same ones: its queue is
  // short, so it idles after the first few).
  std::vector<Batch> kept;
  constexpr size_t kStacked = 4;  // stacking is a copy: a few parts give its time per micro-batch
  HostSample s = timePreparation(
      [&](int64_t i) {
        Batch b = loader.collateBatch(i % batches);
        if (kept.size() < kStacked) kept.push_back(std::move(b));
      },
      limits);
  const Stopwatch wallStart;
  if (kept.size() > 1) {
    const Stopwatch st;
    const Batch request = stackMicroBatches(kept);
    (void)request;
    s.collateSeconds += st.ms() / 1e3 / static_cast<double>(kept.size());
  }
  // The packing plan of an epoch (shuffle, pack, trim), spread over its micro-batches: the fastest of three
  // epochs, as startEpoch also waits for the prefetch thread to end, which a busy machine may delay; then back.
  double fastest = 0;
  for (int64_t k = 1; k <= 3; ++k) {
    const Stopwatch plan;
    loader.startEpoch(epoch + k);
    const double t = plan.ms() / 1e3 / static_cast<double>(std::max<int64_t>(1, loader.numBatches()));
    fastest = k == 1 ? t : std::min(fastest, t);
  }
  s.packingSeconds = fastest;
  loader.startEpoch(epoch);
  s.wallSeconds += wallStart.ms() / 1e3;
  s.source = "timed on this machine: " + std::to_string(s.microBatches) + " micro-batches of the loader collated in " +
             fmt("%.2f", s.wallSeconds) + " s (median), " + std::to_string(kept.size() > 1 ? kept.size() : 0) +
             " stacked, an epoch packed (the fastest of 3)";
  return s;
}

int64_t hostCores() { return std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency())); }

HostPlan planHost(const HostSample& sample, int64_t coresPerHost, std::string coresSource, const IpuOptions& o,
                  bool training, const CostPlan& cost, double samplesPerMicroBatch, int64_t hosts) {
  HostPlan h;
  if (!sample.known || !(sample.secondsPerMicroBatch() > 0)) return h;
  h.known = true;
  h.sample = sample;
  h.coresPerHost = std::max<int64_t>(1, coresPerHost);
  h.coresSource = std::move(coresSource);
  const int64_t R = std::max<int64_t>(1, o.replicationFactor);
  h.hosts = std::min(std::max<int64_t>(1, hosts > 0 ? hosts : o.hosts), R);
  h.deviceIterations = o.deviceIterations;
  h.microBatchesPerStep = R * (training ? o.gradientAccumulation : o.deviceIterations);
  h.samplesPerMicroBatch = samplesPerMicroBatch;
  const double parallel = static_cast<double>(h.coresPerHost * h.hosts);
  h.secondsPerStep = static_cast<double>(h.microBatchesPerStep) * sample.secondsPerMicroBatch() / parallel;
  h.deviceStepSeconds = cost.stepSeconds;
  // The request's call is the host's work (PopTorch's call, on the host's time); the IPUs' own part of the step
  // is the rest. Each side's rate is the update's samples over its part; preparation overlapped with the IPUs
  // (asynchronous loading) still waits for the call.
  h.callSecondsPerStep = cost.callSeconds;
  const double samples = cost.samplesPerUpdate, devicePart = cost.stepSeconds - cost.callSeconds;
  h.samplesPerSecond = samples / (h.secondsPerStep + h.callSecondsPerStep);
  h.deviceSamplesPerSecond = devicePart > 0 ? samples / devicePart : 0;
  h.overlappedSamplesPerSecond = samples / (h.callSecondsPerStep + std::max(devicePart, h.secondsPerStep));
  const double step = cost.stepSeconds + h.secondsPerStep;
  h.serialSamplesPerSecond = step > 0 ? cost.samplesPerUpdate / step : 0;
  h.asyncLoading = o.asyncLoading;
  h.throughput = h.asyncLoading ? h.overlappedSamplesPerSecond : h.serialSamplesPerSecond;
  return h;
}

std::string HostPlan::report() const {
  if (!known) return "";
  std::ostringstream s;
  s << "Host preparation (" << sample.source << "; assumed " << coresPerHost << " core(s) per host ("
    << (coresSource == "--host-cores" ? coresSource : coresSource + "; --host-cores to change") << ") x " << hosts
    << " host(s) feeding the replicas, preparation parallel over micro-batches):\n";
  s << "  one micro-batch on one core: " << ms(sample.secondsPerMicroBatch());
  if (sample.microBatches > 0)
    s << " (collation with host-side encodings, padding and stacking " << ms(sample.collateSeconds)
      << ", the epoch's packing " << ms(sample.packingSeconds) << ")";
  s << "\n  per step: " << microBatchesPerStep << " micro-batches, " << ms(secondsPerStep) << " on the hosts against "
    << ms(deviceStepSeconds) << " on the IPUs: the hosts prepare " << thousands(samplesPerSecond)
    << " samples/s, the IPUs consume " << thousands(deviceSamplesPerSecond) << "\n";
  if (hostBound())
    s << "  the HOST is the bottleneck: it allows " << thousands(samplesPerSecond) << " samples/s, "
      << pct(samplesPerSecond / deviceSamplesPerSecond) << " of what the IPUs could run (more host cores, more hosts, "
      << "or cheaper collation lift it)\n";
  else
    s << "  the IPUs are the bottleneck; the hosts are busy " << pct(deviceStepSeconds > 0 ? secondsPerStep / deviceStepSeconds : 0)
      << " of the step\n";
  if (asyncLoading)
    s << "  --loader-mode async (PopTorch's AsynchronousDataAccessor, or poptorch.DataLoader with DataLoaderMode.Async: "
      << "a worker fills a ring buffer of prepared requests while the IPUs run): throughput = samples / (call + "
      << "max(IPUs, preparation)) = "
      << thousands(overlappedSamplesPerSecond) << " samples/s; with --loader-mode sync (PopTorch's default, each "
      << "request prepared between calls) " << thousands(serialSamplesPerSecond) << " samples/s.";
  else
    s << "  --loader-mode sync (poptorch.DataLoader's default, DataLoaderMode.Sync: each host request prepared between "
      << "calls): throughput = samples per step / (device step + preparation) = " << thousands(serialSamplesPerSecond)
      << " samples/s; --loader-mode async (AsynchronousDataAccessor, or DataLoaderMode.Async) would overlap them: "
      << "samples / (call + max(IPUs, preparation)) = " << thousands(overlappedSamplesPerSecond) << " samples/s.";
  s << " --device-iterations " << deviceIterations << ": one host request per " << deviceIterations
    << " step(s); more iterations spread the request's call ("
    << ms(callSecondsPerStep * static_cast<double>(deviceIterations)) << "), not the preparation of a sample\n";
  return s.str();
}

nlohmann::json HostPlan::toJson() const {
  if (!known) return nullptr;
  return {{"source", sample.source},
          {"timed_micro_batches", sample.microBatches},
          {"timed_seconds", sample.wallSeconds},
          {"ms_per_micro_batch_one_core", sample.secondsPerMicroBatch() * 1e3},
          {"collate_ms", sample.collateSeconds * 1e3},
          {"packing_ms", sample.packingSeconds * 1e3},
          {"cores_per_host", coresPerHost},
          {"cores_source", coresSource},
          {"hosts", hosts},
          {"micro_batches_per_step", microBatchesPerStep},
          {"preparation_ms_per_step", secondsPerStep * 1e3},
          {"call_ms_per_step", callSecondsPerStep * 1e3},
          {"device_step_ms", deviceStepSeconds * 1e3},
          {"host_samples_per_s", samplesPerSecond},
          {"device_samples_per_s", deviceSamplesPerSecond},
          {"host_is_bottleneck", hostBound()},
          {"loader_mode", asyncLoading ? "async" : "sync"},
          {"samples_per_s", throughput},
          {"samples_per_s_async", overlappedSamplesPerSecond},
          {"samples_per_s_without_async", serialSamplesPerSecond},
          {"hidden_by",
           {{"asynchronous_loading", "PopTorch's AsynchronousDataAccessor / DataLoaderMode.Async: preparation overlaps "
                                     "the device's step, throughput = samples / (call + max(device part, preparation))"},
            {"device_iterations", deviceIterations},
            {"device_iterations_note", "one host request per deviceIterations steps: spreads the request's call, "
                                       "not the preparation per sample"}}}};
}

}  // namespace gnn
