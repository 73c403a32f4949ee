#include "gnn/io/Checkpoint.h"
#include "gnn/io/Fnv1a.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>

#include "gnn/nn/Init.h"
#include "gnn/nn/Linear.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/Random.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;

std::string tempPath(const std::string& name) { return (fs::temp_directory_path() / ("gnn_ckpt_" + name)).string(); }

TEST(Checkpoint, RoundTripsModelOptimizerAndMetadata) {
  Generator gen(1);
  Linear a(3, 2, gen), b(3, 2, gen);
  Adam opt({{a.parameters(), 0.0}}, 0.01);
  for (auto& p : a.parameters()) p.addGrad(Tensor::full(p.shape(), 0.5));
  opt.step();
  Checkpoint ck;
  ck.addModule("model", a);
  ck.addOptimizer(opt);
  ck.meta["epoch"] = 7;
  std::string path = tempPath("roundtrip");
  ck.save(path);
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  Checkpoint in = Checkpoint::load(path);
  in.loadModule("model", b);
  Adam opt2({{b.parameters(), 0.0}}, 0.01);
  in.loadOptimizer(opt2);
  EXPECT_EQ(in.meta["epoch"], 7);
  EXPECT_TRUE(a.weight().value().bitEqual(b.weight().value()));
  EXPECT_EQ(opt2.stepCount(), 1);
  fs::remove(path);
}

// A file written before GCNConv took PyG's layout: its weight as "<layer>.weight" [in, out], its Adam moments
// shaped alike. It loads into today's layer ("lin.weight" [out, in]) transposed, moments included, and a run
// resumed from it takes the very step the old layout would have.
TEST(Checkpoint, GCNConvWeightsInTheOldLayoutAreReadTransposed) {
  Generator gen(4);
  GCNConv a(3, 2, gen), b(3, 2, gen);
  Adam opt({{a.parameters(), 0.0}}, 0.01);
  for (auto& p : a.parameters()) p.addGrad(init::uniform(p.shape(), -1, 1, gen));
  opt.step();
  Checkpoint today;
  today.addModule("model", a);
  today.addOptimizer(opt);
  Checkpoint old;
  for (const auto& [name, t] : today.tensors) old.tensors[name] = t;
  old.tensors.erase("model.lin.weight");
  old.tensors["model.weight"] = transposed(a.weight().value());  // [in, out]
  for (const char* slot : {"optimizer.m.0", "optimizer.v.0"}) old.tensors[slot] = transposed(today.tensors[slot]);
  const std::string path = tempPath("legacy_gcn");
  old.save(path);

  Checkpoint in = Checkpoint::load(path);
  in.loadModule("model", b);
  Adam opt2({{b.parameters(), 0.0}}, 0.01);
  in.loadOptimizer(opt2);
  EXPECT_TRUE(a.weight().value().bitEqual(b.weight().value()));
  const auto st = opt.state(), st2 = opt2.state();
  for (const char* slot : {"optimizer.m.0", "optimizer.v.0", "optimizer.m.1"})
    EXPECT_TRUE(st.at(slot).bitEqual(st2.at(slot))) << slot;
  // A weight whose old shape is not the transpose is still refused, naming both shapes.
  Checkpoint wrong = old;
  wrong.tensors["model.weight"] = Tensor::zeros({2, 3});
  GCNConv c(3, 2, gen);
  EXPECT_THROW(wrong.loadModule("model", c), std::invalid_argument);
  fs::remove(path);
}

