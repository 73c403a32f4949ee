#include "gnn/io/StateDict.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gnn/io/TorchPickle.h"
#include "gnn/io/ZipArchive.h"
#include "gnn/nn/Module.h"
#include "gnn/nn/models/BasicGNN.h"
#include "gnn/system/Random.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

// The files tests/reference/state_dicts.py made with torch.save (committed: no Python here).
std::string refFile(const std::string& name) { return std::string(GNN_SOURCE_DIR) + "/tests/reference/state_dicts/" + name; }

std::string tempPath(const std::string& name) {
  return (fs::temp_directory_path() / ("gnn_sd_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the std::runtime_error f throws; "(no exception)" when none. Any other exception fails.
std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no exception)";
}

DType expectedDtype(const std::string& torchName) {
  if (torchName == "float32") return DType::F32;
  if (torchName == "float64") return DType::F64;
  if (torchName == "float16") return DType::F16;
  if (torchName == "bfloat16") return DType::BF16;
  if (torchName == "int64") return DType::I64;
  if (torchName == "uint8" || torchName == "bool") return DType::U8;
  return DType::I32;  // int32, and int16 / int8 widened
}

// `sd` holds exactly the entries of the JSON sidecar, in its order, with its dtypes, shapes and values.
void expectMatches(const StateDict& sd, const std::string& jsonName) {
  const nlohmann::ordered_json want = nlohmann::ordered_json::parse(slurp(refFile(jsonName)))["entries"];
  ASSERT_EQ(sd.entries.size(), want.size()) << jsonName;
  size_t k = 0;
  for (const auto& [name, w] : want.items()) {
    const auto& [gotName, t] = sd.entries[k++];
    EXPECT_EQ(gotName, name);
    EXPECT_EQ(t.dtype(), expectedDtype(w["dtype"])) << name;
    EXPECT_EQ(t.shape(), w["shape"].get<Shape>()) << name;
    ASSERT_EQ(t.numel(), static_cast<int64_t>(w["values"].size())) << name;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const auto& v = w["values"][static_cast<size_t>(i)];
      if (t.dtype() == DType::I64) EXPECT_EQ(t.data<int64_t>()[i], v.get<int64_t>()) << name << "[" << i << "]";
      else EXPECT_EQ(t.at(i), v.get<double>()) << name << "[" << i << "]";
    }
    EXPECT_EQ(sd.boolEntries.count(name) > 0, w["dtype"] == "bool") << name;
  }
}

TEST(StateDict, ReadsTorchSavedFilesOfEveryDtype) {
  for (const char* name : {"float32", "float64", "ints", "half", "small", "parameters", "rank4"}) {
    SCOPED_TRACE(name);
    const StateDict sd = readStateDict(refFile(std::string(name) + ".pt"));
    expectMatches(sd, std::string(name) + ".json");
  }
}

TEST(StateDict, ReadsViewsContiguousAndTiedWeightsEqual) {
  const StateDict views = readStateDict(refFile("views.pt"));
  expectMatches(views, "views.json");  // a transpose, a strided slice with an offset, a row of one storage
  const StateDict gat = readStateDict(refFile("pyg_gat.pt"));
  expectMatches(gat, "pyg_gat.json");
  // GATConv's lin_dst is lin_src: one storage in the file, one buffer here.
  EXPECT_EQ(gat.find("lin_src.weight")->storageId(), gat.find("lin_dst.weight")->storageId());
}

TEST(StateDict, ReadsPyGModelKeysAndMetadata) {
  const StateDict sd = readStateDict(refFile("pyg_gcn.pt"));
  expectMatches(sd, "pyg_gcn.json");
  EXPECT_EQ(sd.find("norms.0.module.num_batches_tracked")->dtype(), DType::I64);
  EXPECT_EQ(sd.metadata["norms.0.module"]["version"], 2);  // BatchNorm's _version
  EXPECT_EQ(sd.metadata[""]["version"], 1);
}

TEST(StateDict, ReadsBigEndianStoragesAndNpz) {
  expectMatches(readStateDict(refFile("float32_big_endian.pt")), "float32.json");
  expectMatches(readStateDict(refFile("float32.npz")), "float32.json");
}

TEST(StateDict, RefusesPicklesThatCallAnything) {
  // Each names the opcode or the global it met; nothing is built from them.
  const std::pair<const char*, const char*> cases[] = {{"evil_system.pt", "GLOBAL 'posix system'"},
                                                       {"evil_eval.pt", "GLOBAL 'builtins eval'"},
                                                       {"evil_class.pt", "GLOBAL '__main__ Model'"},
                                                       {"evil_inst.pt", "opcode INST"},
                                                       {"binfloat.pt", "opcode BINFLOAT"}};
  for (const auto& c : cases) {  // named, not bound: C++17 lambdas cannot capture structured bindings
    const char* file = c.first;
    const char* says = c.second;
    const std::string msg = errorOf([&] { readStateDict(refFile(file)); });
    EXPECT_NE(msg.find(says), std::string::npos) << msg;
    EXPECT_NE(msg.find(file), std::string::npos) << msg;
  }
}

