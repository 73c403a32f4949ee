#include "gnn/Checkpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gnn/Linear.h"
#include "gnn/Optimizer.h"

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
