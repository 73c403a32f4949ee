// Differentiable ops on Variables. Each op checks its inputs (std::invalid_argument naming the shapes),
// computes the forward value and records itself in the same function (see ops/*.cpp): its OpInfo (name,
// FLOPs, bytes), the tensors its backward saves, and the backward closure.
// Every op works on float32 and float64 (gradient checks run in float64). Index arguments are int64.
// Parallel ops split work into fixed-size chunks so results are bit-identical for any thread count.
#pragma once
#include "gnn/autograd/Variable.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/SparseMatrix.h"

namespace gnn {

// ---- dense algebra (ops/LinearOps.cpp; products through ops/Product.h) ----
/// [M, K] x [K, N] -> [M, N].
Variable matmul(const Variable& a, const Variable& b);
/// a [M, K] x b^T where b is [N, K] -> [M, N] (Linear's weight layout [out, in]).
Variable matmulNT(const Variable& a, const Variable& b);
/// Linear layer x [M, K] -> x W^T + b with weight [N, K] and bias [N] (undefined = none), in one pass:
/// the bias is written into each output block before the product accumulates onto it.
Variable linear(const Variable& x, const Variable& weight, const Variable& bias = Variable());
/// a + b: same shape, or b of shape [N] / [1, N] added to every row of a [M, N] (bias).
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
/// Elementwise a * b: same shape, or b [N] / [1, N] broadcast over rows, or b [M, 1] broadcast over columns.
Variable mul(const Variable& a, const Variable& b);
Variable scale(const Variable& a, double s);
/// a * s for a one-element s ([] or [1], a's dtype; ops/ScaleByScalarOps.cpp) that may take a gradient:
/// sum(g * a), e.g. GINConv's trained eps.
Variable scaleByScalar(const Variable& a, const Variable& s);
/// Concatenation along dimension 1 of rank-2 variables with equal row counts.
Variable concatCols(const std::vector<Variable>& parts);
/// Concatenation along dimension 0 of rank-2 variables with equal column counts (torch.cat(parts, 0)): the parts'
/// rows laid end to end are one [1, rows x cols] row each, joined by concatCols (one copy, its backward).
Variable concatRows(const std::vector<Variable>& parts);
/// Columns [begin, end) of a [M, C] matrix (a copy; ops/SliceColsOps.cpp): x[:, begin:end].
Variable sliceCols(const Variable& a, int64_t begin, int64_t end);
/// Rows [begin, end) of a float tensor (a copy, ops/SliceRowsOps.cpp; a itself for all its rows): x[begin:end].
Variable sliceRows(const Variable& a, int64_t begin, int64_t end);
/// Sum of all elements -> scalar [].
Variable sum(const Variable& a);
/// Mean of all elements -> scalar [].
Variable mean(const Variable& a);

// ---- elementwise (ops/ElementwiseOps.cpp) ----
Variable relu(const Variable& a);
/// ELU with alpha (PyTorch default 1).
Variable elu(const Variable& a, double alpha = 1.0);
/// max(x, 0) + negativeSlope * min(x, 0) (torch's leaky_relu; GAT's attention uses slope 0.2).
Variable leakyRelu(const Variable& a, double negativeSlope = 0.01);
/// GELU, exact form x * Phi(x) (PyTorch's default, approximate='none').
Variable gelu(const Variable& a);
Variable tanh(const Variable& a);
Variable sigmoid(const Variable& a);
/// Softplus log(1 + exp(beta x)) / beta, linear above `threshold` as in PyTorch.
Variable softplus(const Variable& a, double beta = 1.0, double threshold = 20.0);
/// Shifted softplus log(1 + e^x) - log 2 (SchNet's activation).
Variable shiftedSoftplus(const Variable& a);
/// Dropout's keep mask of the given shape: 0 with probability p, else 1/(1-p). Element i's draw depends only
/// on gen's seed and i (16-bit resolution), never on the thread count. Advances gen.
Tensor dropoutMask(const Shape& shape, DType dtype, double p, Generator& gen);
/// Inverted dropout: zero with probability p, scale survivors by 1/(1-p). Identity when !training or p == 0.
/// The mask's stream comes from the current ExecutionContext: its random key (seed, step, micro-batch) and
/// this op's index among the random ops since the key was set, so masks do not depend on what ran before
/// the step or on other threads.
Variable dropout(const Variable& a, double p, bool training);
/// Same with an explicit generator (advanced by the draw).
Variable dropout(const Variable& a, double p, Generator& gen, bool training);
/// Inverted dropout on the non-zeros of a constant sparse matrix (bag-of-words features), its mask drawn from the
/// current ExecutionContext's random stream (one random op, as dropout). Dropping an explicit zero changes
/// nothing, so this equals dense dropout on the matrix in distribution, at a fraction of the cost.
SparseMatrix dropoutValues(const SparseMatrix& x, double p);
/// dropout(relu(a), p, training), the same numbers and random stream, as one op (ops/ReluDropoutOps.cpp): its
/// backward keeps a byte per element instead of relu's output and dropout's float mask.
Variable reluDropout(const Variable& a, double p, bool training);
/// Same with an explicit generator (advanced by the draw).
Variable reluDropout(const Variable& a, double p, Generator& gen, bool training);

// ---- normalisation, embeddings, softmax (ops/NnOps.cpp) ----
/// Row-wise log-softmax of [M, C].
Variable logSoftmax(const Variable& a);
/// Layer norm over the last dimension of [M, F] with affine gamma, beta [F].
Variable layerNorm(const Variable& x, const Variable& gamma, const Variable& beta, double eps = 1e-5);
/// relu(layerNorm(x, gamma, beta, eps)) in one pass.
Variable layerNormRelu(const Variable& x, const Variable& gamma, const Variable& beta, double eps = 1e-5);
/// Batch normalisation of x [M, F] per column in training (ops/BatchNormOps.cpp): the mean and biased
/// variance over the rows whose rowMask (uint8 [M], 1 = real; undefined = every row) is 1, then
/// (x - mean) / sqrt(var + eps) * gamma + beta for every row (padding rows normalised with the real rows'
/// statistics, never entering them). The gradient flows through the statistics. batchMean, batchVar (optional)
/// receive the statistics [F] (for running averages). Deterministic for any thread count and any padding.
Variable maskedBatchNorm(const Variable& x, const Tensor& rowMask, const Variable& gamma, const Variable& beta,
                         double eps = 1e-5, Tensor* batchMean = nullptr, Tensor* batchVar = nullptr);
/// Batch normalisation with fixed statistics (evaluation): (x - mean) / sqrt(var + eps) * gamma + beta.
Variable batchNormInference(const Variable& x, const Tensor& mean, const Tensor& var, const Variable& gamma,
                            const Variable& beta, double eps = 1e-5);
/// segmentNorm's options: statistics per segment and column (GraphNorm, InstanceNorm), or one mean and variance
/// per segment over all its rows and columns (wholeSegment: PyG's LayerNorm mode "graph"); eps inside the
/// square root, or added to the standard deviation (epsOnStd: PyG's LayerNorm "graph" without a batch vector).
struct SegmentNormOptions {
  bool wholeSegment = false;
  bool epsOnStd = false;
  double eps = 1e-5;
};
/// Normalisation within the segments of x [N, F] (the graphs of a batch; ops/SegmentNormOps.cpp): segment s is
/// rows ptr[s]..ptr[s+1]-1 (ptr int64 [S+1], 0 to N); m = mean over its real rows (rowMask uint8 [N], undefined
/// = all real), o = x - meanScale * m, v = mean of o^2 over real rows (biased), y = o / sqrt(v + eps) * gamma +
/// beta; meanScale (GraphNorm's mean_scale), gamma and beta [F] may be undefined (1, 1, 0). Padding rows are
/// normalised with their segment's statistics and never enter them; a segment without real rows has m = v = 0.
/// segmentMean and segmentVar (optional) receive m and v [S, F]. Deterministic for any thread count and padding.
Variable segmentNorm(const Variable& x, const Tensor& ptr, const Tensor& rowMask, const Variable& meanScale,
                     const Variable& gamma, const Variable& beta, const SegmentNormOptions& options = {},
                     Tensor* segmentMean = nullptr, Tensor* segmentVar = nullptr);
/// Rows of weight [V, D] picked by index [N] (int64) -> [N, D].
Variable embedding(const Variable& weight, const Tensor& index);
/// Sum of C rows of weight [V, D] per row of index [N, C] (int64) -> [N, D]: PyTorch's EmbeddingBag with
/// mode="sum" and fixed bags. Same numbers as segmentSum(embedding(...)) without the [N*C, D] intermediate.
Variable embeddingBag(const Variable& weight, const Tensor& index);

// ---- losses (ops/LossOps.cpp); mask (uint8, 1 = counts) may be undefined = all rows count ----
/// Mean negative log-likelihood over masked rows of logProbs [M, C] with int64 labels [M].
Variable nllLoss(const Variable& logProbs, const Tensor& labels, const Tensor& mask = Tensor());
/// nllLoss(logSoftmax(logits)).
Variable crossEntropy(const Variable& logits, const Tensor& labels, const Tensor& mask = Tensor());
/// Mean squared error over masked elements (mask shaped like target, or [M] masking whole rows).
Variable mseLoss(const Variable& pred, const Tensor& target, const Tensor& mask = Tensor());
/// Mean absolute error over masked elements.
Variable l1Loss(const Variable& pred, const Tensor& target, const Tensor& mask = Tensor());
/// Mean binary cross-entropy with logits over masked elements.
Variable bceWithLogits(const Variable& logits, const Tensor& target, const Tensor& mask = Tensor());

// ---- graph ops (ops/GraphOps.cpp) ----
/// out[i] = x[index[i]]: [N, F] -> [E, F]. Backward scatters (deterministically) into x's gradient.
Variable gatherRows(const Variable& x, const Tensor& index);
/// Segment reductions over rows grouped by ptr [S+1] (int64, non-decreasing, ptr[0] = 0, ptr[S] = rows):
/// segment s covers rows ptr[s]..ptr[s+1]-1. Empty segments give 0. Parallel over segments, no atomics.
Variable segmentSum(const Variable& x, const Tensor& ptr);
Variable segmentMean(const Variable& x, const Tensor& ptr);
Variable segmentMax(const Variable& x, const Tensor& ptr);
/// Softmax of x [E, H] within each segment (per column), e.g. attention over a node's incoming edges.
Variable segmentSoftmax(const Variable& x, const Tensor& ptr);
/// out[index[i]] += x[i] for unsorted index [E] into numOut rows; deterministic (stable order per row).
Variable scatterSum(const Variable& x, const Tensor& index, int64_t numOut);
Variable scatterMean(const Variable& x, const Tensor& index, int64_t numOut);
Variable scatterMax(const Variable& x, const Tensor& index, int64_t numOut);
/// PNA's further aggregations (ops/ScatterStatsOps.cpp; PyG 2.3.1's Min/Var/StdAggregation), 0 where no row
/// arrives: the minimum (gradient to the first row holding it); mean(x^2) - mean(x)^2; sqrt(clamp(var, min=eps))
/// (so sqrt(eps) where no row arrives; no gradient where var < eps, as torch's clamp).
Variable scatterMin(const Variable& x, const Tensor& index, int64_t numOut);
Variable scatterVar(const Variable& x, const Tensor& index, int64_t numOut);
Variable scatterStd(const Variable& x, const Tensor& index, int64_t numOut, double eps = 1e-5);
/// Several of those reductions ("sum" or "add", "mean", "max", "min", "var", "std") of the same x [E, F] side by
/// side -> [numOut, reductions x F], reduction-major (PyG's MultiAggregation, mode "cat"): each reduction's own
/// op's bits, in one pass over the grouped index, and one [E, F] gradient (ops/MultiAggregateOps.cpp).
Variable scatterMultiAggregate(const Variable& x, const Tensor& index, int64_t numOut,
                               const std::vector<std::string>& reductions, double stdEps = 1e-5);
/// GINE's message and sum aggregation fused: out[i] = selfWeight * x[i] + sum over edges j -> i of
/// ReLU(x[j] + edgeAttr[e]), x [N, F], edgeAttr [E, F], edgeIndex int64 [2, E] (row 0 source, row 1 target)
/// -> [numNodes, F]; selfWeight is GIN's 1 + eps (0: messages only; non-zero needs numNodes == N). The same
/// numbers as add(scale(x, w), scatterSum(relu(add(gatherRows(x, src), edgeAttr)), dst)) without the [E, F]
/// and [N, F] intermediates.
Variable reluMessageSum(const Variable& x, const Variable& edgeAttr, const Tensor& edgeIndex, int64_t numNodes,
                        double selfWeight = 0);
/// SchNet's continuous-filter convolution sum (CFConv): out[i] = sum over edges j -> i of x[j] * filter[e] for
/// x [N, F], filter [E, F], edgeIndex int64 [2, E] -> [numNodes, F]. The same numbers as
/// scatterSum(mul(gatherRows(x, src), filter), dst, numNodes) without the [E, F] messages; each node sums its
/// edges in edge order. With filterIndex (int64 [E]), edge e reads filter row filterIndex[e] of filter [P, F]:
/// SchNet's filters depend only on the distance, so the two directions of a bond share one row (half the
/// filter network's work). With filterScale [rows of filter] (SchNet's cutoff), filter row r is scaled by
/// filterScale[r] first: the numbers of mul(filter, reshape(filterScale, {rows, 1})) fed to the op, to the
/// bit, without the scaled [rows, F] copy. Saves x only when the filter (or the scale) needs a gradient and the
/// filter only when x (or the scale) does.
Variable filterMessageSum(const Variable& x, const Variable& filter, const Tensor& edgeIndex, int64_t numNodes,
                          const Tensor& filterIndex = Tensor(), const Variable& filterScale = Variable());
/// An edge list checked once and grouped by target, by source and by filter row, for any number of
/// filterMessageSum calls over it (int64, opaque; x has numX rows, filterIndex points into numFilterRows
/// filter rows): SchNet's six interactions share one instead of each checking and sorting the edges three
/// times. The errors are filterMessageSum's. The plan must not be changed after it is built.
Tensor messagePlan(const Tensor& edgeIndex, int64_t numNodes, int64_t numX, const Tensor& filterIndex = Tensor(),
                   int64_t numFilterRows = 0);
/// filterMessageSum over a messagePlan: the same numbers; the backward saves the plan (shared) instead of
/// copies of the indices.
Variable filterMessageSum(const Variable& x, const Variable& filter, const Tensor& plan,
                          const Variable& filterScale = Variable());
/// ResGatedGraphConv's gated messages and their sum: out[i] = sum over edges j -> i of sigmoid(k[i] + q[j]) * v[j]
/// for k, q, v [N, F], edgeIndex int64 [2, E] -> [N, F] (ops/GatedMessageSumOps.cpp): the numbers of
/// scatterSum(mul(sigmoid(add(gatherRows(k, dst), gatherRows(q, src))), gatherRows(v, src)), dst, N) up to
/// rounding, without the [E, F] tensors.
Variable gatedMessageSum(const Variable& k, const Variable& q, const Variable& v, const Tensor& edgeIndex);
/// A message sum with one weight per edge: out[i] = sum over edges e = j -> i of weight[e] * x[j], x [N, F],
/// weight [E] or [E, 1] (a gradient flows to both), edgeIndex int64 [2, E] -> [numNodes, F]
/// (ops/WeightedMessageSumOps.cpp): scatterSum(mul(gatherRows(x, src), weight), dst) without the [E, F] tensors.
Variable weightedMessageSum(const Variable& x, const Variable& weight, const Tensor& edgeIndex, int64_t numNodes);
/// TransformerConv's attention and its sum: for each edge e = j -> i and head h, z = scale * q_i,h . (k_j,h +
/// edge_e,h), alpha = the softmax of z over i's edges per head, out_i,h = sum over i's edges of alpha (v_j,h +
/// edge_e,h); q [N, H C] (the targets), k, v [N_src, H C] (the sources: N_src = N on one node set, another node
/// type's count on a relation between two, HGTConv's), edge [E, H C] or undefined (no edge terms), edgeIndex
/// int64 [2, E] (sources < N_src, targets < N) -> [N, H C] (ops/DotAttentionOps.cpp): the gather /
/// segmentSoftmax / segmentSum composition's numbers up to rounding, with the [E, H] attention the only per-edge
/// tensor kept. No dropout on the attention.
Variable dotAttentionMessageSum(const Variable& q, const Variable& k, const Variable& v, const Variable& edge,
                                const Tensor& edgeIndex, int64_t heads, double scale);
/// GENConv's messages and their softmax aggregation (PyG's SoftmaxAggregation): m_e = relu(x_j + edge_e) + eps
/// (edge undefined: relu(x_j) + eps) for each edge e = j -> i, out_i = sum over i's edges of softmax(t m) m per
/// channel (0 where no edge arrives); x [N, F], edge [E, F] or undefined, t [1] or [F] (a gradient flows to
/// it when it needs one), edgeIndex int64 [2, E] with targets < numNodes -> [numNodes, F]
/// (ops/SoftmaxMessageSumOps.cpp): the numbers of the gather / relu / segmentSoftmax / segmentSum composition
/// up to rounding, with no [E, F] tensor kept. The edge rows are read fastest in target order.
Variable softmaxMessageSum(const Variable& x, const Variable& edge, const Tensor& edgeIndex, int64_t numNodes,
                           double eps, const Variable& t);
/// FiLMConv's modulated messages and their sum (or mean, mean = true): out_i = sum (mean) over edges j -> i of
/// relu(gamma_i * h_j + beta_i), beta, gamma, h [N, F], edgeIndex int64 [2, E] -> [N, F], 0 where no edge
/// arrives (ops/FilmMessageSumOps.cpp): the gather / mul / add / relu / scatter composition's numbers up to
/// rounding, without the [E, F] tensors.
Variable filmMessageSum(const Variable& beta, const Variable& gamma, const Variable& h, const Tensor& edgeIndex,
                        bool mean);
/// NNConv's messages: out[e] = x[src[e]] theta[e] for x [N, in], theta [E, in, out] (each edge's own matrix),
/// src int64 [E] -> [E, out] (ops/EdgeMatVecOps.cpp): bmm(gatherRows(x, src) as [E, 1, in], theta)'s numbers up
/// to rounding without the gathered rows, each edge's matrix read in edge order.
Variable edgeMatVec(const Variable& x, const Variable& theta, const Tensor& src);
/// Constant sparse A [M, K] times x [K, F] -> [M, F]; gradient flows to x through A^T.
Variable spmm(const SparseMatrix& a, const Variable& x);
// GAT's and GATv2's fused attention, per-head dot products and added self-loops' edge features:
// gnn/ops/GraphAttention.h (gatAttention, gatv2Attention, headDot, selfLoopAttr).

// ---- shapes and dtypes (ops/ShapeOps.cpp); these move elements without arithmetic, so they take any dtype ----
/// The same elements in a new shape (one dimension may be -1: inferred), sharing a's storage (a view, like
/// torch's view). The gradient is the output's gradient reshaped back. Saves nothing.
Variable reshape(const Variable& a, Shape shape);
/// Copy of a (rank <= 4) with dimensions dim0 and dim1 swapped (negative dimensions count from the end).
Variable transpose(const Variable& a, int dim0, int dim1);
/// A matrix's transpose as a plain tensor of any dtype: transpose's copy, nothing recorded (a weight read or
/// initialised in another layout).
Tensor transposed(const Tensor& matrix);
/// Copy of a (rank <= 4) with its dimensions reordered: output dimension k is a's dimension dims[k]
/// (torch.permute). The gradient goes back through the inverse permutation.
Variable permute(const Variable& a, const std::vector<int>& dims);
/// a converted to float16, float32 or float64 (a itself when it has that dtype already). The gradient is the
/// output's gradient converted back to a's dtype. float16 is a storage type: ops compute in float32 or
/// float64 and reject float16, so mixed precision keeps weights in float32, stores activations in float16
/// and casts around the arithmetic. Conversions round to nearest even, once (float64 -> float16 included).
Variable cast(const Variable& a, DType dtype);

// ---- batched products and attention softmax (ops/AttentionOps.cpp) ----
/// Batched product a [B, M, K] x b [B, K, N] -> [B, M, N]; rank 4 [B, H, M, K] x [B, H, K, N] treats the two
/// leading dimensions as the batch. The leading dimensions must be equal (no broadcasting).
Variable bmm(const Variable& a, const Variable& b);
/// Batched a x b^T for b [B, N, K] (or [B, H, N, K]) -> [B, M, N] (attention's Q K^T, without a transpose copy).
Variable bmmNT(const Variable& a, const Variable& b);
/// Softmax along the last axis (axis must name it: -1 or rank - 1) of x, rank 1..4. Optional additive bias
/// (added to x before the softmax; gradient flows to it): same dtype, x's shape or broadcastable to it (numpy
/// rules, e.g. [B, 1, N, N] or [1, H, N, N] against [B, H, N, N]; its last dimension must be x's).
/// Optional uint8 mask broadcastable to x (its last dimension x's or 1): 1 = keep, 0 = masked out; masked
/// entries get probability exactly 0, and a row with every entry masked gives all zeros (not NaN).
/// Saves only the output.
Variable softmax(const Variable& x, int axis = -1, const Variable& bias = Variable(), const Tensor& mask = Tensor());
/// Multi-head self-attention over B sequences of T rows, in one op: qkv [B, T, 3E] holds each row's queries,
/// keys and values (columns [0, E), [E, 2E), [2E, 3E); head h owns columns h*d .. (h+1)*d - 1 of each, d = E
/// / heads: the layout of one Linear(E, 3E), so no head split or merge is copied). Per sequence and head:
///   softmax(q k^T / sqrt(d) + bias, over the keys kept by keyMask) v  -> [B, T, E] (heads side by side),
/// bias [B, heads, T, T] optional (gets a gradient), keyMask uint8 [B, T] optional (1 = a key to attend to).
/// Row i is both a query and a key: a row whose key is masked (a padding slot) gets zeros, as does every row
/// of a sequence with no key kept; keys after a sequence's last kept one are not read at all, so a padded
/// sequence costs about its real length. In training, dropout p on the probabilities with the stream and mask
/// layout of dropout() on a [B, heads, T, T] tensor. For the kept rows, the same numbers as
/// bmm(dropout(softmax(bmmNT(q, k) / sqrt(d), -1, bias, mask), p), v) with the heads permuted out and back,
/// without those [B, heads, T, T] scores, mask and dropped copies and the four permutes: it keeps only the
/// probabilities for the backward. Each (sequence, head) is computed alone on a fixed aligned layout, so a
/// sequence's result does not depend on the others in the batch or on where it sits.
Variable multiHeadAttention(const Variable& qkv, int64_t heads, const Variable& bias = Variable(),
                            const Tensor& keyMask = Tensor(), double dropout = 0.0, bool training = false);
/// The same over packed sequences: qkv [R, 3E] holds sequence g in rows rowPtr[g] .. rowPtr[g+1] - 1 (rowPtr
/// int64 [G + 1] from 0 to R, at most maxRows rows each), every row a query and a key; -> [R, E]. bias [G,
/// heads, maxRows, maxRows] (a sequence of n rows reads the top-left [n, n] corner of its blocks), dropout
/// with the layout of a [G, heads, maxRows, maxRows] mask. No padding rows are stored or computed: a
/// sequence's rows come out as the same bits as the first n rows of its block in multiHeadAttention with
/// T = maxRows and a key mask keeping those n.
Variable multiHeadAttentionPacked(const Variable& qkv, int64_t heads, const Tensor& rowPtr, int64_t maxRows,
                                  const Variable& bias = Variable(), double dropout = 0.0,
                                  bool training = false);

// ---- graph transformers: per-graph blocks, Graphormer's bias (ops/GraphTransformerOps.cpp) ----
/// Node rows of a batch [N, D] as one dense block per graph [G, L + maxNodes, D] (PyTorch Geometric's
/// to_dense_batch): node i of graph g (row ptr[g] + i) goes to row L + i of block g, with L = 1 and `leading`
/// [D] in row 0 of every block when it is defined (Graphormer's graph token), else L = 0; other rows are
/// zero. ptr [G + 1] int64 node offsets; graphsMask [G] uint8 optional: graphs with 0 (padding graphs) get no
/// nodes. A real graph with more than maxNodes nodes is an error naming it. Gradients flow to x and leading.
Variable toDenseBatch(const Variable& x, const Tensor& ptr, const Tensor& graphsMask, int64_t maxNodes,
                      const Variable& leading = Variable());
/// Graphormer's attention bias with its graph token (Ying et al. 2021; graphormer_layers.py GraphAttnBias):
/// pairBias [G, M, M, H] (node pair, then head) -> [G, H, M + 1, M + 1] with row 0 (the token attending to
/// every row) and column 0 (every node attending to the token) set to tokenBias [H] (the learned virtual
/// distance), node pair (i, j) at (i + 1, j + 1). Gradients flow to both.
Variable graphAttentionBias(const Variable& pairBias, const Variable& tokenBias);
/// Graphormer's multi-hop edge encoding (graphormer_layers.py GraphAttnBias, edge_type "multi_hop"): for each
/// of P node pairs, the bond features along its shortest path, hop k < K = hopWeights.dim(0): a_pk = the mean
/// over the Fe features of table rows edgeInput[p, k, f] (-1 = no hop: a zero row), and
///   out[p] = (sum_k a_pk W_k) / clamp(spatialPos[p], 1, K)        -> [P, H]
/// with table [V, H], hopWeights W [K, H, H], edgeInput int64 [..., K', Fe] of P pairs (K' >= K: the first K
/// hops are read), spatialPos int64 with P elements (the pair's hop distance; padding -1 divides by 1, as
/// Graphormer's). Without the [P, K, Fe, H] gathers and [K, P, H] products: the [K, V, H] products of the
/// table with each W_k once, then per pair a sum of K x Fe of their rows; the backward scatters each pair's
/// gradient into those products' rows and takes the table's and W's gradients from them.
Variable multiHopEdgeBias(const Variable& table, const Variable& hopWeights, const Tensor& edgeInput,
                          const Tensor& spatialPos);

// ---- elementwise math and reductions along an axis (ops/MathOps.cpp) ----
// Outside their domain these give what the C library does (as PyTorch): log of a negative number and sqrt of a
// negative number are NaN, log(0) = -inf, sqrt'(0) = inf, reciprocal(0) = inf, and their gradients follow.
/// e^x (saves its output).
Variable exp(const Variable& a);
/// Natural logarithm (saves its input).
Variable log(const Variable& a);
Variable sin(const Variable& a);
Variable cos(const Variable& a);
/// Square root (saves its output).
Variable sqrt(const Variable& a);
/// x^p elementwise (saves its input). p = 0 gives 1 with gradient 0 everywhere; negative x with a non-integer p
/// gives NaN.
Variable pow(const Variable& a, double p);
/// min(max(x, lo), hi) elementwise, torch's clamp: the gradient passes where lo <= x <= hi (saves its input).
Variable clamp(const Variable& a, double lo, double hi);
/// -x (saves nothing).
Variable neg(const Variable& a);
/// 1 / x (saves its output).
Variable reciprocal(const Variable& a);
/// Sum along one axis of a rank 1..4 tensor (negative axis counts from the end); keepDim keeps it with size 1.
/// Each output sums its inputs in increasing index order (the same bits for any thread count).
Variable sumAxis(const Variable& a, int axis, bool keepDim = false);
/// Mean along one axis (the axis must not be empty).
Variable meanAxis(const Variable& a, int axis, bool keepDim = false);

// ---- recurrence (ops/LstmOps.cpp, ops/GruCellOps.cpp) ----
/// torch.nn.GRUCell's step from its two products gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh ([N, 3H], gates
/// r, z, n) and h [N, H]: r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r gh_n),
/// h' = (1 - z) n + z h -> [N, H], as one pass (the gates' columns read in place, their gradients written whole).
Variable gruCell(const Variable& gi, const Variable& gh, const Variable& h);
/// One direction of torch.nn.LSTM's recurrence, fused over the time steps (backward: BPTT): gates [B, T, 4H] holds
/// x_t W_ih^T + b_ih per sequence b and step t (torch's gate order i, f, g, o), weightHh [4H, H], biasHh [4H]
/// (undefined: none); zero initial state; returns h [B, T, H]. reverse: t runs T-1 .. 0 (a bidirectional LSTM's
/// second direction). A row's bits depend on its own values only.
Variable lstmRecurrence(const Variable& gates, const Variable& weightHh, const Variable& biasHh = Variable(),
                        bool reverse = false);

// ---- row normalisation (ops/RowNormalizeOps.cpp) ----
/// Each row of x [N, F] divided by max(||row||_2, eps): torch's F.normalize(x, p=2, dim=-1, eps) (SAGEConv's
/// normalize). A row with norm <= eps gets the gradient g / eps, as torch's clamp gives (not NaN).
Variable normalizeRows(const Variable& x, double eps = 1e-12);

// ---- geometry (ops/GeometryOps.cpp) ----
/// Length of each edge: out[e] = ||pos[dst[e]] - pos[src[e]]|| for pos [N, D] (D = 3 for SchNet) and
/// edgeIndex int64 [2, E] (row 0 source, row 1 target) -> [E]. Keeps pos, the edge index and the output for the
/// backward (no [E, D] difference); a zero-length edge has gradient 0 (not NaN). Each node sums its edges'
/// gradients in a fixed order, no atomics.
Variable edgeDistances(const Variable& pos, const Tensor& edgeIndex);
/// All distances within each batch entry: pos [B, N, D] -> [B, N, N] (or [N, D] -> [N, N]); the diagonal is 0
/// with gradient 0.
Variable pairwiseDistances(const Variable& pos);
/// The radius graph of a padded batch built as an IPU builds it (ops/NeighbourGraphOps.cpp): the [N, N] distances,
/// masked, and the k nearest of each row. pos float [N, 3], batch int64 [N] (each atom's graph), nodeMask uint8
/// [N] (1 = real atom; undefined: all real) -> int64 [2, N*k] (row 0 source, row 1 target), slot i*k + s holding
/// target i's s-th nearest source j (same graph, j != i, both real, |pos_j - pos_i| < cutoff, by distance then
/// index: radiusGraph's neighbours, its distances computed in double). Empty slots, and every slot of a padding
/// atom, are padding edges: self-loops on a padding atom (a padding row's own; the first padding atom for a real
/// row). Records "knnGraph" (no gradient: integer output).
Tensor knnGraph(const Tensor& pos, const Tensor& batch, const Tensor& nodeMask, int64_t k, double cutoff);

/// Gaussian expansion of distances d [E] on K centres (SchNet's GaussianSmearing): out[e, k] =
/// exp(coeff * (d[e] - offsets[k])^2) -> [E, K]. Saves the distances and the output.
Variable gaussianSmearing(const Variable& dist, const std::vector<double>& offsets, double coeff);
/// Cosine cutoff of distances (any shape): 0.5 (cos(pi d / cutoff) + 1) for d < cutoff, exactly 0 (and gradient
/// 0) from the cutoff on.
Variable cosineCutoff(const Variable& dist, double cutoff);

/// Counts -> offsets: ptr[0] = 0, ptr[i+1] = ptr[i] + counts[i].
Tensor countsToPtr(const std::vector<int64_t>& counts);
/// ptr for a sorted index vector (e.g. PyG's `batch`): segment s = rows whose index is s.
Tensor sortedIndexToPtr(const Tensor& sortedIndex, int64_t numSegments);
/// The inverse: the segment of each row, int64 [ptr's last entry], for ptr [S+1] (e.g. each edge's graph from a
/// batch's edgePtr).
Tensor ptrToSortedIndex(const Tensor& ptr);

}  // namespace gnn
