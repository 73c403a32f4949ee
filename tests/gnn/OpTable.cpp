// The cases of the op table (see OpTable.h): every op of gnn/ops/Ops.h, with the variants that take different code
// paths (broadcasts, ranks, options). Small shapes serve the float64 gradient check; large ones (a few hundred
// thousand elements, several parallel chunks for every op that has them) the float32 and thread checks.
#include "OpTable.h"

#include "gnn/nn/Init.h"
#include "gnn/ops/GraphAttention.h"
#include "gnn/ops/PnaAggregate.h"
#include "gnn/ops/ScaledBlockSum.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn::testing {
namespace {
using V = std::vector<Variable>;
using A = std::vector<Tensor>;
using Shapes = std::vector<Shape>;

// Index tensors: int64 values in [0, limit) drawn from a seed.
Tensor randomIndex(Shape shape, int64_t limit, uint64_t seed) {
  Generator g(seed);
  Tensor t(std::move(shape), DType::I64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(limit)));
  return t;
}

// Segment offsets over `rows` rows in `segments` (>= 3) segments of about equal size, segment 1 left empty.
Tensor segmentPtr(int64_t rows, int64_t segments) {
  std::vector<int64_t> p(static_cast<size_t>(segments) + 1);
  for (int64_t s = 0; s <= segments; ++s) p[s] = s * rows / segments;
  p[1] = p[2];
  return Tensor::fromVector(p);
}

// Edge index [2, E] over n nodes, with edge 0 a self-loop (a zero distance for edgeDistances).
Tensor edgeIndex(int64_t e, int64_t n, uint64_t seed) {
  Tensor t = randomIndex({2, e}, n, seed);
  if (e > 0) t.data<int64_t>()[e] = t.data<int64_t>()[0];
  return t;
}

// uint8 tensor with a fraction ~keep of ones.
Tensor randomMask(Shape shape, double keep, uint64_t seed) {
  Generator g(seed);
  Tensor t(std::move(shape), DType::U8);
  uint8_t* p = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = g.nextUniform() < keep;
  return t;
}

Tensor randomValues(Shape shape, uint64_t seed, double lo = -1, double hi = 1) {
  Generator g(seed);
  return init::uniform(shape, lo, hi, g, DType::F64);
}

OpCase unaryCase(std::string name, const std::string& op, std::function<Variable(const Variable&)> f, double lo = -1,
                 double hi = 1) {
  OpCase c;
  c.name = std::move(name);
  c.ops = {op};
  c.shapes = {{6, 5}};
  c.largeShapes = {{600, 512}};
  c.build = [f](const V& x, const A&) { return f(x[0]); };
  c.lo = lo;
  c.hi = hi;
  return c;
}

OpCase binaryCase(std::string name, const std::string& op, std::function<Variable(const Variable&, const Variable&)> f,
                  Shapes shapes, Shapes large) {
  OpCase c;
  c.name = std::move(name);
  c.ops = {op};
  c.shapes = std::move(shapes);
  c.largeShapes = std::move(large);
  c.build = [f](const V& x, const A&) { return f(x[0], x[1]); };
  return c;
}

// The message ops' edges: at 5 nodes duplicate edges, a self-loop and an isolated node (4); at the large size 10
// random edges a node, drawn from `seed`.
std::function<std::vector<Tensor>(const std::vector<Shape>&)> messageGraph(uint64_t seed) {
  return [seed](const std::vector<Shape>& s) {
    const int64_t n = s[0][0];
    if (n == 5) return std::vector<Tensor>{Tensor::fromVector<int64_t>({0, 0, 1, 2, 3, 3, 1, 1, 2, 2, 0, 1}, {2, 6})};
    Generator g(seed);
    std::vector<int64_t> ei(2 * 10 * n);
    for (auto& v : ei) v = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n)));
    return std::vector<Tensor>{Tensor::fromVector(ei, {2, 10 * n})};
  };
}

