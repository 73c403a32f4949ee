// Zip CRC fixing for the fuzz targets that read zips (npz, state_dict): a member CRC-32 would stop almost every
// mutation at the checksum, so for inputs of even length a target first rewrites each central-directory CRC to
// match its member's bytes, as a crafted file would. Best effort, from the plain (non-ZIP64) end record: anything
// out of range is left as it is for the reader to refuse.
#pragma once
#include <cstdint>
#include <string>

#include "gnn/io/ZipArchive.h"

namespace gnn::fuzz {

inline uint64_t readLe(const std::string& s, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<uint64_t>(i)]);
  return v;
}

inline void fixZipCrcs(std::string& z) {
  const uint64_t n = z.size();
  if (n < 22) return;
  uint64_t eocd = n;
  for (uint64_t p = n - 22 + 1; p-- > 0 && p + 65557 >= n;)
    if (readLe(z, p, 4) == 0x06054b50) {
      eocd = p;
      break;
    }
  if (eocd == n) return;
  const uint64_t count = readLe(z, eocd + 10, 2);
  uint64_t p = readLe(z, eocd + 16, 4);
  for (uint64_t e = 0; e < count && p + 46 <= n && readLe(z, p, 4) == 0x02014b50; ++e) {
    const uint64_t size = readLe(z, p + 24, 4), local = readLe(z, p + 42, 4);
    const uint64_t next = p + 46 + readLe(z, p + 28, 2) + readLe(z, p + 30, 2) + readLe(z, p + 32, 2);
    if (local + 30 <= n) {
      const uint64_t start = local + 30 + readLe(z, local + 26, 2) + readLe(z, local + 28, 2);
      if (start <= n && size <= n - start) {
        const uint32_t c = gnn::crc32(z.data() + start, static_cast<size_t>(size));
        for (int i = 0; i < 4; ++i) z[p + 16 + static_cast<uint64_t>(i)] = static_cast<char>((c >> (8 * i)) & 0xff);
      }
    }
    p = next;
  }
}

}  // namespace gnn::fuzz
