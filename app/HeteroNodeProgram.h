// HeteroNodeProgram: node_property on a folder in OGB's heterogeneous raw layout: the flags checked against what
// exists for such a graph (R-GCN or HGT on the CPU, full-batch or on neighbour or cluster batches: --model rgcn |
// hgt, --loader full | neighbor | cluster; no simulated IPU or continued run), the graph read with its reverse
// relations (app/HeteroNodeData.h), --runs seeds trained (app/HeteroNodeTraining.h), and the summary line or the
// JSON with the homogeneous runs' keys and the graph's.
//
//   if (app::heteroDataGiven(s)) return app::runHeteroNode(prog, s, defaults);
//   app::refuseHeteroOnlyFlags(prog, s);          // a homogeneous --data
#pragma once
#include "app/NodeFlags.h"
#include "app/NodeProgram.h"
#include "app/Program.h"

namespace gnn::app {

/// The program's body for a heterogeneous --data; returns the exit code. UsageError for what it does not offer.
int runHeteroNode(const Program& prog, NodeSettings& s, const NodeProgramDefaults& d);
/// For a homogeneous --data: UsageError for --model rgcn and hgt, --target-type and --num-bases, which need a
/// heterogeneous one.
void refuseHeteroOnlyFlags(const Program& prog, const NodeSettings& s);

}  // namespace gnn::app
