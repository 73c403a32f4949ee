// PyG 2.3.1's norms by name (gnn/nn/norm/Normalization.h): parity with PyG from the same state_dict in training
// and evaluation (outputs, gradients of x and parameters, running statistics after a step; references made by
// tests/reference/pyg_norms.py), finite-difference gradients, real rows unchanged by padding rows and graphs (bit
// for bit), the same bits on 1 and 2 threads, FLOPs and bytes declared, PyG's resolver names and keyword
// arguments, and the int64 buffer num_batches_tracked through clone, checkpoints and an optimizer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "../PyGReference.h"
#include "ParameterGradCheck.h"
#include "gnn/autograd/OpInfo.h"
#include "gnn/io/Checkpoint.h"
#include "gnn/nn/Init.h"
#include "gnn/nn/norm/DiffGroupNorm.h"
#include "gnn/nn/norm/GraphNorm.h"
#include "gnn/nn/norm/InstanceNorm.h"
#include "gnn/nn/norm/Normalization.h"
#include "gnn/nn/norm/PairNorm.h"
#include "gnn/nn/norm/PyGBatchNorm.h"
#include "gnn/nn/norm/PyGLayerNorm.h"
#include "gnn/ops/Ops.h"
#include "gnn/optim/Optimizer.h"
#include "gnn/system/Parallel.h"