TEST(StateDict, RefusesInconsistentArchivesNamingTheFault) {
  std::string msg = errorOf([] { readStateDict(refFile("missing_storage.pt")); });
  EXPECT_NE(msg.find("storage '1' is missing"), std::string::npos) << msg;
  msg = errorOf([] { readStateDict(refFile("bad_numel.pt")); });
  EXPECT_NE(msg.find("storage '0' should hold 12 FloatStorage elements but its member has 52 bytes"), std::string::npos)
      << msg;
  msg = errorOf([] { readStateDict(refFile("rank5.pt")); });
  EXPECT_NE(msg.find("rank 5"), std::string::npos) << msg;
  msg = errorOf([] { readStateDict(refFile("float32_compressed.npz")); });
  EXPECT_NE(msg.find("member '0.weight.npy' is deflated"), std::string::npos) << msg;
  msg = errorOf([] { readStateDict(refFile("legacy.pt")); });
  EXPECT_NE(msg.find("legacy format"), std::string::npos) << msg;
  msg = errorOf([] { readStateDict(refFile("no_such_file.pt")); });
  EXPECT_NE(msg.find("cannot open"), std::string::npos) << msg;
}

// Builds a pickle by hand: a tensor view past its storage, an expanded view, a storage of two types.
TEST(StateDict, RefusesViewsOutsideTheirStorage) {
  auto pickleWith = [](int64_t offset, std::vector<int64_t> size, std::vector<int64_t> stride) {
    PickledStateDict p;
    p.storages.push_back({"0", TorchScalar::Float, "cpu", 6});
    p.entries.push_back({"w", PickledTensor{0, offset, std::move(size), std::move(stride), false}});
    return writeStateDictPickle(p);
  };
  EXPECT_NO_THROW(parseStateDictPickle(pickleWith(0, {2, 3}, {3, 1}), "t"));
  EXPECT_NO_THROW(parseStateDictPickle(pickleWith(5, {0, 9}, {9, 1}), "t"));  // empty: any offset
  for (const auto& bad : std::vector<std::tuple<int64_t, std::vector<int64_t>, std::vector<int64_t>>>{
           {1, {2, 3}, {3, 1}}, {0, {3, 3}, {3, 1}}, {6, {1}, {1}}, {0, {2, 3}, {4, 1}}, {0, {7}, {0}},
           {0, {2, 3}, {3, 1LL << 62}}, {-1, {1}, {1}}, {0, {2}, {-1}}, {0, {2, 3}, {3}},
           {0, {1LL << 40, 1LL << 40, 0}, {0, 0, 1}}}) {
    const std::string msg = errorOf(
        [&] { parseStateDictPickle(pickleWith(std::get<0>(bad), std::get<1>(bad), std::get<2>(bad)), "t"); });
    EXPECT_NE(msg.find("storage '0'"), std::string::npos) << msg;
  }
}

// Every prefix of a file is refused with a clean error (the end records are at the end; a prefix has none
// that fit), and never read past.
TEST(StateDict, RefusesTruncatedFilesAtEveryOffset) {
  const std::string path = tempPath("truncated.pt");
  for (const char* name : {"float32.pt", "pyg_gcn.pt"}) {
    const std::string bytes = slurp(refFile(name));
    for (size_t n = 0; n < bytes.size(); n += 3) {
      spit(path, bytes.substr(0, n));
      EXPECT_NE(errorOf([&] { readStateDict(path); }), "(no exception)") << name << " cut at " << n;
    }
  }
  fs::remove(path);
}

// One byte changed anywhere: refused with a clean error, or -- in bytes nothing reads or checks (padding,
// dates, the local headers' unused sizes) -- read equal to the original.
TEST(StateDict, FlippedBytesAreRefusedOrHarmless) {
  const std::string path = tempPath("flipped.pt");
  for (const char* name : {"float32.pt", "views.pt"}) {
    const std::string bytes = slurp(refFile(name));
    const StateDict good = readStateDict(refFile(name));
    int refused = 0;
    for (size_t at = 0; at < bytes.size(); ++at) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(bad[at] ^ (at % 2 ? 0x01 : 0x80));
      spit(path, bad);
      StateDict sd;
      if (errorOf([&] { sd = readStateDict(path); }) != "(no exception)") {
        ++refused;
        continue;
      }
      ASSERT_EQ(sd.entries.size(), good.entries.size()) << name << " byte " << at;
      for (size_t k = 0; k < sd.entries.size(); ++k) {
        EXPECT_EQ(sd.entries[k].first, good.entries[k].first) << name << " byte " << at;
        EXPECT_TRUE(sd.entries[k].second.bitEqual(good.entries[k].second)) << name << " byte " << at;
      }
    }
    EXPECT_GT(refused, static_cast<int>(bytes.size()) / 2) << name;
  }
  fs::remove(path);
}