std::vector<OpCase> makeTable() {
  std::vector<OpCase> t;
  auto push = [&](OpCase c) { t.push_back(std::move(c)); };

  // ---- dense algebra ----
  push(binaryCase("matmul", "matmul", gnn::matmul, {{5, 3}, {3, 4}}, {{300, 64}, {64, 48}}));
  push(binaryCase("matmulNT", "matmulNT", gnn::matmulNT, {{5, 3}, {4, 3}}, {{300, 64}, {48, 64}}));
  {
    OpCase c;
    c.name = "linear_bias";
    c.ops = {"linear"};
    c.shapes = {{5, 3}, {4, 3}, {4}};
    c.largeShapes = {{600, 64}, {48, 64}, {48}};  // 600 rows: the weight gradient is split over row chunks
    c.build = [](const V& x, const A&) { return linear(x[0], x[1], x[2]); };
    push(c);
    c.name = "linear_narrowInput";  // a weight gradient [128, 50]: computed as its transpose (50 % 16 != 0)
    c.largeShapes = {{600, 50}, {128, 50}, {128}};
    push(c);
    c.name = "linear_noBias";
    c.shapes = {{5, 3}, {4, 3}};
    c.largeShapes = {{600, 64}, {48, 64}};
    c.build = [](const V& x, const A&) { return linear(x[0], x[1]); };
    push(c);
  }
  const Shape big{600, 512};
  push(binaryCase("add_same", "add", gnn::add, {{4, 3}, {4, 3}}, {big, big}));
  push(binaryCase("add_row", "add", gnn::add, {{4, 3}, {3}}, {big, {512}}));
  push(binaryCase("add_row2d", "add", gnn::add, {{4, 3}, {1, 3}}, {big, {1, 512}}));
  push(binaryCase("add_column", "add", gnn::add, {{4, 3}, {4, 1}}, {big, {600, 1}}));
  push(binaryCase("sub_same", "sub", gnn::sub, {{4, 3}, {4, 3}}, {big, big}));
  push(binaryCase("sub_row", "sub", gnn::sub, {{4, 3}, {3}}, {big, {512}}));
  push(binaryCase("mul_same", "mul", gnn::mul, {{4, 3}, {4, 3}}, {big, big}));
  push(binaryCase("mul_row", "mul", gnn::mul, {{4, 3}, {3}}, {big, {512}}));
  push(binaryCase("mul_column", "mul", gnn::mul, {{4, 3}, {4, 1}}, {big, {600, 1}}));
  push(unaryCase("scale", "scale", [](const Variable& x) { return scale(x, -2.5); }));
  push(unaryCase("sliceCols", "sliceCols", [](const Variable& x) { return sliceCols(x, 1, x.dim(1) - 1); }));
  push(unaryCase("sliceRows", "sliceRows", [](const Variable& x) { return sliceRows(x, 1, x.dim(0) - 1); }));
  t.back().parallel = false;  // one block copy
  push(binaryCase("concatCols", "concatCols", [](const Variable& a, const Variable& b) { return concatCols({a, b}); },
                  {{3, 2}, {3, 4}}, {{2000, 64}, {2000, 32}}));
  t.back().parallel = false;
  push(binaryCase("concatRows", "reshape", [](const Variable& a, const Variable& b) { return concatRows({a, b}); },
                  {{2, 3}, {4, 3}}, {{2000, 64}, {1000, 64}}));
  t.back().ops = {"reshape", "reshape", "concatCols", "reshape"};
  t.back().parallel = false;
  {
    // Sequential sums of 300k values: float32's rounding grows with the count.
    OpCase c = unaryCase("sum", "sum", [](const Variable& x) { return sum(x); });
    c.tolerance = 1e-3;
    c.parallel = false;
    push(c);
    c = unaryCase("mean", "sum", [](const Variable& x) { return mean(x); });
    c.ops = {"sum", "scale"};
    c.parallel = false;
    push(c);
  }

  // ---- elementwise activations and dropout (inputs in [-3, 3]: both sides of every kink) ----
  push(unaryCase("relu", "relu", [](const Variable& x) { return relu(x); }, -3, 3));
  push(unaryCase("elu", "elu", [](const Variable& x) { return elu(x, 1.3); }, -3, 3));
  push(unaryCase("leakyRelu", "leakyRelu", [](const Variable& x) { return leakyRelu(x, 0.2); }, -3, 3));
  push(unaryCase("gelu", "gelu", [](const Variable& x) { return gelu(x); }, -3, 3));
  push(unaryCase("tanh", "tanh", [](const Variable& x) { return gnn::tanh(x); }, -3, 3));
  push(unaryCase("sigmoid", "sigmoid", [](const Variable& x) { return sigmoid(x); }, -3, 3));
  // Bounds inside the inputs' range: some elements clamped at each end (none at a bound exactly).
  push(unaryCase("clamp", "clamp", [](const Variable& x) { return clamp(x, -0.55, 0.65); }));
  {
    // Duplicate edges, a self-loop, an isolated node (the same graph at both sizes: random at the large one).
    OpCase c;
    c.name = "gatedMessageSum";
    c.ops = {"gatedMessageSum"};
    c.shapes = {{5, 3}, {5, 3}, {5, 3}};
    c.largeShapes = {{3000, 32}, {3000, 32}, {3000, 32}};
    c.aux = messageGraph(7);
    c.build = [](const V& x, const A& a) { return gatedMessageSum(x[0], x[1], x[2], a[0]); };
    push(c);
  }
  {
    // One weight per edge (an [E, 1] column); duplicate edges, a self-loop, an isolated node.
    OpCase c;
    c.name = "weightedMessageSum";
    c.ops = {"weightedMessageSum"};
    c.shapes = {{5, 3}, {6, 1}};
    c.largeShapes = {{3000, 32}, {30000, 1}};
    c.aux = messageGraph(8);
    c.build = [](const V& x, const A& a) { return weightedMessageSum(x[0], x[1], a[0], x[0].dim(0)); };
    push(c);
  }
  for (const bool withEdge : {false, true}) {
    // Two heads of 3 (large: 4 of 8); duplicate edges, a self-loop, an isolated node; edge terms or none.
    OpCase c;
    c.name = withEdge ? "dotAttentionMessageSum_edge" : "dotAttentionMessageSum";
    c.ops = {"dotAttentionMessageSum"};
    c.shapes = {{5, 6}, {5, 6}, {5, 6}};
    c.largeShapes = {{3000, 32}, {3000, 32}, {3000, 32}};
    if (withEdge) {
      c.shapes.push_back({6, 6});
      c.largeShapes.push_back({30000, 32});
    }
    c.aux = messageGraph(9);
    c.build = [withEdge](const V& x, const A& a) {
      const int64_t heads = x[0].dim(0) == 5 ? 2 : 4;
      return dotAttentionMessageSum(x[0], x[1], x[2], withEdge ? x[3] : Variable(), a[0], heads, 0.7);
    };
    push(c);
  }
  {
    // Sources of another node set (HGTConv's relations between two types): 5 sources, 4 targets; a duplicate
    // edge, a target without edges (3), a source without edges (4).
    OpCase c;
    c.name = "dotAttentionMessageSum_bipartite";
    c.ops = {"dotAttentionMessageSum"};
    c.shapes = {{4, 6}, {5, 6}, {5, 6}};
    c.largeShapes = {{2000, 32}, {3000, 32}, {3000, 32}};
    c.aux = [](const std::vector<Shape>& s) {
      const int64_t nd = s[0][0], ns = s[1][0];
      if (nd == 4)
        return std::vector<Tensor>{Tensor::fromVector<int64_t>({0, 0, 1, 3, 2, 2, 1, 1, 0, 2, 0, 1}, {2, 6})};
      Generator g(10);
      const int64_t E = 10 * ns;
      std::vector<int64_t> ei(static_cast<size_t>(2 * E));
      for (int64_t e = 0; e < E; ++e) {
        ei[static_cast<size_t>(e)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(ns)));
        ei[static_cast<size_t>(E + e)] = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(nd)));
      }
      return std::vector<Tensor>{Tensor::fromVector(ei, {2, E})};
    };
    c.build = [](const V& x, const A& a) {
      return dotAttentionMessageSum(x[0], x[1], x[2], Variable(), a[0], x[0].dim(0) == 4 ? 2 : 4, 0.6);
    };
    push(c);
  }
  {
    // NNConv's messages: 4 sources for 6 edges (a source used twice, one unused), 3 -> 2 channels.
    OpCase c;
    c.name = "edgeMatVec";
    c.ops = {"edgeMatVec"};
    c.shapes = {{4, 3}, {6, 3, 2}};
    c.largeShapes = {{3000, 32}, {30000, 32, 4}};
    c.aux = [](const std::vector<Shape>& s) {
      const int64_t n = s[0][0], e = s[1][0];
      if (n == 4) return std::vector<Tensor>{Tensor::fromVector<int64_t>({0, 2, 2, 1, 0, 2}, {6})};
      Generator g(12);
      std::vector<int64_t> src(static_cast<size_t>(e));
      for (auto& v : src) v = static_cast<int64_t>(g.nextBelow(static_cast<uint64_t>(n)));
      return std::vector<Tensor>{Tensor::fromVector(src, {e})};
    };
    c.build = [](const V& x, const A& a) { return edgeMatVec(x[0], x[1], a[0]); };
    push(c);
  }
  for (const bool mean : {false, true}) {
    // FiLMConv's messages: beta, gamma, h; duplicate edges, a self-loop, an isolated node.
    OpCase c;
    c.name = mean ? "filmMessageSum_mean" : "filmMessageSum";
    c.ops = {"filmMessageSum"};
    c.shapes = {{5, 3}, {5, 3}, {5, 3}};
    c.largeShapes = {{3000, 32}, {3000, 32}, {3000, 32}};
    c.aux = messageGraph(11);
    c.build = [mean](const V& x, const A& a) { return filmMessageSum(x[0], x[1], x[2], a[0], mean); };
    push(c);
  }
  for (const int variant : {0, 1, 2}) {
    // GENConv's softmax aggregation: a temperature per channel with edge terms, one temperature without, and
    // one held constant (no gradient to it); duplicate edges, a self-loop, an isolated node.
    OpCase c;
    c.name = variant == 0 ? "softmaxMessageSum_edge" : variant == 1 ? "softmaxMessageSum" : "softmaxMessageSum_fixed_t";
    c.ops = {"softmaxMessageSum"};
    c.shapes = {{5, 3}};
    c.largeShapes = {{3000, 32}};
    if (variant < 2) {
      c.shapes.push_back({variant == 0 ? 3 : 1});
      c.largeShapes.push_back({variant == 0 ? 32 : 1});
    }
    if (variant == 0) {
      c.shapes.push_back({6, 3});
      c.largeShapes.push_back({30000, 32});
    }
    c.aux = messageGraph(10);
    c.build = [variant](const V& x, const A& a) {
      const Variable t = variant == 2 ? Variable(Tensor::full({1}, 0.8, x[0].value().dtype())) : x[1];
      return softmaxMessageSum(x[0], variant == 0 ? x[2] : Variable(), a[0], x[0].dim(0), 0.1, t);
    };
    push(c);
  }
  {
    OpCase c;
    c.name = "gruCell";
    c.ops = {"gruCell"};
    c.shapes = {{3, 12}, {3, 12}, {3, 4}};
    c.largeShapes = {{3000, 96}, {3000, 96}, {3000, 32}};
    c.lo = -2;
    c.hi = 2;
    c.build = [](const V& x, const A&) { return gruCell(x[0], x[1], x[2]); };
    push(c);
  }
  push(unaryCase("softplus", "softplus", [](const Variable& x) { return softplus(x, 2.0, 5.0); }, -3, 3));
  push(unaryCase("shiftedSoftplus", "shiftedSoftplus", [](const Variable& x) { return shiftedSoftplus(x); }, -3, 3));
  push(unaryCase("dropout_generator", "dropout", [](const Variable& x) {
    Generator g(7);  // a fresh generator per call makes the mask part of the function
    return dropout(x, 0.4, g, true);
  }));
  push(unaryCase("dropout_context", "dropout", [](const Variable& x) {
    ExecutionContext::current().setRandomKey({7, 3, 1});  // the same stream on every call
    return dropout(x, 0.4, true);
  }));
  push(unaryCase("reluDropout", "reluDropout", [](const Variable& x) {
    Generator g(7);
    return reluDropout(x, 0.4, g, true);
  }, -3, 3));

  // ---- normalisation, embeddings ----
  push(unaryCase("logSoftmax", "logSoftmax", [](const Variable& x) { return logSoftmax(x); }));
  t.back().largeShapes = {{6000, 40}};
  {
    OpCase c;
    c.name = "layerNorm";
    c.ops = {"layerNorm"};
    c.shapes = {{4, 6}, {6}, {6}};
    c.largeShapes = {{4000, 64}, {64}, {64}};
    c.build = [](const V& x, const A&) { return layerNorm(x[0], x[1], x[2]); };
    push(c);
    c.name = "layerNormRelu";
    c.ops = {"layerNormRelu"};
    c.build = [](const V& x, const A&) { return layerNormRelu(x[0], x[1], x[2]); };
    push(c);
  }
  {
    // Statistics over the rows whose mask is 1 (every third row is padding), gradients through them.
    OpCase c;
    c.name = "maskedBatchNorm";
    c.ops = {"maskedBatchNorm"};
    c.shapes = {{7, 5}, {5}, {5}};
    c.largeShapes = {{4000, 64}, {64}, {64}};
    c.aux = [](const std::vector<Shape>& s) {
      Tensor mask({s[0][0]}, DType::U8);
      for (int64_t i = 0; i < s[0][0]; ++i) mask.data<uint8_t>()[i] = i % 3 != 2;
      return std::vector<Tensor>{mask};
    };
    c.build = [](const V& x, const A& a) { return maskedBatchNorm(x[0], a[0], x[1], x[2]); };
    push(c);
    c.name = "batchNormInference";
    c.ops = {"batchNormInference"};
    c.aux = [](const std::vector<Shape>& s) {
      Tensor mean({s[1][0]}, DType::F64), var({s[1][0]}, DType::F64);
      for (int64_t j = 0; j < s[1][0]; ++j) {
        mean.data<double>()[j] = 0.1 * static_cast<double>(j % 7) - 0.3;
        var.data<double>()[j] = 0.5 + 0.05 * static_cast<double>(j % 5);
      }
      return std::vector<Tensor>{mean, var};
    };
    c.build = [](const V& x, const A& a) {
      return batchNormInference(x[0], a[0].to(x[0].dtype()), a[1].to(x[0].dtype()), x[1], x[2]);
    };
    push(c);
  }
  {
    // Per-graph norms (GraphNorm, InstanceNorm, PyG's LayerNorm "graph"): segments of rows with one empty, every
    // third row padding; inputs x, then mean scale, gamma, beta as each variant takes them.
    OpCase c;
    c.ops = {"segmentNorm"};
    c.aux = [](const Shapes& s) {
      Tensor mask({s[0][0]}, DType::U8);
      for (int64_t i = 0; i < s[0][0]; ++i) mask.data<uint8_t>()[i] = i % 3 != 2;
      return A{segmentPtr(s[0][0], std::max<int64_t>(3, s[0][0] / 15)), mask};
    };
    c.name = "segmentNorm_graphNorm";
    c.shapes = {{7, 5}, {5}, {5}, {5}};
    c.largeShapes = {{4000, 64}, {64}, {64}, {64}};
    c.build = [](const V& x, const A& a) { return segmentNorm(x[0], a[0], a[1], x[1], x[2], x[3]); };
    push(c);
    c.name = "segmentNorm_plain";
    c.shapes = {{7, 5}};
    c.largeShapes = {{4000, 64}};
    c.build = [](const V& x, const A& a) { return segmentNorm(x[0], a[0], a[1], {}, {}, {}); };
    push(c);
    c.name = "segmentNorm_wholeSegment";
    c.shapes = {{7, 5}, {5}, {5}};
    c.largeShapes = {{4000, 64}, {64}, {64}};
    c.build = [](const V& x, const A& a) {
      SegmentNormOptions o;
      o.wholeSegment = true;
      return segmentNorm(x[0], a[0], a[1], {}, x[1], x[2], o);
    };
    push(c);
    c.name = "segmentNorm_wholeEpsOnStd";
    c.build = [](const V& x, const A& a) {
      SegmentNormOptions o;
      o.wholeSegment = o.epsOnStd = true;
      return segmentNorm(x[0], a[0], a[1], {}, x[1], x[2], o);
    };
    push(c);
  }
  {
    OpCase c;
    c.name = "embedding";
    c.ops = {"gatherRows"};  // embedding is a row gather
    c.shapes = {{4, 3}};
    c.largeShapes = {{500, 64}};
    c.aux = [](const Shapes& s) { return A{randomIndex({s[0][0] * 5}, s[0][0], 31)}; };
    c.build = [](const V& x, const A& a) { return embedding(x[0], a[0]); };
    push(c);
    c.name = "embeddingBag";
    c.ops = {"embeddingBag"};
    c.shapes = {{6, 3}};
    c.largeShapes = {{300, 64}};
    c.aux = [](const Shapes& s) { return A{randomIndex({s[0][0] * 40, 3}, s[0][0], 32)}; };
    c.build = [](const V& x, const A& a) { return embeddingBag(x[0], a[0]); };
    push(c);
  }

  // ---- losses ----
  {
    auto labelsAndMask = [](const Shapes& s) {
      return A{randomIndex({s[0][0]}, s[0][1], 41), randomMask({s[0][0]}, 0.7, 42)};
    };
    OpCase c;
    c.name = "nllLoss";
    c.ops = {"nllLoss"};
    c.shapes = {{6, 4}};
    c.largeShapes = {{5000, 10}};
    c.aux = labelsAndMask;
    c.build = [](const V& x, const A& a) { return nllLoss(x[0], a[0], a[1]); };
    c.parallel = false;  // the losses sum in one pass
    push(c);
    c.name = "crossEntropy";
    c.ops = {"logSoftmax", "nllLoss"};
    c.largeShapes = {{20000, 10}};  // several row chunks for logSoftmax
    c.build = [](const V& x, const A& a) { return crossEntropy(x[0], a[0], a[1]); };
    c.parallel = true;
    push(c);
    c.parallel = false;
    auto targetAndRowMask = [](const Shapes& s) {
      return A{randomValues(s[0], 43), randomMask({s[0][0]}, 0.7, 44)};
    };
    c.name = "mseLoss";
    c.ops = {"mseLoss"};
    c.shapes = {{4, 2}};
    c.largeShapes = {{5000, 16}};
    c.aux = targetAndRowMask;
    c.build = [](const V& x, const A& a) { return mseLoss(x[0], a[0], a[1]); };
    push(c);
    c.name = "l1Loss";
    c.ops = {"l1Loss"};
    c.aux = [](const Shapes& s) { return A{randomValues(s[0], 45)}; };
    c.build = [](const V& x, const A& a) { return l1Loss(x[0], a[0]); };
    push(c);
    c.name = "bceWithLogits";
    c.ops = {"bceWithLogits"};
    c.aux = [](const Shapes& s) { return A{randomMask(s[0], 0.5, 46).to(DType::F64), randomMask({s[0][0]}, 0.7, 47)}; };
    c.build = [](const V& x, const A& a) { return bceWithLogits(x[0], a[0], a[1]); };
    push(c);
  }

  // ---- graph ops ----
  {
    OpCase c;
    c.name = "gatherRows";
    c.ops = {"gatherRows"};
    c.shapes = {{5, 3}};
    c.largeShapes = {{2000, 32}};
    c.aux = [](const Shapes& s) { return A{randomIndex({s[0][0] * 15}, s[0][0], 51)}; };
    c.build = [](const V& x, const A& a) { return gatherRows(x[0], a[0]); };
    push(c);

    c.shapes = {{6, 3}};
    c.largeShapes = {{30000, 16}};
    c.aux = [](const Shapes& s) { return A{segmentPtr(s[0][0], std::max<int64_t>(4, s[0][0] / 15))}; };
    const std::pair<const char*, Variable (*)(const Variable&, const Tensor&)> segments[] = {
        {"segmentSum", segmentSum}, {"segmentMean", segmentMean}, {"segmentMax", segmentMax},
        {"segmentSoftmax", segmentSoftmax}};
    for (const auto& [name, f] : segments) {
      c.name = name;
      c.ops = {name};
      c.build = [f = f](const V& x, const A& a) { return f(x[0], a[0]); };
      c.compareGradients = std::string(name) != "segmentMax";
      push(c);
    }
    c.aux = [](const Shapes& s) { return A{randomIndex({s[0][0]}, std::max<int64_t>(5, s[0][0] / 15), 52)}; };
    const std::pair<const char*, Variable (*)(const Variable&, const Tensor&, int64_t)> scatters[] = {
        {"scatterSum", scatterSum}, {"scatterMean", scatterMean}, {"scatterMax", scatterMax}};
    for (const auto& [name, f] : scatters) {
      c.name = name;
      c.ops = {name};
      c.build = [f = f](const V& x, const A& a) { return f(x[0], a[0], std::max<int64_t>(5, x[0].dim(0) / 15)); };
      c.compareGradients = std::string(name) != "scatterMax";
      push(c);
    }
    // PNA's min, var and std (some targets empty, some with one row: var exactly 0, std clamped).
    const std::pair<const char*, Variable (*)(const Variable&, const Tensor&, int64_t)> stats[] = {
        {"scatterMin", scatterMin}, {"scatterVar", scatterVar},
        {"scatterStd", [](const Variable& x, const Tensor& i, int64_t n) { return scatterStd(x, i, n); }}};
    for (const auto& [name, f] : stats) {
      c.name = name;
      c.ops = {name};
      c.build = [f = f](const V& x, const A& a) { return f(x[0], a[0], std::max<int64_t>(5, x[0].dim(0) / 15)); };
      c.compareGradients = std::string(name) != "scatterMin";
      push(c);
    }
    c.name = "scatterMultiAggregate";
    c.ops = {"scatterMultiAggregate"};
    c.build = [](const V& x, const A& a) {
      return scatterMultiAggregate(x[0], a[0], std::max<int64_t>(5, x[0].dim(0) / 15),
                                   {"mean", "min", "max", "std", "var", "sum"});
    };
    c.compareGradients = false;  // min and max
    push(c);
  }

  {
    // PNA's messages target[dst] + source[src] + edge made inside the aggregation (gnn/ops/PnaAggregate.h).
    OpCase c;
    c.name = "pnaAggregate";
    c.ops = {"pnaAggregate"};
    c.shapes = {{5, 3}, {4, 3}, {11, 3}};  // target [N, F], source [S, F], edge [E, F]
    c.largeShapes = {{2000, 16}, {1500, 16}, {30000, 16}};
    c.aux = [](const Shapes& s) {
      return A{randomIndex({s[2][0]}, s[1][0], 61), randomIndex({s[2][0]}, s[0][0] - 1, 62)};  // last: none
    };
    const std::vector<std::string> all = {"mean", "min", "max", "std", "var", "sum"};
    c.build = [all](const V& x, const A& a) {
      return pnaAggregate(x[0], x[1], x[2], a[0], a[1], x[0].dim(0), all);
    };
    c.compareGradients = false;  // min and max
    push(c);
    c.name = "pnaAggregate_edge_only";  // whole messages (DegreeScalerAggregation's path)
    c.shapes = {{11, 3}};
    c.largeShapes = {{30000, 16}};
    c.aux = [](const Shapes& s) { return A{randomIndex({s[0][0]}, 6, 63)}; };
    c.build = [all](const V& x, const A& a) { return pnaAggregate({}, {}, x[0], Tensor(), a[0], 7, all); };
    push(c);
    // No min or max: gradients compared in float32 too (about 15 messages a node, so that no std is of nearly
    // equal messages, where 1 / (2 std) magnifies float32's rounding of the variance).
    c.name = "pnaAggregate_mean_std";
    c.shapes = {{5, 3}, {4, 3}};
    c.largeShapes = {{2000, 16}, {1500, 16}};
    c.aux = [](const Shapes& s) {
      return A{randomIndex({15 * s[0][0]}, s[1][0], 64), randomIndex({15 * s[0][0]}, s[0][0], 65)};
    };
    c.build = [](const V& x, const A& a) {
      return pnaAggregate(x[0], x[1], {}, a[0], a[1], x[0].dim(0), {"mean", "std"});
    };
    c.compareGradients = true;
    push(c);
    c.name = "pnaAggregatePaired";  // [target | source] side by side, the target's bias, edge terms
    c.ops = {"pnaAggregate"};
    c.shapes = {{6, 6}, {3}, {11, 3}};
    c.largeShapes = {{2000, 32}, {16}, {30000, 16}};
    c.aux = [](const Shapes& s) {
      return A{randomIndex({s[2][0]}, s[0][0], 66), randomIndex({s[2][0]}, s[0][0] - 1, 67)};
    };
    c.build = [all](const V& x, const A& a) { return pnaAggregatePaired(x[0], x[1], x[2], a[0], a[1], all); };
    c.compareGradients = false;  // min and max
    push(c);
  }
  {
    // PNAConv's scalers folded into its post-layer (gnn/ops/ScaledBlockSum.h): an identity block and two scaled.
    OpCase c;
    c.name = "scaledBlockSum";
    c.ops = {"scaledBlockSum"};
    c.shapes = {{5, 3}, {5, 9}, {5, 1}, {5}};
    c.largeShapes = {{3000, 16}, {3000, 48}, {3000, 1}, {3000}};
    c.build = [](const V& x, const A&) { return scaledBlockSum(x[0], x[1], {Variable(), x[2], x[3]}); };
    push(c);
  }
  {
    OpCase c;
    c.name = "reluMessageSum";
    c.ops = {"reluMessageSum"};
    c.shapes = {{4, 3}, {7, 3}};  // x [N, F], edge features [E, F]
    c.largeShapes = {{2000, 16}, {30000, 16}};
    c.aux = [](const Shapes& s) { return A{edgeIndex(s[1][0], s[0][0], 53)}; };
    c.build = [](const V& x, const A& a) { return reluMessageSum(x[0], x[1], a[0], x[0].dim(0)); };
    push(c);
    c.name = "reluMessageSum_self";
    c.build = [](const V& x, const A& a) { return reluMessageSum(x[0], x[1], a[0], x[0].dim(0), 1.5); };
    push(c);
  }
  {
    OpCase c;
    c.name = "filterMessageSum";
    c.ops = {"filterMessageSum"};
    c.shapes = {{4, 3}, {7, 3}};  // x [N, F], filters [E, F]
    c.largeShapes = {{2000, 16}, {30000, 16}};
    c.aux = [](const Shapes& s) { return A{edgeIndex(s[1][0], s[0][0], 57)}; };
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[0], x[0].dim(0)); };
    push(c);
    c.name = "filterMessageSum_more_targets";  // targets beyond x's rows get their own (possibly empty) sums
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[0], x[0].dim(0) + 2); };
    push(c);
    c.name = "filterMessageSum_indexed";  // E edges read the rows of P = E filters in a shuffled, repeating order
    c.aux = [](const Shapes& s) { return A{edgeIndex(s[1][0], s[0][0], 57), randomIndex({s[1][0]}, s[1][0], 58)}; };
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[0], x[0].dim(0), a[1]); };
    push(c);
    // The filter rows scaled (SchNet's cutoff) inside the op: gradients for x, the filters and the scale.
    c.name = "filterMessageSum_scaled";
    c.shapes = {{4, 3}, {7, 3}, {7}};
    c.largeShapes = {{2000, 16}, {30000, 16}, {30000}};
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[0], x[0].dim(0), a[1], x[2]); };
    push(c);
    c.name = "filterMessageSum_scaled_plain";  // one filter row per edge
    c.aux = [](const Shapes& s) { return A{edgeIndex(s[1][0], s[0][0], 57)}; };
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[0], x[0].dim(0), Tensor(), x[2]); };
    push(c);
    // Over a messagePlan built once (SchNet's interactions share one), indexed and per edge.
    c.name = "filterMessageSum_planned";
    c.aux = [](const Shapes& s) {
      Tensor e = edgeIndex(s[1][0], s[0][0], 57), r = randomIndex({s[1][0]}, s[1][0], 58);
      return A{e, r, messagePlan(e, s[0][0] + 1, s[0][0], r, s[1][0])};
    };
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[2], x[2]); };
    push(c);
    c.name = "filterMessageSum_planned_plain";
    c.aux = [](const Shapes& s) {
      Tensor e = edgeIndex(s[1][0], s[0][0], 57);
      return A{e, messagePlan(e, s[0][0], s[0][0])};
    };
    c.build = [](const V& x, const A& a) { return filterMessageSum(x[0], x[1], a[1], x[2]); };
    push(c);
  }
  {
    // A [M, K] from coordinates (aux: rows, columns, values, {M}), built in x's dtype.
    OpCase c;
    c.name = "spmm";
    c.ops = {"spmm"};
    c.shapes = {{5, 3}};
    c.largeShapes = {{3000, 32}};
    c.aux = [](const Shapes& s) {
      const int64_t k = s[0][0], m = k + 1, nnz = 4 * k;
      return A{randomIndex({nnz}, m, 54), randomIndex({nnz}, k, 55), randomValues({nnz}, 56),
               Tensor::fromVector<int64_t>({m})};
    };
    c.build = [](const V& x, const A& a) {
      const int64_t nnz = a[0].numel();
      std::vector<int64_t> rows(a[0].data<int64_t>(), a[0].data<int64_t>() + nnz);
      std::vector<int64_t> cols(a[1].data<int64_t>(), a[1].data<int64_t>() + nnz);
      std::vector<double> vals(a[2].data<double>(), a[2].data<double>() + nnz);
      return spmm(SparseMatrix::fromCoo(a[3].data<int64_t>()[0], x[0].dim(0), rows, cols, vals, x[0].dtype()), x[0]);
    };
    push(c);
  }

  // ---- shapes and dtypes ----
  {
    OpCase c = unaryCase("reshape", "reshape", [](const Variable& x) { return reshape(x, {-1, 2}); });
    c.parallel = false;  // a view: no loop at all
    push(c);
    c.parallel = true;
    c = unaryCase("transpose_3d", "transpose", [](const Variable& x) { return transpose(x, 0, 2); });
    c.shapes = {{2, 3, 4}};
    c.largeShapes = {{64, 80, 60}};
    push(c);
    c = unaryCase("transpose_last2_4d", "transpose", [](const Variable& x) { return transpose(x, -1, -2); });
    c.shapes = {{2, 2, 3, 4}};
    c.largeShapes = {{8, 8, 64, 64}};
    push(c);
    c = unaryCase("permute_4d", "permute", [](const Variable& x) { return permute(x, {2, 0, 3, 1}); });
    c.shapes = {{2, 3, 4, 5}};
    c.largeShapes = {{8, 16, 48, 50}};
    push(c);
    // Casts are exact up to rounding: a wide finite-difference step sees through the rounding steps.
    c = unaryCase("cast_float32", "cast", [](const Variable& x) { return cast(cast(x, DType::F32), DType::F64); });
    c.ops = {"cast", "cast"};
    c.gradEps = 1e-2;
    c.gradTol = 1e-5;
    push(c);
    c = unaryCase("cast_float16", "cast", [](const Variable& x) { return cast(cast(x, DType::F16), DType::F64); });
    c.ops = {"cast", "cast"};
    c.gradEps = 0.1;
    c.gradTol = 2e-2;
    c.tolerance = 1e-3;  // float16's spacing near 1 is 2^-10
    push(c);
  }

  // ---- batched products, softmax ----
  push(binaryCase("bmm_3d", "bmm", gnn::bmm, {{2, 3, 4}, {2, 4, 5}}, {{4, 128, 64}, {4, 64, 96}}));
  push(binaryCase("bmm_4d", "bmm", gnn::bmm, {{2, 2, 3, 4}, {2, 2, 4, 3}}, {{4, 8, 32, 16}, {4, 8, 16, 32}}));
  push(binaryCase("bmmNT_3d", "bmmNT", gnn::bmmNT, {{2, 3, 4}, {2, 5, 4}}, {{4, 128, 64}, {4, 96, 64}}));
  push(binaryCase("bmmNT_4d", "bmmNT", gnn::bmmNT, {{2, 2, 3, 4}, {2, 2, 3, 4}}, {{4, 8, 32, 16}, {4, 8, 32, 16}}));
  {
    OpCase c = unaryCase("softmax_rows", "softmax", [](const Variable& x) { return softmax(x); }, -3, 3);
    c.shapes = {{4, 5}};
    c.largeShapes = {{6000, 40}};
    push(c);
    const Shape small{2, 2, 3, 4}, large{8, 8, 32, 32};
    c = binaryCase("softmax_bias", "softmax", [](const Variable& x, const Variable& b) { return softmax(x, -1, b); },
                   {small, small}, {large, large});
    c.lo = -3;
    c.hi = 3;
    push(c);
    c.name = "softmax_biasPerHead";
    c.shapes = {small, {1, 2, 3, 4}};
    c.largeShapes = {large, {1, 8, 32, 32}};
    push(c);
    c.name = "softmax_biasPerGraph";
    c.shapes = {small, {2, 1, 3, 4}};
    c.largeShapes = {large, {8, 1, 32, 32}};
    push(c);
    c.name = "softmax_biasRank3";  // [H, N, N] against [B, H, N, N]: leading ones implied
    c.shapes = {small, {2, 3, 4}};
    c.largeShapes = {large, {8, 32, 32}};
    push(c);
    // Mask [B, 1, N, N] (shared by the heads), about a quarter masked out, and row 0 of each graph fully masked.
    c.name = "softmax_biasMask";
    c.shapes = {small, small};
    c.largeShapes = {large, large};
    c.aux = [](const Shapes& s) {
      const Shape& x = s[0];
      Tensor m = randomMask({x[0], 1, x[2], x[3]}, 0.75, 61);
      for (int64_t b = 0; b < x[0]; ++b)
        for (int64_t j = 0; j < x[3]; ++j) m.data<uint8_t>()[b * x[2] * x[3] + j] = 0;
      return A{m};
    };
    c.build = [](const V& x, const A& a) { return softmax(x[0], -1, x[1], a[0]); };
    push(c);
    // Key padding [B, 1, 1, N], no bias.
    c = unaryCase("softmax_keyMask", "softmax", [](const Variable& x) { return x; }, -3, 3);
    c.shapes = {small};
    c.largeShapes = {large};
    c.aux = [](const Shapes& s) { return A{randomMask({s[0][0], 1, 1, s[0][3]}, 0.7, 62)}; };
    c.build = [](const V& x, const A& a) { return softmax(x[0], -1, Variable(), a[0]); };
    push(c);
  }

  // ---- fused multi-head attention: 4 heads; small [2, 5, 24] (d = 2), large [16, 31, 240] (d = 20) ----
  {
    const Shape small{2, 5, 24}, large{16, 31, 240};
    const Shape smallBias{2, 4, 5, 5}, largeBias{16, 4, 31, 31};
    OpCase c = unaryCase(
        "multiHeadAttention", "multiHeadAttention",
        [](const Variable& x) { return multiHeadAttention(x, 4); }, -2, 2);
    c.shapes = {small};
    c.largeShapes = {large};
    push(c);
    // Bias and key mask; the last sequence has every key masked (its rows are zero).
    c.name = "multiHeadAttention_biasMask";
    c.shapes = {small, smallBias};
    c.largeShapes = {large, largeBias};
    c.aux = [](const Shapes& s) {
      Tensor m = randomMask({s[0][0], s[0][1]}, 0.7, 63);
      uint8_t* mp = m.data<uint8_t>();
      for (int64_t j = 0; j < s[0][1]; ++j) mp[(s[0][0] - 1) * s[0][1] + j] = 0;
      mp[0] = 1;
      return A{m};
    };
    c.build = [](const V& x, const A& a) { return multiHeadAttention(x[0], 4, x[1], a[0]); };
    push(c);
    // Training with attention dropout: the same stream on every call (the key set first), as dropout_context.
    c.name = "multiHeadAttention_dropout";
    c.build = [](const V& x, const A& a) {
      ExecutionContext::current().setRandomKey({7, 3, 1});
      return multiHeadAttention(x[0], 4, x[1], a[0], 0.3, true);
    };
    push(c);
    // Packed sequences (rows of real positions only): sequences of up to T rows, every third one empty,
    // the last taking what is left; bias and dropout as above.
    c.name = "multiHeadAttentionPacked_dropout";
    c.shapes = {{9, 24}, {3, 4, 5, 5}};
    c.largeShapes = {{320, 240}, {16, 4, 31, 31}};
    c.aux = [](const Shapes& s) {
      const int64_t rows = s[0][0], g = s[1][0], t = s[1][2];
      std::vector<int64_t> ptr{0};
      for (int64_t k = 0; k < g; ++k)
        ptr.push_back(k + 1 == g ? rows : ptr.back() + (k % 3 == 1 ? 0 : std::min(t, rows - ptr.back())));
      return A{Tensor::fromVector(ptr, {g + 1})};
    };
    c.build = [](const V& x, const A& a) {
      ExecutionContext::current().setRandomKey({7, 3, 1});
      return multiHeadAttentionPacked(x[0], 4, a[0], x[1].dim(2), x[1], 0.3, true);
    };
    push(c);
  }

  // ---- graph transformers: dense per-graph blocks, Graphormer's attention bias ----
  {
    // Graphs of 3, 2 and N - 5 nodes (small) or 100 graphs of N / 100 (large); the last graph is padding.
    auto denseAux = [](const Shapes& s) {
      const int64_t n = s[0][0];
      std::vector<int64_t> ptr = n < 100 ? std::vector<int64_t>{0, 3, 5, n} : std::vector<int64_t>{};
      if (ptr.empty())
        for (int64_t g = 0; g <= 100; ++g) ptr.push_back(g * n / 100);
      std::vector<uint8_t> mask(ptr.size() - 1, 1);
      mask.back() = 0;
      return A{Tensor::fromVector(ptr), Tensor::fromVector(mask)};
    };
    auto slots = [](const A& a) {  // the largest real graph, plus one spare slot
      const int64_t* p = a[0].data<int64_t>();
      int64_t m = 0;
      for (int64_t g = 0; g + 1 < a[0].numel(); ++g)
        if (a[1].data<uint8_t>()[g]) m = std::max(m, p[g + 1] - p[g]);
      return m + 1;
    };
    OpCase c;
    c.name = "toDenseBatch";
    c.ops = {"toDenseBatch"};
    c.shapes = {{7, 3}};
    c.largeShapes = {{3000, 64}};
    c.aux = denseAux;
    c.build = [slots](const V& x, const A& a) { return toDenseBatch(x[0], a[0], a[1], slots(a)); };
    push(c);
    c.name = "toDenseBatch_leading";
    c.shapes = {{7, 3}, {3}};
    c.largeShapes = {{3000, 64}, {64}};
    c.build = [slots](const V& x, const A& a) { return toDenseBatch(x[0], a[0], a[1], slots(a), x[1]); };
    push(c);
  }
  push(binaryCase("graphAttentionBias", "graphAttentionBias", gnn::graphAttentionBias, {{2, 3, 3, 2}, {2}},
                  {{64, 30, 30, 8}, {8}}));
  {
    // Pairs at hop distances -1 (padding), 0, 1 .. 7 and 510 (unreachable); a pair at distance s has its
    // first min(s, K') hops, one feature of some hops missing too.
    OpCase c;
    c.name = "multiHopEdgeBias";
    c.ops = {"multiHopEdgeBias"};
    c.shapes = {{6, 2}, {2, 2, 2}};
    c.largeShapes = {{100, 8}, {5, 8, 8}};
    c.aux = [](const Shapes& s) {
      const int64_t V = s[0][0], K = s[1][0], Kin = K + 1, Fe = 3;
      const Shape pairs = V < 10 ? Shape{3, 2} : Shape{400, 30};
      Generator g(64);
      Tensor sp(pairs, DType::I64), ei({pairs[0], pairs[1], Kin, Fe}, DType::I64);
      const int64_t distances[] = {-1, 0, 1, 2, 3, 4, 5, 6, 7, 510};
      for (int64_t p = 0; p < sp.numel(); ++p) {
        const int64_t d = p < 10 ? distances[p] : distances[g.nextBelow(10)];
        sp.data<int64_t>()[p] = d;
        for (int64_t k = 0; k < Kin; ++k)
          for (int64_t f = 0; f < Fe; ++f) {
            const bool present = d >= 1 && d < 510 && k < d && g.nextBelow(8) != 0;
            ei.data<int64_t>()[(p * Kin + k) * Fe + f] = present ? static_cast<int64_t>(g.nextBelow(V)) : -1;
          }
      }
      return A{ei, sp};
    };
    c.build = [](const V& x, const A& a) { return multiHopEdgeBias(x[0], x[1], a[0], a[1]); };
    push(c);
  }

  // ---- elementwise math, reductions along an axis ----
  push(unaryCase("exp", "exp", [](const Variable& x) { return gnn::exp(x); }, -3, 3));
  push(unaryCase("log", "log", [](const Variable& x) { return gnn::log(x); }, 0.2, 3));
  push(unaryCase("sin", "sin", [](const Variable& x) { return gnn::sin(x); }, -4, 4));
  push(unaryCase("cos", "cos", [](const Variable& x) { return gnn::cos(x); }, -4, 4));
  push(unaryCase("sqrt", "sqrt", [](const Variable& x) { return gnn::sqrt(x); }, 0.2, 3));
  push(unaryCase("pow_2_5", "pow", [](const Variable& x) { return gnn::pow(x, 2.5); }, 0.2, 2));
  push(unaryCase("pow_minus1_5", "pow", [](const Variable& x) { return gnn::pow(x, -1.5); }, 0.5, 2));
  push(unaryCase("pow_3_negative", "pow", [](const Variable& x) { return gnn::pow(x, 3); }, -2, 2));
  push(unaryCase("neg", "neg", [](const Variable& x) { return neg(x); }));
  push(unaryCase("reciprocal", "reciprocal", [](const Variable& x) { return reciprocal(x); }, 0.5, 2));
  {
    OpCase c = unaryCase("sumAxis_first", "sumAxis", [](const Variable& x) { return sumAxis(x, 0); });
    c.shapes = {{3, 4, 5}};
    c.largeShapes = {{60, 80, 64}};
    push(c);
    c = unaryCase("sumAxis_middle_keepDim", "sumAxis", [](const Variable& x) { return sumAxis(x, 1, true); });
    c.shapes = {{3, 4, 5}};
    c.largeShapes = {{60, 80, 64}};
    push(c);
    c = unaryCase("sumAxis_last_4d", "sumAxis", [](const Variable& x) { return sumAxis(x, -1); });
    c.shapes = {{2, 3, 4, 5}};
    c.largeShapes = {{8, 8, 80, 60}};
    push(c);
    c = unaryCase("meanAxis_middle", "meanAxis", [](const Variable& x) { return meanAxis(x, 1); });
    c.shapes = {{3, 4, 5}};
    c.largeShapes = {{60, 80, 64}};
    push(c);
    c = unaryCase("meanAxis_last_keepDim", "meanAxis", [](const Variable& x) { return meanAxis(x, -1, true); });
    push(c);
  }
  push(unaryCase("normalizeRows", "normalizeRows", [](const Variable& x) { return normalizeRows(x); }));
  // eps above some rows' norms (5 values in [-1, 1]): those rows take the clamped branch (divided by eps).
  push(unaryCase("normalizeRows_clamped", "normalizeRows", [](const Variable& x) { return normalizeRows(x, 1.2); }));
  push(binaryCase("scaleByScalar", "scaleByScalar", [](const Variable& a, const Variable& s) {
    return scaleByScalar(a, s);
  }, {{6, 5}, {1}}, {{600, 512}, {1}}));
  {
    // gates [B, T, 4H], weight_hh [4H, H], bias_hh [4H]; both directions, with and without the bias.
    OpCase c;
    c.name = "lstmRecurrence";
    c.ops = {"lstmRecurrence"};
    c.shapes = {{3, 4, 8}, {8, 2}, {8}};
    c.largeShapes = {{2000, 3, 64}, {64, 16}, {64}};
    c.build = [](const V& x, const A&) { return lstmRecurrence(x[0], x[1], x[2]); };
    push(c);
    c.name = "lstmRecurrence_reverse_noBias";
    c.shapes = {{3, 4, 8}, {8, 2}};
    c.largeShapes = {{2000, 3, 64}, {64, 16}};
    c.build = [](const V& x, const A&) { return lstmRecurrence(x[0], x[1], Variable(), true); };
    push(c);
  }

  // ---- geometry ----
  {
    OpCase c;
    c.name = "edgeDistances";
    c.ops = {"edgeDistances"};
    c.shapes = {{5, 3}};
    c.largeShapes = {{2000, 3}};
    c.aux = [](const Shapes& s) { return A{edgeIndex(s[0][0] * 2, s[0][0], 71)}; };  // edge 0 is a self-loop
    c.build = [](const V& x, const A& a) { return edgeDistances(x[0], a[0]); };
    push(c);
    c = unaryCase("pairwiseDistances_batched", "pairwiseDistances", [](const Variable& x) { return pairwiseDistances(x); });
    c.shapes = {{2, 4, 3}};
    c.largeShapes = {{8, 128, 3}};
    push(c);
    c = unaryCase("gaussianSmearing", "gaussianSmearing", [](const Variable& d) {
      // SchNet's layout: centres evenly spaced on [0, 5], coeff = -0.5 / spacing^2.
      std::vector<double> mu;
      for (int k = 0; k < 8; ++k) mu.push_back(5.0 * k / 7);
      return gaussianSmearing(d, mu, -0.5 / ((5.0 / 7) * (5.0 / 7)));
    }, 0, 6);
    c.shapes = {{9}};
    c.largeShapes = {{40000}};
    push(c);
    c = unaryCase("cosineCutoff", "cosineCutoff", [](const Variable& d) { return cosineCutoff(d, 10.0); }, 0, 13);
    c.shapes = {{4, 5}};
    c.largeShapes = {{400, 512}};
    push(c);
    c = unaryCase("pairwiseDistances_2d", "pairwiseDistances", [](const Variable& x) { return pairwiseDistances(x); });
    c.shapes = {{5, 3}};
    c.largeShapes = {{300, 3}};
    push(c);
  }
  {
    // GAT's and GATv2's attention (gnn/ops/GraphAttention.h) over random edges (edge 0 a self-loop, masked out
    // when self-loops are added), with and without the edge and added-loop terms, and with dropout (a fixed key).
    auto edges = [](const Shapes& s) { return A{edgeIndex(s[0][0] < 100 ? 13 : 30000, s[0][0], 61)}; };
    OpCase c;
    c.ops = {"gatAttention"};
    c.aux = edges;
    c.name = "gatAttention";
    c.shapes = {{5, 6}, {5, 2}, {5, 2}};  // h [N, heads * C], aSrc, aDst [N, heads]
    c.largeShapes = {{2000, 48}, {2000, 3}, {2000, 3}};
    c.build = [](const V& x, const A& a) { return gatAttention(x[0], x[1], x[2], a[0]); };
    push(c);
    c.name = "gatAttention_no_self_loops";
    c.build = [](const V& x, const A& a) {
      GraphAttentionOptions o;
      o.selfLoops = false;
      o.negativeSlope = 0.1;
      return gatAttention(x[0], x[1], x[2], a[0], Variable(), Variable(), o);
    };
    push(c);
    c.name = "gatAttention_dropout";
    c.build = [](const V& x, const A& a) {
      ExecutionContext::current().setRandomKey({7, 3, 1});  // the same mask on every call
      GraphAttentionOptions o;
      o.dropout = 0.3;
      o.training = true;
      return gatAttention(x[0], x[1], x[2], a[0], Variable(), Variable(), o);
    };
    push(c);
    c.name = "gatAttention_mean_heads_dropout";  // PyG's concat=False: the heads averaged inside the op
    c.build = [](const V& x, const A& a) {
      ExecutionContext::current().setRandomKey({7, 3, 4});
      GraphAttentionOptions o;
      o.dropout = 0.3;
      o.training = true;
      o.meanHeads = true;
      return gatAttention(x[0], x[1], x[2], a[0], Variable(), Variable(), o);
    };
    push(c);
    c.name = "gatAttention_mean_heads_bias";  // bias [C] added inside, after the mean over the heads
    c.shapes = {{5, 6}, {5, 2}, {5, 2}, {3}};
    c.largeShapes = {{2000, 48}, {2000, 3}, {2000, 3}, {16}};
    c.build = [](const V& x, const A& a) {
      GraphAttentionOptions o;
      o.meanHeads = true;
      return gatAttention(x[0], x[1], x[2], a[0], Variable(), Variable(), o, x[3]);
    };
    push(c);
    c.name = "gatAttention_edges";  // aEdge [E, heads], aLoop [N, heads]
    c.shapes = {{5, 6}, {5, 2}, {5, 2}, {13, 2}, {5, 2}};
    c.largeShapes = {{2000, 48}, {2000, 3}, {2000, 3}, {30000, 3}, {2000, 3}};
    c.build = [](const V& x, const A& a) { return gatAttention(x[0], x[1], x[2], a[0], x[3], x[4]); };
    push(c);
    c.ops = {"gatv2Attention"};
    c.name = "gatv2Attention";
    c.shapes = {{5, 6}, {5, 6}, {2, 3}};  // xl, xr [N, heads * C], att [heads, C]
    c.largeShapes = {{2000, 48}, {2000, 48}, {3, 16}};
    c.build = [](const V& x, const A& a) { return gatv2Attention(x[0], x[1], x[2], a[0]); };
    push(c);
    c.name = "gatv2Attention_shared";  // xl and xr one Variable (share_weights)
    c.shapes = {{5, 6}, {2, 3}};
    c.largeShapes = {{2000, 48}, {3, 16}};
    c.build = [](const V& x, const A& a) { return gatv2Attention(x[0], x[0], x[1], a[0]); };
    push(c);
    c.name = "gatv2Attention_edges_dropout";  // edge terms [E, heads * C], loop terms [N, heads * C]
    c.shapes = {{5, 6}, {5, 6}, {2, 3}, {13, 6}, {5, 6}};
    c.largeShapes = {{2000, 48}, {2000, 48}, {3, 16}, {30000, 48}, {2000, 48}};
    c.build = [](const V& x, const A& a) {
      ExecutionContext::current().setRandomKey({7, 3, 2});
      GraphAttentionOptions o;
      o.dropout = 0.2;
      o.training = true;
      o.negativeSlope = 0.3;
      return gatv2Attention(x[0], x[1], x[2], a[0], x[3], x[4], o);
    };
    push(c);
    c.name = "gatv2Attention_mean_heads";
    c.shapes = {{5, 6}, {5, 6}, {2, 3}};
    c.largeShapes = {{2000, 48}, {2000, 48}, {3, 16}};
    c.build = [](const V& x, const A& a) {
      GraphAttentionOptions o;
      o.meanHeads = true;
      return gatv2Attention(x[0], x[1], x[2], a[0], Variable(), Variable(), o);
    };
    push(c);
    c.name = "gatv2Attention_no_self_loops";
    c.shapes = {{5, 6}, {5, 6}, {2, 3}, {13, 6}};
    c.largeShapes = {{2000, 48}, {2000, 48}, {3, 16}, {30000, 48}};
    c.build = [](const V& x, const A& a) {
      GraphAttentionOptions o;
      o.selfLoops = false;
      return gatv2Attention(x[0], x[1], x[2], a[0], x[3], Variable(), o);
    };
    push(c);
    c = binaryCase("headDot", "headDot", [](const Variable& x, const Variable& a) { return headDot(x, a); },
                   {{5, 6}, {2, 3}}, {{4000, 64}, {4, 16}});
    push(c);
    for (const char* reduce : {"mean", "add", "max", "min"}) {
      c = unaryCase(std::string("selfLoopAttr_") + reduce, "selfLoopAttr", [reduce](const Variable& e) {
        return selfLoopAttr(e, edgeIndex(e.dim(0), e.dim(0) < 100 ? 5 : 2000, 62), e.dim(0) < 100 ? 5 : 2000, reduce);
      });
      c.shapes = {{13, 3}};
      c.largeShapes = {{30000, 8}};
      c.compareGradients = std::string(reduce) == "mean" || std::string(reduce) == "add";  // max, min: ties
      push(c);
    }
  }
  return t;
}

}  // namespace

const std::vector<OpCase>& opTable() {
  static const std::vector<OpCase> table = makeTable();
  return table;
}

OpInputs makeInputs(const OpCase& c, bool large, DType dtype) {
  const std::vector<Shape>& shapes = large && !c.largeShapes.empty() ? c.largeShapes : c.shapes;
  OpInputs in;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Tensor x = randomValues(shapes[k], 1000 + k, c.lo, c.hi);
    in.floats.push_back(dtype == DType::F64 ? x : x.to(dtype));
  }
  if (c.aux) in.aux = c.aux(shapes);
  return in;
}

std::vector<Variable> variables(const std::vector<Tensor>& tensors, bool requiresGrad) {
  std::vector<Variable> v;
  for (const Tensor& t : tensors) v.emplace_back(t.clone(), requiresGrad);
  return v;
}

}  // namespace gnn::testing
