// HostCost: whether the hosts prepare micro-batches as fast as the IPUs consume them. The loader's preparation
// of a micro-batch (the epoch's packing plan, collation with the host-side encodings and padding, stacking the
// host request) is timed on this machine over a short sample, then scaled by the host's cores (an assumption:
// preparation runs in parallel over micro-batches, as PopTorch's DataLoader workers do) and by the hosts that
// feed the replicas. poptorch.DataLoader's default (mode=DataLoaderMode.Sync) prepares each host request between
// calls: step = device + preparation, and that is the throughput unless options.asyncLoading. With asynchronous
// loading (an AsynchronousDataAccessor, or DataLoaderMode.Async: a worker fills a ring buffer of prepared requests
// while the IPUs run) the throughput is samples / (call + max(IPUs' part, preparation)): about min(device, host).
// A host request's call (IpuSpec::hostCallSeconds) is the host's work, counted on its side of the comparison
// that names the limit. deviceIterations spreads the call over
// more weight updates; it does not shorten the preparation of a sample.
//
//   HostSample s = timeLoader(loader, {});                 // at most 20 micro-batches or 2 s
//   HostPlan h = planHost(s, /*coresPerHost=*/32, "--host-cores", options, true, plan.cost, 31.6);
//   h.hostBound();  h.samplesPerSecond;  h.throughput;
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "device/CostModel.h"

namespace gnn {

class FixedSizeDataLoader;

/// The host's preparation of one micro-batch on one core.
struct HostSample {
  bool known = false;
  std::string source;          // how it was obtained ("timed: ...", "--host-prep-ms")
  int64_t microBatches = 0;    // micro-batches timed (0: given)
  double wallSeconds = 0;      // the timing's length
  double collateSeconds = 0;   // collation with the host-side encodings and padding, and stacking the request
  double packingSeconds = 0;   // the epoch's packing plan, per micro-batch
  double secondsPerMicroBatch() const { return collateSeconds + packingSeconds; }

  /// A stated time per micro-batch (a figure measured on the target host, or a test's).
  static HostSample given(double secondsPerMicroBatch, std::string source);
};

/// The timing's bounds: it stops at whichever comes first (at least one micro-batch is timed).
struct HostTiming {
  int64_t maxMicroBatches = 20;
  double maxSeconds = 2;
};

/// Times prepare(0), prepare(1), ... within `limits`; collateSeconds is the median time of one call.
HostSample timePreparation(const std::function<void(int64_t)>& prepare, const HostTiming& limits);

/// The loader's preparation, timed: collating micro-batches of epoch `epoch` (the one it is on; at most
/// `limits`) and stacking them as a host request, and planning an epoch's packs (startEpoch(epoch + 1), per
/// micro-batch). The loader is left at the start of epoch `epoch` again (the same plan: it depends on the seed
/// and the epoch only).
HostSample timeLoader(FixedSizeDataLoader& loader, const HostTiming& limits, int64_t epoch = 0);

/// The hosts against the device, for one plan.
struct HostPlan {
  bool known = false;
  HostSample sample;
  int64_t coresPerHost = 1;
  std::string coresSource;          // "this machine's" or "--host-cores"
  int64_t hosts = 1;                // hosts preparing micro-batches: min(hosts, replicas)
  int64_t deviceIterations = 1;
  int64_t microBatchesPerStep = 0;  // replicas x accumulation (inference: x device iterations)
  double samplesPerMicroBatch = 0;
  double secondsPerStep = 0;        // preparing one step's micro-batches on every host's cores
  double deviceStepSeconds = 0;
  double callSecondsPerStep = 0;    // the host requests' calls, per step (in deviceStepSeconds, the host's work)
  double samplesPerSecond = 0;      // the hosts' rate: samples per step / (preparation + calls)
  double deviceSamplesPerSecond = 0;  // the IPUs' rate: samples per step / (device step - calls)
  bool asyncLoading = false;        // options.asyncLoading: which of the two below is the throughput
  double overlappedSamplesPerSecond = 0;  // preparation overlapped with the IPUs (asynchronous loading); the call not
  double serialSamplesPerSecond = 0;  // preparation between calls: samples per step / (device step + preparation)
  double throughput = 0;            // the loader mode's: serial (sync, PopTorch's default) or overlapped (async)

  bool hostBound() const { return known && samplesPerSecond < deviceSamplesPerSecond; }
  const char* limitedBy() const { return hostBound() ? "host" : "device"; }
  /// The report's host lines (empty when not known).
  std::string report() const;
  nlohmann::json toJson() const;
};

/// Host rate = samplesPerMicroBatch x coresPerHost x hosts / seconds per micro-batch, the hosts being
/// min(hosts, replicas) (hosts 0: options.hosts); the device's rate and step are the cost plan's.
HostPlan planHost(const HostSample& sample, int64_t coresPerHost, std::string coresSource, const IpuOptions& options,
                  bool training, const CostPlan& cost, double samplesPerMicroBatch, int64_t hosts = 0);

/// This machine's cores (at least 1).
int64_t hostCores();

}  // namespace gnn