TEST(StateDict, WritesWhatItReadsBackBitForBit) {
  StateDict sd;
  Tensor shared = Tensor::fromVector<float>({1.5f, -2.f, 3.25f, 0.f, 7.f, -0.5f}, {2, 3});
  sd.entries.emplace_back("conv.lin_src.weight", shared);
  sd.entries.emplace_back("conv.lin_dst.weight", shared);  // tied: one storage in the file
  sd.entries.emplace_back("f64", Tensor::fromVector<double>({1e-300, -2.5}, {1, 2}));
  sd.entries.emplace_back("i64", Tensor::fromVector<int64_t>({int64_t{1} << 60, -3}, {2}));
  sd.entries.emplace_back("i32", Tensor::fromVector<int32_t>({-7, 8, 9}, {3, 1, 1}));
  sd.entries.emplace_back("flag", Tensor::fromVector<uint8_t>({1, 0, 1}, {3}));
  sd.entries.emplace_back("byte", Tensor::fromVector<uint8_t>({200, 3}, {2}));
  sd.entries.emplace_back("half", Tensor::fromVector<float>({0.5f, -1.25f, 3.f, 4.f}, {2, 2, 1, 1}).to(DType::F16));
  sd.entries.emplace_back("bf16", Tensor::fromVector<float>({0.5f, -1.25f}, {2}).to(DType::BF16));
  sd.entries.emplace_back("scalar", Tensor::scalar(2.5));
  sd.entries.emplace_back("empty", Tensor::zeros({0, 4}));
  sd.boolEntries = {"flag"};
  sd.metadata = {{"", {{"version", 1}}}, {"conv", {{"version", 2}}}};
  const char* keep = std::getenv("GNN_STATE_DICT_OUT");  // a folder to keep the file in, for torch.load checks
  const std::string path = keep ? std::string(keep) + "/written.pt" : tempPath("written.pt");
  writeStateDict(path, sd);
  const StateDict back = readStateDict(path);
  ASSERT_EQ(back.entries.size(), sd.entries.size());
  for (size_t k = 0; k < sd.entries.size(); ++k) {
    EXPECT_EQ(back.entries[k].first, sd.entries[k].first);
    EXPECT_TRUE(back.entries[k].second.bitEqual(sd.entries[k].second)) << sd.entries[k].first;
  }
  EXPECT_EQ(back.boolEntries, sd.boolEntries);
  EXPECT_EQ(back.metadata, sd.metadata);
  EXPECT_EQ(back.find("conv.lin_src.weight")->storageId(), back.find("conv.lin_dst.weight")->storageId());
  // torch's layout: one top folder named after the file, 64-byte aligned storages, tied entries sharing one.
  const ZipReader zip(slurp(path), path);
  EXPECT_EQ(zip.entries().size(), 2u + 10u + 1u);  // data.pkl, byteorder, 10 storages, version
  for (const ZipEntry& e : zip.entries()) {
    EXPECT_EQ(e.name.rfind(fs::path(path).stem().string() + "/", 0), 0u) << e.name;
    if (e.name.find("/data/") != std::string::npos) {
      EXPECT_EQ(e.dataOffset % 64, 0u) << e.name;
    }
  }
  if (!keep) fs::remove(path);
}

TEST(StateDict, RewritesAReferenceUnchanged) {
  const StateDict sd = readStateDict(refFile("pyg_gcn.pt"));
  const char* keep = std::getenv("GNN_STATE_DICT_OUT");
  const std::string path = keep ? std::string(keep) + "/pyg_gcn.pt" : tempPath("pyg_gcn.pt");
  writeStateDict(path, sd);
  expectMatches(readStateDict(path), "pyg_gcn.json");
  EXPECT_EQ(readStateDict(path).metadata, sd.metadata);
  if (!keep) fs::remove(path);
}

// A module shaped like a PyG layer with a BatchNorm: float parameters, float and int64 buffers, a child.
class Block : public Module {
 public:
  class Norm : public Module {
   public:
    Norm() {
      registerParameter("weight", Tensor::full({2}, 1.0));
      registerBuffer("running_mean", Tensor::zeros({2}));
      registerBuffer("num_batches_tracked", Tensor::zeros({}, DType::I64));
    }
  };
  Block() {
    registerParameter("weight", Tensor::zeros({2, 3}));
    registerParameter("bias", Tensor::zeros({2}));
    registerModule("norm", norm_);
  }
  Norm norm_;
};