namespace gnn::testing {
namespace {

using json = nlohmann::json;

// ---- PyG parity ----

// A state_dict entry as a tensor: int64 as it is, floats in `dtype`.
Tensor entryOf(const json& e, DType dtype) {
  const Shape shape = e["shape"].get<Shape>();
  if (e["dtype"] == "int64") return Tensor::fromVector(e["values"].get<std::vector<int64_t>>(), shape);
  return Tensor::fromVector(e["values"].get<std::vector<double>>(), shape).to(dtype);
}

// Every parameter and buffer under PyG's key with its shape and dtype, and nothing else.
void loadNormStateDict(Module& m, const json& sd, DType dtype) {
  auto named = m.namedParameters();
  ASSERT_EQ(named.size(), sd.size()) << "PyG's state_dict: " << sd.dump().substr(0, 200);
  // nlohmann's json sorts keys: names are compared here, the order by KeysInPyGOrder.
  for (auto& [name, p] : named) {
    ASSERT_TRUE(sd.contains(name)) << "no '" << name << "' in PyG's state_dict";
    Tensor t = entryOf(sd[name], dtype);
    ASSERT_EQ(p.shape(), t.shape()) << name;
    ASSERT_EQ(p.dtype(), t.dtype()) << name;
    Variable v = p;
    v.value() = t;
  }
}

NormBatch batchOf(const json& ref) {
  NormBatch b;
  if (!ref["batch"].is_null()) {
    b.batch = Tensor::fromVector(ref["batch"].get<std::vector<int64_t>>());
    b.numGraphs = ref["num_graphs"];
  }
  return b;
}

void checkMode(const json& ref, const json& mode, bool training, DType dt) {
  SCOPED_TRACE(training ? "train" : "eval");
  const double tol = dt == DType::F64 ? 1e-12 : 1e-5;
  Generator gen(1);
  std::unique_ptr<Normalization> norm =
      normalizationFromPyG(ref["name"], ref["in_channels"], ref["kwargs"], gen, dt);
  ASSERT_TRUE(norm);
  loadNormStateDict(*norm, ref["state_dict"], dt);
  norm->train(training);
  Variable x(matrixOf(ref["x"], dt), true);
  Variable out = norm->forward(x, batchOf(ref));
  EXPECT_LE(relativeError(out.value(), matrixOf(mode["out"], dt)), tol) << "output";
  sum(mul(out, Variable(matrixOf(mode["out_weights"], dt)))).backward();
  EXPECT_LE(relativeError(x.grad(), matrixOf(mode["grad"]["x"], dt)), tol) << "gradient of x";
  for (auto& [name, p] : norm->namedParameters()) {
    if (!p.requiresGrad()) continue;
    const Tensor want = Tensor::fromVector(mode["grad"][name].get<std::vector<double>>(), p.shape()).to(dt);
    EXPECT_LE(relativeError(p.grad(), want), tol) << "gradient of " << name;
  }
  if (!training) return;
  for (auto& [name, p] : norm->namedParameters()) {
    const Tensor want = entryOf(mode["state_dict"][name], dt);
    if (p.dtype() == DType::I64) EXPECT_TRUE(p.value().bitEqual(want)) << name << " after the step";
    else EXPECT_LE(relativeError(p.value(), want), tol) << name << " after the step";
  }
}

class PyGNorm : public ::testing::TestWithParam<std::string> {};

TEST_P(PyGNorm, MatchesPyG) {
  const json ref = readReference("norm_" + GetParam());
  for (DType dt : {DType::F64, DType::F32}) {
    SCOPED_TRACE(dtypeName(dt));
    checkMode(ref, ref["train"], true, dt);
    checkMode(ref, ref["eval"], false, dt);
  }
}

INSTANTIATE_TEST_SUITE_P(Norms, PyGNorm,
                         ::testing::Values("batch_norm", "batch_norm_momentum_none", "batch_norm_no_affine_no_stats",
                                           "layer_norm", "layer_norm_no_batch", "layer_norm_node",
                                           "layer_norm_no_affine", "graph_norm", "graph_norm_no_batch",
                                           "instance_norm", "instance_norm_affine_tracked", "instance_norm_no_batch",
                                           "instance_norm_no_batch_tracked", "pair_norm", "pair_norm_individually",
                                           "pair_norm_no_batch", "diff_group_norm", "diff_group_norm_lamda"),
                         [](const auto& info) { return info.param; });

// ---- the checks every configuration passes ----

struct NormCase {
  std::string label;
  std::string name;
  json kwargs;
  bool withBatch = true;
};

void PrintTo(const NormCase& c, std::ostream* os) { *os << c.label; }

std::vector<NormCase> normCases() {
  return {{"batch_norm", "batch_norm", json::object()},
          {"batch_norm_momentum_none", "batch_norm", {{"momentum", nullptr}}},
          {"batch_norm_no_stats", "batch_norm", {{"affine", false}, {"track_running_stats", false}}},
          {"layer_norm", "layer_norm", json::object()},
          {"layer_norm_no_batch", "layer_norm", json::object(), false},
          {"layer_norm_node", "layer_norm", {{"mode", "node"}}},
          {"layer_norm_no_affine", "layer_norm", {{"affine", false}}},
          {"graph_norm", "graph_norm", json::object()},
          {"graph_norm_no_batch", "graph_norm", json::object(), false},
          {"instance_norm", "instance_norm", json::object()},
          {"instance_norm_tracked", "instance_norm", {{"affine", true}, {"track_running_stats", true}}},
          {"instance_norm_no_batch", "instance_norm", {{"affine", true}}, false},
          {"pair_norm", "pair_norm", json::object()},
          {"pair_norm_individually", "pair_norm", {{"scale_individually", true}}},
          {"pair_norm_no_batch", "pair_norm", json::object(), false},
          {"diff_group_norm", "diff_group_norm", {{"groups", 3}}}};
}

std::unique_ptr<Normalization> make(const NormCase& c, int64_t channels, DType dt) {
  Generator gen(3);
  return normalizationFromPyG(c.name, channels, c.kwargs, gen, dt);
}

// Parameters uniform in [-1, 1), running variances in [0.5, 1.5), running means in [-1, 1); int64 buffers kept.
void randomize(Module& m, uint64_t seed) {
  Generator g(seed);
  for (auto& [name, p] : m.namedParameters()) {
    if (p.dtype() == DType::I64) continue;
    const bool var = name.size() >= 11 && name.compare(name.size() - 11, 11, "running_var") == 0;
    Variable v = p;
    v.value() = init::uniform(p.shape(), var ? 0.5 : -1, var ? 1.5 : 1, g, p.dtype());
  }
}

// Rows of graphs `sizes` (graph g's rows shifted by g and scaled by 1 + g), then `padRows` rows in a padding graph
// (of 1e3, which must not leak, or random in [-1, 1) when !bigPadding); the batch vector and mask (undefined when
// no padding) to go with them.
struct Input {
  Tensor x;
  NormBatch b;
};

Input inputOf(const std::vector<int64_t>& sizes, int64_t F, int64_t padRows, bool withBatch, DType dt,
              uint64_t seed, bool bigPadding = true) {
  std::vector<int64_t> batch;
  for (size_t g = 0; g < sizes.size(); ++g) batch.insert(batch.end(), sizes[g], static_cast<int64_t>(g));
  const int64_t real = static_cast<int64_t>(batch.size()), N = real + padRows;
  Generator gen(seed);
  Tensor x = init::uniform({N, F}, -1, 1, gen, DType::F64);
  double* p = x.data<double>();
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < F; ++j) {
      if (i >= real && bigPadding) p[i * F + j] = 1e3;
      if (i >= real) continue;
      p[i * F + j] = p[i * F + j] * static_cast<double>(1 + batch[i]) + static_cast<double>(batch[i]);
    }
  Input in{x.to(dt), {}};
  const int64_t graphs = static_cast<int64_t>(sizes.size()) + (padRows > 0 ? 1 : 0);
  batch.insert(batch.end(), padRows, graphs - 1);
  if (withBatch) in.b = {Tensor::fromVector(batch), graphs, Tensor()};
  if (padRows > 0) {
    std::vector<uint8_t> mask(static_cast<size_t>(N), 0);
    std::fill(mask.begin(), mask.begin() + real, 1);
    in.b.nodeMask = Tensor::fromVector(mask);
  }
  return in;
}

class NormChecks : public ::testing::TestWithParam<NormCase> {};

// d(sum(r * norm(x)))/d(input) against central differences at every element of x and of every parameter, in
// training and evaluation, with padding rows (their outputs weigh in the loss, so their path through the real
// rows' statistics is checked too).
TEST_P(NormChecks, GradientsMatchFiniteDifferences) {
  const NormCase& c = GetParam();
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "eval");
    std::unique_ptr<Normalization> norm = make(c, 3, DType::F64);
    randomize(*norm, 2);
    norm->train(training);
    // Padding values of the real rows' size: the padding graph's outputs (x / sqrt(eps), no real row to centre
    // them) enter the loss, and rows of 1e3 would leave finite differences only rounding.
    Input in = inputOf({4, 2, 3}, 3, 2, c.withBatch, DType::F64, 7, /*bigPadding=*/false);
    Variable x(in.x, true);
    std::vector<std::pair<std::string, Variable>> vars = {{"x", x}};
    for (auto& p : norm->namedParameters())
      if (p.second.requiresGrad()) vars.push_back(p);
    expectParameterGradientsMatch(vars, [&] { return projected(norm->forward(x, in.b)); }, 1 << 20, 0);
  }
}