TEST(Checkpoint, RejectsCorruptTruncatedAndForeignFiles) {
  Generator gen(2);
  Linear a(3, 2, gen);
  Checkpoint ck;
  ck.addModule("model", a);
  std::string path = tempPath("corrupt");
  ck.save(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  EXPECT_THROW(Checkpoint::load(path), std::runtime_error);
  ck.save(path);
  fs::resize_file(path, fs::file_size(path) - 3);
  EXPECT_THROW(Checkpoint::load(path), std::runtime_error);
  { std::ofstream(path) << "not a checkpoint at all, just some text"; }
  try {
    Checkpoint::load(path);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  EXPECT_THROW(Checkpoint::load(tempPath("missing")), std::runtime_error);
  fs::remove(path);
}

TEST(Checkpoint, ShapeMismatchIsAClearError) {
  Generator gen(3);
  Linear a(3, 2, gen), b(4, 2, gen);
  Checkpoint ck;
  ck.addModule("model", a);
  try {
    ck.loadModule("model", b);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model.weight"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnn

namespace gnn {
namespace {

// A checkpoint file whose bytes were changed by `edit` and whose checksum was then recomputed, as a crafted
// file or a buggy writer would give: the checksum passes, so the contents themselves must be checked.
std::string craft(const Checkpoint& ck, const std::function<void(std::string&)>& edit) {
  const std::string path = (std::filesystem::temp_directory_path() / ("gnn_crafted_" + std::to_string(::getpid()) + ".ckpt")).string();
  ck.save(path);
  std::ifstream in(path, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  data.resize(data.size() - 8);
  edit(data);
  const uint64_t h = Fnv1a::of(data.data(), data.size());
  data.append(reinterpret_cast<const char*>(&h), 8);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  return path;
}

std::string loadError(const std::string& path) {
  try {
    Checkpoint::load(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, CraftedContentsWithAValidChecksumAreRefused) {
  Checkpoint ck;
  ck.tensors["w"] = Tensor::fromVector<float>({1, 2, 3, 4}, {2, 2});
  ck.meta["epoch"] = 1;
  // The dims of "w" ([2, 2] as int64) follow its name, dtype and rank.
  auto dimsAt = [](const std::string& d) { return d.find(std::string("w", 1)) + 1 + 2; };
  std::string huge = craft(ck, [&](std::string& d) {
    const int64_t big = int64_t{1} << 32;
    std::memcpy(&d[dimsAt(d)], &big, 8);
    std::memcpy(&d[dimsAt(d) + 8], &big, 8);
  });
  EXPECT_NE(loadError(huge).find("has a shape larger than the file"), std::string::npos) << loadError(huge);
  std::string negative = craft(ck, [&](std::string& d) {
    const int64_t m = -4;
    std::memcpy(&d[dimsAt(d)], &m, 8);
  });
  EXPECT_NE(loadError(negative).find("shape"), std::string::npos) << loadError(negative);
  std::string rank = craft(ck, [&](std::string& d) { d[dimsAt(d) - 1] = 9; });
  EXPECT_NE(loadError(rank).find("bad header"), std::string::npos) << loadError(rank);
  std::string count = craft(ck, [&](std::string& d) {
    const uint32_t n = 0xffffffffu;
    std::memcpy(&d[12], &n, 4);
  });
  EXPECT_NE(loadError(count).find("more tensors than the file can hold"), std::string::npos) << loadError(count);
  std::filesystem::remove(huge);
}

TEST(Checkpoint, OptimizerStateMustBeCompleteFiniteAndCounted) {
  Generator g(0);
  Linear lin(3, 2, g);
  Adam opt({{lin.parameters(), 0.0}}, 0.01);
  for (const Variable& p : lin.parameters()) {
    Variable v = p;
    v.grad() = Tensor::full(p.shape(), 0.5);
  }
  opt.step();
  std::map<std::string, Tensor> good = opt.state();
  Adam fresh({{lin.parameters(), 0.0}}, 0.01);
  EXPECT_NO_THROW(fresh.loadState(good));

  auto bad = good;
  bad["optimizer.step"] = Tensor::fromVector<int64_t>({-3}, {1});
  EXPECT_THROW(fresh.loadState(bad), std::invalid_argument);
  bad = good;
  bad.erase("optimizer.v.0");
  EXPECT_THROW(fresh.loadState(bad), std::invalid_argument);
  bad = good;
  Tensor m = bad["optimizer.m.1"].clone();
  m.flat<float>()(0) = NAN;
  bad["optimizer.m.1"] = m;
  EXPECT_THROW(fresh.loadState(bad), std::invalid_argument);
  bad = good;
  bad["optimizer.lr"] = Tensor::fromVector<double>({INFINITY}, {1});
  EXPECT_THROW(fresh.loadState(bad), std::invalid_argument);
  // Entry names whose parameter index is not plain digits (std::stoul threw std::out_of_range past 2^64, which
  // no caller expects, and read "-1" as 2^64 - 1).
  for (const char* name : {"optimizer.m.99999999999999999999999", "optimizer.m.-1", "optimizer.m. 1", "optimizer.m.1x",
                           "optimizer.m."}) {
    bad = good;
    bad[name] = good["optimizer.m.1"];
    EXPECT_THROW(fresh.loadState(bad), std::invalid_argument) << name;
  }
}

// The message a load into a model or optimizer fails with ("" when it does not).
std::string failure(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Checkpoint, NonFiniteWeightsAreRefusedNamingFileTensorAndElement) {
  Generator gen(4);
  Linear a(3, 2, gen), b(3, 2, gen);
  Checkpoint ck;
  ck.addModule("model", a);
  ck.tensors["model.weight"].flat<float>()(4) = NAN;
  const std::string path = tempPath("nan_weight_" + std::to_string(::getpid()));
  ck.save(path);  // save() recomputes the checksum: only the contents give the NaN away
  Checkpoint in = Checkpoint::load(path);
  const Tensor before = b.weight().value().clone();
  std::string e = failure([&] { in.loadModule("model", b); });
  EXPECT_NE(e.find(path + ": tensor 'model.weight' holds NaN at element 4; the checkpoint cannot be used"),
            std::string::npos)
      << e;
  EXPECT_TRUE(b.weight().value().bitEqual(before));  // refused before anything was copied into the model

  in.tensors["model.weight"] = a.weight().value().clone();
  in.tensors["model.bias"].flat<float>()(1) = -INFINITY;
  e = failure([&] { in.loadModule("model", b); });
  EXPECT_NE(e.find("tensor 'model.bias' holds -inf at element 1"), std::string::npos) << e;
  EXPECT_TRUE(b.weight().value().bitEqual(before));  // nor the weight that came before the bias
  // float64 and float16 (its exponent bits all set) are scanned too; integers always pass.
  in.tensors["d"] = Tensor::fromVector<double>({1.0, 2.0, INFINITY}, {3});
  EXPECT_NE(failure([&] { in.requireFinite("d"); }).find("'d' holds +inf at element 2"), std::string::npos);
  Tensor h({2}, DType::F16);
  const uint16_t bits[2] = {0x3C00u, 0x7E00u};  // 1.0, NaN
  std::memcpy(h.raw(), bits, sizeof bits);
  in.tensors["h"] = h;
  EXPECT_NE(failure([&] { in.requireFinite("h"); }).find("'h' holds NaN at element 1"), std::string::npos);
  in.tensors["i"] = Tensor::fromVector<int64_t>({1, 2}, {2});
  EXPECT_EQ(failure([&] { in.requireFinite("i"); }), "");
  fs::remove(path);
}

TEST(Checkpoint, OptimizerStateThatIsNotFiniteOrANegativeSecondMomentIsRefusedByName) {
  Generator gen(5);
  Linear lin(3, 2, gen);
  Adam opt({{lin.parameters(), 0.0}}, 0.01);
  for (auto& p : lin.parameters()) p.addGrad(Tensor::full(p.shape(), 0.5));
  opt.step();
  Checkpoint ck;
  ck.addOptimizer(opt);
  const std::string path = tempPath("nan_moment_" + std::to_string(::getpid()));
  ck.save(path);
  Checkpoint in = Checkpoint::load(path);
  Adam fresh({{lin.parameters(), 0.0}}, 0.01);
  EXPECT_EQ(failure([&] { in.loadOptimizer(fresh); }), "");

  Checkpoint nan = in;
  nan.tensors["optimizer.m.1"] = in.tensors["optimizer.m.1"].clone();
  nan.tensors["optimizer.m.1"].flat<float>()(0) = NAN;
  std::string e = failure([&] { nan.loadOptimizer(fresh); });
  EXPECT_NE(e.find(path + ": tensor 'optimizer.m.1' holds NaN at element 0"), std::string::npos) << e;

  // Adam divides by sqrt(v): a negative second moment, finite as it is, would turn the weights into NaN.
  Checkpoint negative = in;
  negative.tensors["optimizer.v.0"] = in.tensors["optimizer.v.0"].clone();
  negative.tensors["optimizer.v.0"].flat<float>()(3) = -0.5f;
  e = failure([&] { negative.loadOptimizer(fresh); });
  EXPECT_NE(e.find("tensor 'optimizer.v.0' holds -0.5 at element 3"), std::string::npos) << e;
  EXPECT_NE(e.find("never negative"), std::string::npos) << e;
  // SGD's momentum may be negative.
  SGD sgd({{lin.parameters(), 0.0}}, 0.1, 0.9);
  sgd.zeroGrad();
  for (auto& p : lin.parameters()) p.addGrad(Tensor::full(p.shape(), -0.5));
  sgd.step();
  Checkpoint momentum;
  momentum.addOptimizer(sgd);
  SGD sgd2({{lin.parameters(), 0.0}}, 0.1, 0.9);
  EXPECT_EQ(failure([&] { momentum.loadOptimizer(sgd2); }), "");
  fs::remove(path);
}

TEST(Tensor, ShapesThatOverflowAreRefusedBeforeAllocating) {
  EXPECT_THROW(Tensor({int64_t{1} << 32, int64_t{1} << 32}, DType::F32), std::invalid_argument);
  EXPECT_THROW(Tensor({-1, 3}, DType::F32), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
