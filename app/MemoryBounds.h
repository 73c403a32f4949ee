// MemoryBounds: sizes from the command line or a checkpoint's configuration checked against the machine's
// memory before anything is allocated for them, so a width or a batch size no machine holds is refused with
// its name and value instead of ending in std::bad_alloc.
//
//   app::requireFitsInMemory("hidden", hidden, 24.0 * parameters, "", "the weights and optimizer state");
//     // --hidden 1099511627776 needs about 2.6e+04 PiB (the weights ...), more than this machine's 24 GiB of memory
#pragma once
#include <cstdint>
#include <string>

namespace gnn::app {

/// The machine's physical memory in bytes (sysconf, read once).
double physicalMemoryBytes();

/// `bytes` is an estimate of what `field` = `value` makes the program allocate (`what` says of what). Above
/// the machine's memory: UsageError naming the flag --<field> when `source` is empty (the value is the
/// command line's), else std::runtime_error naming the checkpoint `source` and its configuration key (the
/// field with '-' as '_': num_nodes, derived.fixed.num_nodes).
void requireFitsInMemory(const std::string& field, double value, double bytes, const std::string& source,
                         const std::string& what);

}  // namespace gnn::app