// Real rows are the same bits with padding rows (1e3, in a padding graph) as without, and so are the gradients of
// a loss over real rows and the running statistics after a training step.
TEST_P(NormChecks, PaddingDoesNotChangeRealRows) {
  const NormCase& c = GetParam();
  // Small graphs, and large ones whose rows span several of the statistics' row pieces, the padding across one.
  std::vector<int64_t> large;
  for (int64_t g = 0; g < 12; ++g) large.push_back(100 + (g * 53) % 250);
  const std::tuple<std::vector<int64_t>, int64_t, int64_t> sizes[] = {{{7, 3, 9, 1}, 6, 5}, {large, 48, 700}};
  for (const auto& [graphs, F, padRows] : sizes)
    for (bool training : {true, false}) {
      SCOPED_TRACE(std::string(training ? "train" : "eval") + " F=" + std::to_string(F));
      int64_t real = 0;
      for (int64_t n : graphs) real += n;
      std::vector<Tensor> results[2];
      for (int64_t pad : {int64_t{0}, padRows}) {
        std::unique_ptr<Normalization> norm = make(c, F, DType::F32);
        randomize(*norm, 4);
        norm->train(training);
        Input in = inputOf(graphs, F, pad, c.withBatch, DType::F32, 8);
        Variable x(in.x, true);
        Variable y = norm->forward(x, in.b);
        Generator g(5);
        Tensor w = init::uniform(y.shape(), -1, 1, g);
        for (int64_t i = real * F; i < w.numel(); ++i) w.data<float>()[i] = 0;
        sum(mul(y, Variable(w))).backward();
        std::vector<Tensor>& r = results[pad > 0];
        r.push_back(y.value().slice(0, real));
        r.push_back(x.grad().slice(0, real));
        for (auto& p : norm->parameters()) r.push_back(p.requiresGrad() ? p.grad() : p.value());
      }
      ASSERT_EQ(results[0].size(), results[1].size());
      for (size_t k = 0; k < results[0].size(); ++k) {
        // Mode "node" runs the layerNorm op, whose weight and bias gradients add row chunks sized by the row count,
        // and DiffGroupNorm's Linear has a weight gradient summed over the rows by a product blocked by the row
        // count: padding rows change their rounding, not their value.
        if (k >= 2 && (c.kwargs.value("mode", "") == "node" || c.name == "diff_group_norm"))
          EXPECT_LE(relativeError(results[0][k], results[1][k]), 1e-6);
        else
          EXPECT_TRUE(results[0][k].bitEqual(results[1][k])) << "tensor " << k;
      }
    }
}

