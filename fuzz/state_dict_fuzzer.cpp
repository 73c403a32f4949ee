// PyTorch state_dicts (gnn/io/StateDict): the zip container, the restricted unpickler, the storages' views and
// the .npz path. Member CRC-32s would stop almost every mutation at the checksum, so for inputs of even length
// the target first rewrites each central-directory CRC to match its member's bytes (what a crafted file does);
// odd lengths keep the stored CRCs, so the check itself is fuzzed too. A state_dict that loads is mapped onto a
// small module (not strict) and written back, and the written file must read back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fuzz/FuzzInput.h"
#include "gnn/io/StateDict.h"
#include "gnn/io/ZipArchive.h"
#include "gnn/nn/Linear.h"
#include "gnn/system/Random.h"

namespace {

uint64_t rd(const std::string& s, uint64_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<uint64_t>(i)]);
  return v;
}

// Best effort, from the plain end record (torch writes true values there for small files): anything out of
// range is left as it is for the reader to refuse.
void fixCrcs(std::string& z) {
  const uint64_t n = z.size();
  if (n < 22) return;
  uint64_t eocd = n;
  for (uint64_t p = n - 22 + 1; p-- > 0 && p + 65557 >= n;)
    if (rd(z, p, 4) == 0x06054b50) {
      eocd = p;
      break;
    }
  if (eocd == n) return;
  const uint64_t count = rd(z, eocd + 10, 2);
  uint64_t p = rd(z, eocd + 16, 4);
  for (uint64_t e = 0; e < count && p + 46 <= n && rd(z, p, 4) == 0x02014b50; ++e) {
    const uint64_t size = rd(z, p + 24, 4), local = rd(z, p + 42, 4);
    const uint64_t next = p + 46 + rd(z, p + 28, 2) + rd(z, p + 30, 2) + rd(z, p + 32, 2);
    if (local + 30 <= n) {
      const uint64_t start = local + 30 + rd(z, local + 26, 2) + rd(z, local + 28, 2);
      if (start <= n && size <= n - start) {
        const uint32_t c = gnn::crc32(z.data() + start, static_cast<size_t>(size));
        for (int i = 0; i < 4; ++i) z[p + 16 + static_cast<uint64_t>(i)] = static_cast<char>((c >> (8 * i)) & 0xff);
      }
    }
    p = next;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size % 2 == 0) fixCrcs(bytes);
  gnn::fuzz::TempTree tree;
  const std::string path = tree.write("in.pt", bytes);
  gnn::StateDict sd;
  try {
    sd = gnn::readStateDict(path);
  } catch (const std::runtime_error&) {
    return 0;
  }
  gnn::Generator gen(0);
  gnn::Linear model(4, 2, gen);
  try {
    gnn::loadStateDictInto(model, sd, /*strict=*/false);
  } catch (const std::runtime_error&) {
  }
  // What was read writes and reads back whole (the writer is fuzzed by what the reader accepts).
  sd.metadata = nullptr;  // metadata of any JSON the reader accepted round-trips too, but keep it simple
  const std::string out = (tree.root() / "out.pt").string();
  gnn::writeStateDict(out, sd);
  const gnn::StateDict back = gnn::readStateDict(out);
  if (back.entries.size() != sd.entries.size()) std::abort();
  for (size_t k = 0; k < sd.entries.size(); ++k)
    if (back.entries[k].first != sd.entries[k].first || !back.entries[k].second.bitEqual(sd.entries[k].second))
      std::abort();
  return 0;
}
