// Fnv1a: the 64-bit FNV-1a hash (Fowler, Noll, Vo), the one checksum of the project: a checkpoint's trailer,
// a model's parameter checksum (--json's param_checksum), a run's loss checksum, and the fingerprints the
// programs and benchmarks compare. Not cryptographic: it finds accidental damage and tells bit-equal runs apart.
//
//   Fnv1a h;  h.add(data, n);  h.add(&x, sizeof x);  uint64_t v = h.value();  std::string s = h.hex();
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace gnn {

struct Fnv1a {
  /// The published offset basis (0xcbf29ce484222325).
  static constexpr uint64_t kStandardBasis = 14695981039346656037ULL;
  /// The basis every checksum the project writes starts from (checkpoint trailers, param_checksum,
  /// loss_checksum): 1469598103934665603, one digit short of the published one. Kept so that every file and
  /// reference written so far still checks; any non-zero basis serves FNV-1a's purpose here as well.
  static constexpr uint64_t kChecksumBasis = 1469598103934665603ULL;
  static constexpr uint64_t kPrime = 1099511628211ULL;

  uint64_t state = kChecksumBasis;

  constexpr Fnv1a() = default;
  /// Starts from `state` (a basis, or a hash so far to continue).
  constexpr explicit Fnv1a(uint64_t state_) : state(state_) {}

  void add(const void* data, size_t n) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) state = (state ^ b[i]) * kPrime;
  }
  void add(unsigned char byte) { state = (state ^ byte) * kPrime; }
  uint64_t value() const { return state; }
  /// 16 lower-case hex digits.
  std::string hex() const { return toHex(state); }

  static uint64_t of(const void* data, size_t n) {
    Fnv1a h;
    h.add(data, n);
    return h.value();
  }
  static std::string toHex(uint64_t v) {
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(v));
    return out;
  }
};

}  // namespace gnn