StateDict blockState(DType floatType) {
  StateDict sd;
  sd.entries.emplace_back("weight", Tensor::fromVector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).to(floatType));
  sd.entries.emplace_back("bias", Tensor::fromVector<double>({-1, -2}, {2}).to(floatType));
  sd.entries.emplace_back("norm.weight", Tensor::fromVector<double>({0.5, 0.25}, {2}).to(floatType));
  sd.entries.emplace_back("norm.running_mean", Tensor::fromVector<double>({3, 4}, {2}).to(floatType));
  sd.entries.emplace_back("norm.num_batches_tracked", Tensor::full({}, 9, DType::I64));
  return sd;
}

TEST(StateDict, LoadsIntoAModuleConvertingDtypes) {
  Block m;
  loadStateDictInto(m, blockState(DType::F64));  // float64 from PyG's .double() -> the module's float32
  const auto named = m.namedParameters();
  EXPECT_EQ(named[0].second.dtype(), DType::F32);
  EXPECT_EQ(named[0].second.value().at(5), 6.0);
  EXPECT_EQ(named[4].first, "norm.num_batches_tracked");
  EXPECT_EQ(named[4].second.dtype(), DType::I64);
  EXPECT_EQ(named[4].second.value().item(), 9.0);
  // stateDictOf gives the same names, values and dtypes back.
  const StateDict out = stateDictOf(m);
  ASSERT_EQ(out.entries.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(out.entries[k].first, named[k].first);
    EXPECT_TRUE(out.entries[k].second.bitEqual(named[k].second.value()));
  }
}

TEST(StateDict, StrictLoadListsMissingAndUnexpectedKeysTogether) {
  Block m;
  StateDict sd = blockState(DType::F32);
  sd.entries.erase(sd.entries.begin() + 1);                       // no "bias"
  sd.entries.emplace_back("norm.running_var", Tensor::zeros({2}));  // PyG has it, this module not
  sd.source = "model.pt";
  const std::string msg = errorOf([&] { loadStateDictInto(m, sd); });
  EXPECT_NE(msg.find("model.pt"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Missing key(s) in state_dict: \"bias\"."), std::string::npos) << msg;
  EXPECT_NE(msg.find("Unexpected key(s) in state_dict: \"norm.running_var\"."), std::string::npos) << msg;
  EXPECT_EQ(m.namedParameters()[0].second.value().at(0), 0.0);  // refused: nothing copied
  const StateDictMismatch keys = loadStateDictInto(m, sd, /*strict=*/false);
  EXPECT_EQ(keys.missing, std::vector<std::string>{"bias"});
  EXPECT_EQ(keys.unexpected, std::vector<std::string>{"norm.running_var"});
  EXPECT_EQ(m.namedParameters()[0].second.value().at(0), 1.0);
}

TEST(StateDict, ShapeAndKindMismatchesAreErrorsEvenWhenNotStrict) {
  Block m;
  StateDict sd = blockState(DType::F32);
  sd.entries[0].second = Tensor::zeros({3, 2});
  sd.entries[4].second = Tensor::scalar(1.0);  // a float where the module keeps an int64 count
  const std::string msg = errorOf([&] { loadStateDictInto(m, sd, false); });
  EXPECT_NE(msg.find("size mismatch for weight: copying a param with shape [3, 2] from checkpoint, the shape in "
                     "current model is [2, 3]."), std::string::npos) << msg;
  EXPECT_NE(msg.find("dtype mismatch for norm.num_batches_tracked"), std::string::npos) << msg;
}

// PyG's GCN(4, 8, num_layers=2, out_channels=3, norm="batch_norm") state_dict, loaded strictly into ours:
// every key, shape and dtype (num_batches_tracked int64) lines up.
TEST(StateDict, LoadsAPyGModelsStateDictIntoTheSameModel) {
  Generator gen(0);
  const auto gcn = basicGNNFromSpec({{"class", "GCN"},
                                     {"args", {{"in_channels", 4}, {"hidden_channels", 8}, {"num_layers", 2},
                                               {"out_channels", 3}, {"norm", "batch_norm"}}}},
                                    gen);
  const StateDict sd = readStateDict(refFile("pyg_gcn.pt"));
  const StateDictMismatch keys = loadStateDictInto(*gcn, sd);
  EXPECT_TRUE(keys.missing.empty() && keys.unexpected.empty());
  for (const auto& [name, v] : gcn->namedParameters()) EXPECT_TRUE(v.value().bitEqual(*sd.find(name))) << name;
}

TEST(ZipArchive, Crc32IsZlibs) {
  EXPECT_EQ(crc32("123456789", 9), 0xcbf43926u);  // the CRC-32 check value
  EXPECT_EQ(crc32("", 0), 0u);
}

}  // namespace
}  // namespace gnn
