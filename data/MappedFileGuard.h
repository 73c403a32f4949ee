// MappedFileGuard: registers a memory-mapped file for as long as it is mapped, so that a SIGBUS on its pages
// (the file was truncated or overwritten in place while mapped) ends the program with
// "error: <path> changed while in use (...)" and exit status 1 instead of a bare "Bus error".
//
//   void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
//   MappedFileGuard guard(map, size, path);   // until guard.reset() or its destruction, before munmap
#pragma once
#include <cstdint>
#include <string>

namespace gnn {

class MappedFileGuard {
 public:
  /// Mappings guarded at once; past this a mapping works unguarded (a SIGBUS on it stays a bare crash).
  static constexpr int kCapacity = 256;

  MappedFileGuard() = default;
  /// Guards [address, address + bytes) as a mapping of `path`. The first guard installs the SIGBUS handler
  /// (once per process); a SIGBUS at an address no guard holds goes to the handler installed before it.
  MappedFileGuard(const void* address, uint64_t bytes, const std::string& path);
  ~MappedFileGuard() { reset(); }
  MappedFileGuard(MappedFileGuard&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  MappedFileGuard& operator=(MappedFileGuard&& other) noexcept;
  MappedFileGuard(const MappedFileGuard&) = delete;
  MappedFileGuard& operator=(const MappedFileGuard&) = delete;

  /// Stops guarding (call before the range is unmapped).
  void reset();
  /// False when every slot was taken.
  bool guarding() const { return slot_ >= 0; }

  /// The path of the guarded mapping holding `address`, or "" (the lookup the SIGBUS handler makes).
  static std::string pathAt(const void* address);

 private:
  int slot_ = -1;
};

}  // namespace gnn
