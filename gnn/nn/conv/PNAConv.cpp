#include "gnn/nn/conv/PNAConv.h"

#include "gnn/nn/PyGArgs.h"
#include "gnn/nn/aggr/DegreeScalerAggregation.h"
#include "gnn/nn/aggr/StdAggregation.h"
#include "gnn/ops/PnaAggregate.h"
#include "gnn/ops/ScaledBlockSum.h"

namespace gnn {

PNAConv::PNAConv(int64_t inChannels, int64_t outChannels, PNAConvOptions options, Generator& gen)
    : MessagePassing(std::make_unique<DegreeScalerAggregation>(options.aggregators, options.scalers, options.deg,
                                                               options.trainNorm, options.dtype)),
      in_(inChannels), out_(outChannels), opt_(std::move(options)), act_(activationFromPyG(opt_.act, opt_.actKwargs)) {
  const int64_t T = opt_.towers;
  GNN_CHECK_ARG(in_ > 0 && out_ > 0, "PNAConv: channel counts must be positive, got ", in_, " -> ", out_);
  GNN_CHECK_ARG(T > 0 && opt_.preLayers > 0 && opt_.postLayers > 0,
                "PNAConv: towers, pre_layers and post_layers must be positive");
  GNN_CHECK_ARG(!opt_.divideInput || in_ % T == 0, "PNAConv: divide_input needs in_channels (", in_,
                ") divisible by towers (", T, ")");
  GNN_CHECK_ARG(out_ % T == 0, "PNAConv: out_channels (", out_, ") must be divisible by towers (", T, ")");
  GNN_CHECK_ARG(opt_.edgeDim >= 0, "PNAConv: negative edge_dim ", opt_.edgeDim);
  fIn_ = opt_.divideInput ? in_ / T : in_;
  fOut_ = out_ / T;
  const DType dt = opt_.dtype;
  // Built and registered in PyG's order: aggr_module (the base), edge_encoder, pre_nns, post_nns, lin.
  if (opt_.edgeDim > 0) {
    edgeEncoder_ = std::make_unique<Linear>(opt_.edgeDim, fIn_, gen, true, dt);
    registerModule("edge_encoder", *edgeEncoder_);
  }
  const int64_t width = static_cast<const DegreeScalerAggregation&>(aggregation()).widthFactor();
  auto mlp = [&](int64_t first, int64_t f, int64_t layers) {
    Mlp m;
    m.push_back(std::make_unique<Linear>(first, f, gen, true, dt));
    for (int64_t k = 1; k < layers; ++k) m.push_back(std::make_unique<Linear>(f, f, gen, true, dt));
    return m;
  };
  for (int64_t t = 0; t < T; ++t) {
    pre_.push_back(mlp((opt_.edgeDim > 0 ? 3 : 2) * fIn_, fIn_, opt_.preLayers));
    post_.push_back(mlp((width + 1) * fIn_, fOut_, opt_.postLayers));
  }
  // torch's Sequential numbers the activations too: the Linear layers are its entries 0, 2, 4, ...
  for (const char* kind : {"pre_nns.", "post_nns."})
    for (int64_t t = 0; t < T; ++t) {
      Mlp& m = kind[1] == 'r' ? pre_[t] : post_[t];
      for (size_t k = 0; k < m.size(); ++k)
        registerModule(kind + std::to_string(t) + "." + std::to_string(2 * k), *m[k]);
    }
  lin_ = std::make_unique<Linear>(out_, out_, gen, true, dt);
  registerModule("lin", *lin_);
}

std::unique_ptr<PNAConv> PNAConv::fromPyG(const nlohmann::json& args, Generator& gen, DType dtype) {
  const PyGArgs a(args, "PNAConv",
                  {{"in_channels", nullptr}, {"out_channels", nullptr}, {"aggregators", nullptr},
                   {"scalers", nullptr}, {"deg", nullptr}, {"edge_dim", nullptr}, {"towers", 1},
                   {"pre_layers", 1}, {"post_layers", 1}, {"divide_input", false}, {"act", "relu"},
                   {"act_kwargs", nullptr}, {"train_norm", false}});
  const int64_t in = a.get<int64_t>("in_channels");
  if (in <= 0) throw a.invalidValue("in_channels", in, "must be positive (lazy -1 is not supported)");
  PNAConvOptions o;
  o.aggregators = a.get<std::vector<std::string>>("aggregators");
  o.scalers = a.get<std::vector<std::string>>("scalers");
  o.deg = a.get<std::vector<int64_t>>("deg");
  if (a.has("edge_dim")) {
    o.edgeDim = a.get<int64_t>("edge_dim");
    if (o.edgeDim <= 0) throw a.invalidValue("edge_dim", o.edgeDim, "must be positive or None");
  }
  o.towers = a.get<int64_t>("towers");
  o.preLayers = a.get<int64_t>("pre_layers");
  o.postLayers = a.get<int64_t>("post_layers");
  o.divideInput = a.get<bool>("divide_input");
  o.act = a.at("act");
  o.actKwargs = a.at("act_kwargs");
  o.trainNorm = a.get<bool>("train_norm");
  o.dtype = dtype;
  return std::make_unique<PNAConv>(in, a.get<int64_t>("out_channels"), o, gen);
}

std::unique_ptr<Module> PNAConv::clone() const {
  Generator unused;  // the fresh instance's initial values are overwritten by the copy
  return cloneInto(std::make_unique<PNAConv>(in_, out_, opt_, unused));
}

Variable PNAConv::runMlp(const Mlp& mlp, Variable h, size_t from) const {
  for (size_t k = from; k < mlp.size(); ++k) h = mlp[k]->forward(act_(h));
  return h;
}

Variable PNAConv::towerMessages(int64_t t, const Variable& xt, const Tensor& src, const Tensor& dst,
                                const Variable& encoded) const {
  // pre_t's first layer on cat[x_i, x_j(, e)]: W = [W_i | W_j (| W_e)] by column blocks.
  Linear& first = *pre_[t][0];
  const int64_t F = fIn_;
  Variable hi = linear(xt, sliceCols(first.weight(), 0, F), *first.bias());
  Variable hj = linear(xt, sliceCols(first.weight(), F, 2 * F));
  Variable h = add(gatherRows(hi, dst), gatherRows(hj, src));
  if (encoded.defined()) h = add(h, linear(encoded, sliceCols(first.weight(), 2 * F, 3 * F)));
  return runMlp(pre_[t], h, 1);
}

Variable PNAConv::towerAggregate(int64_t t, const Variable& xt, const Tensor& src, const Tensor& dst, int64_t N,
                                 const Variable& encoded) const {
  const auto& aggr = static_cast<const DegreeScalerAggregation&>(aggregation());
  if (opt_.preLayers > 1)
    return pnaAggregate(Variable(), Variable(), towerMessages(t, xt, src, dst, encoded), Tensor(), dst, N,
                        aggr.aggregators(), StdAggregation::kEps);
  // A single linear pre-layer: its x_i and x_j parts are node-sized products, side by side from one product
  // x [W_i^T | W_j^T], and the op adds them (and the bias) per edge as it aggregates (the numbers of
  // towerMessages, without its [E, F] intermediates).
  Linear& first = *pre_[t][0];
  const int64_t F = fIn_;
  const Variable w = concatCols({transpose(sliceCols(first.weight(), 0, F), 0, 1),
                                 transpose(sliceCols(first.weight(), F, 2 * F), 0, 1)});
  Variable he;
  if (encoded.defined()) he = linear(encoded, sliceCols(first.weight(), 2 * F, 3 * F));
  return pnaAggregatePaired(matmul(xt, w), *first.bias(), he, src, dst, aggr.aggregators(), StdAggregation::kEps);
}

Variable PNAConv::towerPost(int64_t t, const Variable& xt, const Variable& aggregated,
                            const std::vector<Variable>& factors) const {
  // post_t's first layer on cat[x, s_1 A, ..., s_S A] (A the aggregators' [N, K] output, s the scalers' per-node
  // factors) is x W_x^T + b + sum_s s (A W_s^T): one product of A with the S column blocks W_s side by side,
  // then each block's [N, F_out] scaled per node and summed (scaledBlockSum), instead of the scaled [N, S K]
  // copies of A and their gradients.
  Linear& first = *post_[t][0];
  const int64_t F = fIn_, K = aggregated.dim(1), S = static_cast<int64_t>(factors.size());
  const Variable self = linear(xt, sliceCols(first.weight(), 0, F), *first.bias());
  std::vector<Variable> blocks;  // W_s^T [K, Fo]
  for (int64_t s = 0; s < S; ++s)
    blocks.push_back(transpose(sliceCols(first.weight(), F + s * K, F + (s + 1) * K), 0, 1));
  const Variable y = matmul(aggregated, S == 1 ? blocks[0] : concatCols(blocks));  // [N, S Fo]
  return scaledBlockSum(self, y, factors);
}

Variable PNAConv::forward(const Variable& x, const Tensor& edgeIndex, const Variable& edgeAttr) {
  GNN_CHECK_ARG(x.value().rank() == 2 && x.dim(1) == in_, "PNAConv(", in_, " -> ", out_, "): input has shape ",
                shapeString(x.shape()), ", expected [N, ", in_, "]");
  const Tensor src = edgeRow(edgeIndex, 0), dst = edgeRow(edgeIndex, 1);
  const int64_t N = x.dim(0), E = edgeIndex.dim(1);
  Variable encoded;
  if (opt_.edgeDim > 0) {
    GNN_CHECK_ARG(edgeAttr.defined() && edgeAttr.value().rank() == 2 && edgeAttr.dim(0) == E &&
                      edgeAttr.dim(1) == opt_.edgeDim,
                  "PNAConv: edge_dim=", opt_.edgeDim, " needs edge_attr [", E, ", ", opt_.edgeDim, "], got ",
                  edgeAttr.defined() ? shapeString(edgeAttr.shape()) : std::string("none"));
    encoded = edgeEncoder_->forward(edgeAttr);
  } else {
    GNN_CHECK_ARG(!edgeAttr.defined(), "PNAConv: edge_attr given to a layer built without edge_dim");
  }
  const std::vector<Variable> factors =
      static_cast<const DegreeScalerAggregation&>(aggregation()).scalerFactors(dst, N, x.dtype());
  std::vector<Variable> towers;
  for (int64_t t = 0; t < opt_.towers; ++t) {
    const Variable xt = opt_.divideInput ? sliceCols(x, t * fIn_, (t + 1) * fIn_) : x;
    const Variable aggregated = towerAggregate(t, xt, src, dst, N, encoded);
    towers.push_back(runMlp(post_[t], towerPost(t, xt, aggregated, factors), 1));
  }
  return lin_->forward(towers.size() == 1 ? towers[0] : concatCols(towers));
}

}  // namespace gnn
