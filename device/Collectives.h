// Collectives: how long the replicas' all-reduce, reduce-scatter and all-gather take, as Graphcore's
// communication library (GCL) runs them: over the IPU-Links inside one IPU-Link domain (a POD: 64 IPUs in a
// 2D torus) and, when the replicas span PODs, in three phases (reduce-scatter inside each POD, an all-reduce of
// every shard across the PODs over the GW-Links, all-gather inside each POD; GCL release notes 3.0).
//
// Inside a POD each phase takes the method GCL's AUTO choice would: the cheaper under the model, which reproduces
// the last public rule (graphcore/poplibs lib/popops/ReplicatedCollectives.cpp @f5f9369d: meet-in-the-middle
// rings while a rank's fragment is below 192 KiB, the quad-directional ring above); a small all-reduce may be one
// broadcast (GCL's method for small tensors). A phase over n ranks costs steps x the per-step latency + the
// bytes through each IPU / the method's bandwidth; the terms and their sources are IpuSpec's collective fields
// (docs/device.md, "Collectives").
//
//   CollectiveCost c = collectiveCost(Collective::AllReduce, 750e3, 64, IpuSpec::bow(), CollectiveOptions{});
//   c.seconds();  c.method();  // "meet-in-the-middle ring"
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/IpuSpec.h"

namespace gnn {

enum class Collective { AllReduce, ReduceScatter, AllGather };

/// GCL's methods (its CommGroup option `method`) its AUTO choice takes on a POD, and the plain ring the
/// cross-POD phase runs.
enum class CollectiveMethod { MeetInMiddleRing, QuadDirectionalRing, Ring, Broadcast };
const char* collectiveMethodName(CollectiveMethod m);

/// How the replicas sit: IPUs per replica and per IPU-Link domain (POD; replicas beyond one POD reach the others
/// over GW-Links); and GCL's `method` option inside a POD (empty: AUTO).
struct CollectiveOptions {
  int64_t ipusPerReplica = 1;
  int64_t ipusPerPod = 64;
  std::optional<CollectiveMethod> method;
};

/// One phase of a collective: a reduce-scatter or all-gather (or the cross-POD all-reduce) over `ranks`.
struct CollectivePhase {
  Collective kind = Collective::ReduceScatter;
  CollectiveMethod method = CollectiveMethod::MeetInMiddleRing;
  bool gwLinks = false;    // between PODs
  int64_t ranks = 1;
  double bytes = 0;        // the tensor (or shard) the phase works on, per rank
  int64_t steps = 0;
  double latencySeconds = 0, bandwidthSeconds = 0;
  double seconds() const { return latencySeconds + bandwidthSeconds; }
};

struct CollectiveCost {
  std::vector<CollectivePhase> phases;
  double seconds() const;
  double gwLinkSeconds() const;  // the phases between PODs
  /// "meet-in-the-middle ring" or "quad-directional ring" (the first IPU-Link phase's), "" for one replica.
  std::string method() const;
};

/// The collective `kind` of a tensor of `bytes` per replica over `replicas` (the all-reduce's tensor, the
/// reduce-scatter's input, the all-gather's output). One replica: no phases.
CollectiveCost collectiveCost(Collective kind, double bytes, int64_t replicas, const IpuSpec& spec,
                              const CollectiveOptions& domains);

}  // namespace gnn
