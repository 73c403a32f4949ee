#include "device/Collectives.h"

#include <algorithm>
#include <cmath>

#include "gnn/system/Check.h"

namespace gnn {

const char* collectiveMethodName(CollectiveMethod m) {
  switch (m) {
    case CollectiveMethod::MeetInMiddleRing: return "meet-in-the-middle ring";
    case CollectiveMethod::QuadDirectionalRing: return "quad-directional ring";
    case CollectiveMethod::Ring: return "ring";
    case CollectiveMethod::Broadcast: return "broadcast";
  }
  return "?";
}

double CollectiveCost::seconds() const {
  double t = 0;
  for (const CollectivePhase& p : phases) t += p.seconds();
  return t;
}

double CollectiveCost::gwLinkSeconds() const {
  double t = 0;
  for (const CollectivePhase& p : phases)
    if (p.gwLinks) t += p.seconds();
  return t;
}

std::string CollectiveCost::method() const {
  for (const CollectivePhase& p : phases)
    if (!p.gwLinks) return collectiveMethodName(p.method);
  return phases.empty() ? "" : collectiveMethodName(phases.front().method);
}

namespace {

// One reduce-scatter (of a tensor of `bytes` per rank) or all-gather (of a shard of `bytes` per rank) over the
// IPU-Links of a POD with `method`. Every rank's fragment is bytes / n (reduce-scatter) or bytes (all-gather);
// each IPU moves (n - 1) fragments. Meet-in-the-middle sends half the fragments each way, halfway round:
// ceil(n / 2) steps; rings take n - 1.
CollectivePhase podPhase(Collective kind, CollectiveMethod method, double bytes, int64_t n, const IpuSpec& spec) {
  CollectivePhase p;
  p.kind = kind;
  p.method = method;
  p.ranks = n;
  p.bytes = bytes;
  const double fragment = kind == Collective::ReduceScatter ? bytes / static_cast<double>(n) : bytes;
  p.steps = method == CollectiveMethod::MeetInMiddleRing ? (n + 1) / 2 : n - 1;
  const double bandwidth = spec.collectiveBytesPerSecond *
                           (method == CollectiveMethod::QuadDirectionalRing ? spec.quadRingBandwidthFactor : 1.0);
  p.latencySeconds = static_cast<double>(p.steps) * spec.collectiveStepSeconds;
  p.bandwidthSeconds = static_cast<double>(n - 1) * fragment / bandwidth;
  return p;
}

// GCL's AUTO choice for one phase: two ranks, one ring; a replica over several IPUs, the meet-in-the-middle ring
// (poplibs' torus rule); one IPU per replica, the cheaper of meet-in-the-middle and the quad-directional ring.
// The model's crossover between those two falls at a fragment of about bandwidth x step latency (170 KB with
// IpuSpec's terms), where poplibs' published rule switches (192 KiB): the two agree without being fitted.
CollectivePhase autoPhase(Collective kind, double bytes, int64_t n, const IpuSpec& spec, const CollectiveOptions& d) {
  if (d.method && *d.method != CollectiveMethod::Broadcast) return podPhase(kind, *d.method, bytes, n, spec);
  if (n <= 2) return podPhase(kind, CollectiveMethod::Ring, bytes, n, spec);
  const CollectivePhase mim = podPhase(kind, CollectiveMethod::MeetInMiddleRing, bytes, n, spec);
  if (d.ipusPerReplica > 1) return mim;
  const CollectivePhase quad = podPhase(kind, CollectiveMethod::QuadDirectionalRing, bytes, n, spec);
  return quad.seconds() < mim.seconds() ? quad : mim;
}

// GCL's broadcast method (its docs: "broadcast the tensor to all replicas and do the reduce locally ... the
// fastest option for small tensors"): each IPU receives the other n - 1 tensors over all its links; the
// latency of a broadcast tree, ceil(log2 n) steps (an assumption: GCL does not publish its shape).
CollectivePhase broadcastPhase(double bytes, int64_t n, const IpuSpec& spec) {
  CollectivePhase p;
  p.kind = Collective::AllReduce;
  p.method = CollectiveMethod::Broadcast;
  p.ranks = n;
  p.bytes = bytes;
  p.steps = static_cast<int64_t>(std::ceil(std::log2(static_cast<double>(n))));
  p.latencySeconds = static_cast<double>(p.steps) * spec.collectiveStepSeconds;
  const double allLinks = spec.collectiveBytesPerSecond * spec.quadRingBandwidthFactor;
  p.bandwidthSeconds = static_cast<double>(n - 1) * bytes / allLinks;
  return p;
}

// Each IPU's shard (`bytes`) across `pods` PODs over the GW-Links, as a ring: an all-reduce takes 2 (P - 1)
// steps and moves 2 (P - 1) / P of the shard through each IPU's share of its machine's gateway; a reduce-scatter
// or all-gather half of that.
CollectivePhase gwPhase(Collective kind, double bytes, int64_t pods, const IpuSpec& spec) {
  CollectivePhase p;
  p.kind = kind;
  p.method = CollectiveMethod::Ring;
  p.gwLinks = true;
  p.ranks = pods;
  p.bytes = bytes;
  const double passes = kind == Collective::AllReduce ? 2.0 : 1.0;
  p.steps = static_cast<int64_t>(passes) * (pods - 1);
  p.latencySeconds = static_cast<double>(p.steps) * spec.gwLinkStepSeconds;
  p.bandwidthSeconds = passes * static_cast<double>(pods - 1) / static_cast<double>(pods) * bytes /
                       spec.gwLinkBytesPerSecondPerIpu;
  return p;
}

}  // namespace

CollectiveCost collectiveCost(Collective kind, double bytes, int64_t replicas, const IpuSpec& spec,
                              const CollectiveOptions& domains) {
  GNN_CHECK_ARG(replicas >= 1 && bytes >= 0 && domains.ipusPerReplica >= 1 && domains.ipusPerPod >= 1,
                "collectiveCost: replicas, IPUs per replica and per POD must be >= 1 and bytes >= 0");
  CollectiveCost c;
  if (replicas == 1) return c;
  const int64_t perPod = std::clamp<int64_t>(domains.ipusPerPod / domains.ipusPerReplica, 1, replicas);
  const int64_t pods = (replicas + perPod - 1) / perPod;
  // Within a POD the reduce-scatter leaves each IPU a shard of bytes / perPod, which crosses the PODs (GCL's
  // three phases) before the all-gather inside the POD gives it back. An all-reduce inside one POD may instead
  // be one broadcast, when that is cheaper (small tensors).
  const double shard = bytes / static_cast<double>(perPod);
  const bool scatter = kind != Collective::AllGather, gather = kind != Collective::ReduceScatter;
  if (perPod > 1 && scatter) c.phases.push_back(autoPhase(Collective::ReduceScatter, bytes, perPod, spec, domains));
  if (pods > 1) c.phases.push_back(gwPhase(kind, shard, pods, spec));
  if (perPod > 1 && gather) c.phases.push_back(autoPhase(Collective::AllGather, shard, perPod, spec, domains));
  const bool broadcastAllowed =
      domains.method ? *domains.method == CollectiveMethod::Broadcast : domains.ipusPerReplica == 1;
  if (kind == Collective::AllReduce && pods == 1 && broadcastAllowed) {
    const CollectivePhase b = broadcastPhase(bytes, perPod, spec);
    if (domains.method || b.seconds() < c.seconds()) c.phases = {b};
  }
  return c;
}

}  // namespace gnn