// Large enough for every parallel loop to split: forward and backward give the same bits on 1 and 2 threads.
TEST_P(NormChecks, SameBitsOnOneAndTwoThreads) {
  const NormCase& c = GetParam();
  std::vector<int64_t> sizes;
  for (int64_t g = 0; g < 60; ++g) sizes.push_back(20 + (g * 37) % 181);
  Input in = inputOf(sizes, 48, 17, c.withBatch, DType::F32, 9);
  std::vector<Tensor> runs;
  const int before = numThreads();
  for (int threads : {1, 2}) {
    setNumThreads(threads);
    std::unique_ptr<Normalization> norm = make(c, 48, DType::F32);
    randomize(*norm, 6);
    Variable x(in.x.clone(), true);
    Variable y = norm->forward(x, in.b);
    sum(mul(y, y)).backward();
    runs.push_back(y.value());
    runs.push_back(x.grad());
    for (auto& p : norm->parameters()) runs.push_back(p.requiresGrad() ? p.grad() : p.value());
  }
  setNumThreads(before);
  const size_t half = runs.size() / 2;
  for (size_t k = 0; k < half; ++k) EXPECT_TRUE(runs[k].bitEqual(runs[half + k])) << "tensor " << k;
}

// Every op recorded names itself and declares its bytes; the FLOPs count at least a few per element.
TEST_P(NormChecks, DeclaresFlopsAndBytes) {
  const NormCase& c = GetParam();
  struct Tally : OpObserver {
    void onOp(const OpEvent& e) override {
      (e.pass == Pass::Forward ? forwardFlops : backwardFlops) += e.flops;
      if (e.pass != Pass::Forward) return;
      ++forwardOps;
      EXPECT_NE(std::string(e.info->name), "op") << "an op without a name";
      EXPECT_GT(e.bytes, 0) << e.info->name << " declares no bytes";
    }
    int64_t forwardFlops = 0, backwardFlops = 0, forwardOps = 0;
  } tally;
  std::unique_ptr<Normalization> norm = make(c, 5, DType::F32);
  Input in = inputOf({4, 6}, 5, 3, c.withBatch, DType::F32, 10);
  Variable x(in.x, true);
  {
    ObserverScope watch(tally);
    sum(norm->forward(x, in.b)).backward();
  }
  const int64_t NF = in.x.numel();
  EXPECT_GT(tally.forwardOps, 0);
  EXPECT_GE(tally.forwardFlops, 4 * NF);
  EXPECT_GE(tally.backwardFlops, 4 * NF);
}

INSTANTIATE_TEST_SUITE_P(Norms, NormChecks, ::testing::ValuesIn(normCases()),
                         [](const auto& info) { return info.param.label; });

// ---- names, keywords, keys, buffers ----

TEST(NormalizationFromPyG, ResolvesPyGNames) {
  Generator gen(1);
  for (const char* name : {"BatchNorm", "batchnorm", "batch_norm", "batch", "Batch-Norm"})
    EXPECT_TRUE(dynamic_cast<PyGBatchNorm*>(normalizationFromPyG(name, 4, nullptr, gen).get())) << name;
  for (const char* name : {"LayerNorm", "layer_norm", "layer"})
    EXPECT_TRUE(dynamic_cast<PyGLayerNorm*>(normalizationFromPyG(name, 4, nullptr, gen).get())) << name;
  for (const char* name : {"GraphNorm", "graph_norm", "graph"})
    EXPECT_TRUE(dynamic_cast<GraphNorm*>(normalizationFromPyG(name, 4, nullptr, gen).get())) << name;
  for (const char* name : {"InstanceNorm", "instance_norm", "instance"})
    EXPECT_TRUE(dynamic_cast<InstanceNorm*>(normalizationFromPyG(name, 4, json::object(), gen).get())) << name;
  EXPECT_EQ(normalizationFromPyG(nullptr, 4, nullptr, gen), nullptr);
  EXPECT_TRUE(dynamic_cast<PairNorm*>(normalizationFromPyG("PairNorm", 4, nullptr, gen).get()));
  EXPECT_TRUE(dynamic_cast<DiffGroupNorm*>(normalizationFromPyG("diff_group_norm", 4, {{"groups", 2}}, gen).get()));
  EXPECT_THROW(normalizationFromPyG("diff_group_norm", 4, nullptr, gen), std::invalid_argument);  // groups needed
  EXPECT_THROW(normalizationFromPyG("message_norm", 4, nullptr, gen), std::invalid_argument);
  EXPECT_THROW(normalizationFromPyG("batch_norm", 4, {{"momentm", 0.2}}, gen), std::invalid_argument);
  EXPECT_THROW(normalizationFromPyG("layer_norm", 4, {{"mode", "edge"}}, gen), std::invalid_argument);
  EXPECT_THROW(normalizationFromPyG("batch_norm", 4, {{"track_running_stats", false}, {"allow_single_element", true}},
                                    gen),
               std::invalid_argument);
  EXPECT_THROW(normalizationFromPyG("instance_norm", 4, {{"track_running_stats", true}, {"momentum", nullptr}}, gen),
               std::invalid_argument);
}

std::vector<std::string> keysOf(const Module& m) {
  std::vector<std::string> k;
  for (auto& [name, p] : m.namedParameters()) k.push_back(name);
  return k;
}

// Keys in the order of PyG's state_dict (torch registers weight, bias, then the buffers).
TEST(NormalizationFromPyG, KeysInPyGOrder) {
  Generator gen(1);
  using V = std::vector<std::string>;
  EXPECT_EQ(keysOf(*normalizationFromPyG("batch_norm", 4, nullptr, gen)),
            (V{"module.weight", "module.bias", "module.running_mean", "module.running_var",
               "module.num_batches_tracked"}));
  EXPECT_EQ(keysOf(*normalizationFromPyG("graph_norm", 4, nullptr, gen)), (V{"weight", "bias", "mean_scale"}));
  EXPECT_EQ(keysOf(*normalizationFromPyG("layer_norm", 4, nullptr, gen)), (V{"weight", "bias"}));
  EXPECT_EQ(keysOf(*normalizationFromPyG("instance_norm", 4, {{"affine", true}, {"track_running_stats", true}}, gen)),
            (V{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
}

TEST(PyGBatchNorm, RefusesOneRealRowInTrainingUnlessAllowed) {
  PyGBatchNorm bn(3);
  Input in = inputOf({1}, 3, 2, false, DType::F32, 1);
  EXPECT_THROW(bn.forward(Variable(in.x), in.b), std::invalid_argument);
  PyGBatchNormOptions o;
  o.allowSingleElement = true;
  PyGBatchNorm single(3, o);
  Variable y = single.forward(Variable(in.x), in.b);
  bn.eval();
  EXPECT_TRUE(y.value().bitEqual(bn.forward(Variable(in.x), in.b).value()));
  EXPECT_EQ(single.numBatchesTracked(), 0);
}

std::vector<Variable> trainable(const Module& m) {
  std::vector<Variable> out;
  for (const Variable& p : m.parameters())
    if (p.requiresGrad()) out.push_back(p);
  return out;
}

// num_batches_tracked (int64 []) counts training steps, and is cloned and checkpointed. (The optimizers refuse a
// parameter that is not float, buffers included: they are given the trainable parameters here.)
TEST(PyGBatchNorm, Int64BufferThroughCloneAndCheckpoint) {
  PyGBatchNorm bn(3);
  Input in = inputOf({4, 3}, 3, 0, false, DType::F32, 2);
  Adam opt({{trainable(bn), 0.01}}, 0.1);
  for (int step = 0; step < 3; ++step) {
    opt.zeroGrad();
    sum(mul(bn.forward(Variable(in.x), in.b), Variable(in.x))).backward();
    opt.step();
  }
  EXPECT_EQ(bn.numBatchesTracked(), 3);
  std::unique_ptr<PyGBatchNorm> copy = cloneModule(bn);
  EXPECT_EQ(copy->numBatchesTracked(), 3);
  sum(copy->forward(Variable(in.x), in.b)).backward();
  EXPECT_EQ(copy->numBatchesTracked(), 4);
  EXPECT_EQ(bn.numBatchesTracked(), 3);
  const std::string path = (std::filesystem::temp_directory_path() / "gnn_pyg_batchnorm_test.ckpt").string();
  Checkpoint ck;
  ck.addModule("bn", bn);
  ck.addOptimizer(opt);
  ck.save(path);
  PyGBatchNorm fresh(3);
  Adam opt2({{trainable(fresh), 0.01}}, 0.1);
  Checkpoint loaded = Checkpoint::load(path);
  loaded.loadModule("bn", fresh);
  loaded.loadOptimizer(opt2);
  std::filesystem::remove(path);
  EXPECT_EQ(fresh.numBatchesTracked(), 3);
  bn.eval();
  fresh.eval();
  EXPECT_TRUE(fresh.forward(Variable(in.x), in.b).value().bitEqual(bn.forward(Variable(in.x), in.b).value()));
}

}  // namespace
}  // namespace gnn::testing
