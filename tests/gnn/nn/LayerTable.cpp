#include "LayerTable.h"

#include <algorithm>

#include "gnn/nn/HeteroLinear.h"
#include "gnn/nn/conv/APPNP.h"
#include "gnn/nn/conv/ChebConv.h"
#include "gnn/nn/conv/ClusterGCNConv.h"
#include "gnn/nn/conv/DynamicEdgeConv.h"
#include "gnn/nn/conv/EGConv.h"
#include "gnn/nn/conv/EdgeConv.h"
#include "gnn/nn/conv/FAConv.h"
#include "gnn/nn/conv/FastRGCNConv.h"
#include "gnn/nn/conv/FiLMConv.h"
#include "gnn/nn/conv/GATConv.h"
#include "gnn/nn/conv/GATv2Conv.h"
#include "gnn/nn/conv/GCN2Conv.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/nn/conv/GENConv.h"
#include "gnn/nn/conv/GINConv.h"
#include "gnn/nn/conv/GINEConv.h"
#include "gnn/nn/conv/GatedGraphConv.h"
#include "gnn/nn/conv/GeneralConv.h"
#include "gnn/nn/conv/GraphConv.h"
#include "gnn/nn/conv/LEConv.h"
#include "gnn/nn/conv/MFConv.h"
#include "gnn/nn/conv/NNConv.h"
#include "gnn/nn/conv/ResGatedGraphConv.h"
#include "gnn/nn/conv/SGConv.h"
#include "gnn/nn/conv/TAGConv.h"
#include "gnn/nn/conv/TransformerConv.h"
#include "gnn/nn/conv/PNAConv.h"
#include "gnn/nn/conv/RGATConv.h"
#include "gnn/nn/conv/RGCNConv.h"
#include "gnn/nn/conv/SAGEConv.h"

namespace gnn::testing {

namespace {
// GINConv and EdgeConv take their widths from nn (a PyG MLP), not from in_channels / out_channels. The table's
// own checks give those two (and change them, as the thread check does): here they become the MLP's first width
// (times inFactor: EdgeConv's nn reads [x_i, x_j - x_i]) and its last. Reference files carry neither.
template <class L>
std::function<std::unique_ptr<Module>(const nlohmann::json&, DType, Generator&)> fromPyGWithNnChannels(
    int64_t inFactor) {
  return [inFactor](const nlohmann::json& args, DType dtype, Generator& gen) -> std::unique_ptr<Module> {
    nlohmann::json a = args;
    if (a.contains("in_channels")) {
      nlohmann::json& widths = a["nn"]["args"]["channel_list"];
      widths.front() = inFactor * a["in_channels"].get<int64_t>();
      if (a.contains("out_channels")) widths.back() = a["out_channels"];
      a.erase("in_channels");
      a.erase("out_channels");
    }
    return L::fromPyG(a, gen, dtype);
  };
}

// APPNP keeps the width: the table's in_channels is x's width and out_channels (the same) is dropped.
std::function<std::unique_ptr<Module>(const nlohmann::json&, DType, Generator&)> appnpFromTable() {
  return [](const nlohmann::json& args, DType dtype, Generator& gen) -> std::unique_ptr<Module> {
    nlohmann::json a = args;
    a.erase("in_channels");
    a.erase("out_channels");
    return APPNP::fromPyG(a, gen, dtype);
  };
}

// GCN2Conv and FAConv keep the width (channels): the table's in_channels; GatedGraphConv pads its input to out_channels:
// at least in_channels.
template <class L>
std::function<std::unique_ptr<Module>(const nlohmann::json&, DType, Generator&)> channelsFromTable() {
  return [](const nlohmann::json& args, DType dtype, Generator& gen) -> std::unique_ptr<Module> {
    nlohmann::json a = args;
    if (a.contains("in_channels")) a["channels"] = a["in_channels"];
    a.erase("in_channels");
    a.erase("out_channels");
    return L::fromPyG(a, gen, dtype);
  };
}

// NNConv's nn maps the edge features to in x out weights: its last width follows the channels (which the table's
// thread check changes).
std::function<std::unique_ptr<Module>(const nlohmann::json&, DType, Generator&)> nnConvFromTable() {
  return [](const nlohmann::json& args, DType dtype, Generator& gen) -> std::unique_ptr<Module> {
    nlohmann::json a = args;
    a["nn"]["args"]["channel_list"].back() = a["in_channels"].get<int64_t>() * a["out_channels"].get<int64_t>();
    return NNConv::fromPyG(a, gen, dtype);
  };
}

// Edge e of type e % 3 (tests/reference/pyg_layers.py's film_conv_relations).
Tensor edgeTypesOf(const Tensor& edgeIndex) {
  std::vector<int64_t> t(static_cast<size_t>(edgeIndex.dim(1)));
  for (size_t e = 0; e < t.size(); ++e) t[e] = static_cast<int64_t>(e % 3);
  return Tensor::fromVector(t);
}

// RGCNConv's and FastRGCNConv's forward with edge e of type e % 3 (pyg_layers.py's rgcn cases give the same).
template <class L>
LayerForward forwardWithEdgeTypesOf() {
  return [](Module& m, const Variable& x, const Tensor& ei, const Variable&) {
    return static_cast<L&>(m).forward(x, ei, edgeTypesOf(ei));
  };
}

// RGATConv's forward with edge e of type e % 3 and the edge features when given (pyg_layers.py's rgat cases).
LayerForward rgatForward() {
  return [](Module& m, const Variable& x, const Tensor& ei, const Variable& e) {
    return static_cast<RGATConv&>(m).forward(x, ei, edgeTypesOf(ei), e);
  };
}

// RGATConv's mods' parameters, which PyG registers whatever the mod: "additive" reads w, "scaled" the rest.
const std::vector<std::string> kRgatModParameters = {"w", "l1", "b1", "l2", "b2"};

// HeteroLinear's forward with row k of type k % 3, or (sorted) of type min(k / 2, 2) (a row's type must not depend
// on the row count: the padding check): pyg_layers.py's hetero_linear cases (0, 0, 1, 1, 2, 2 on its 6 rows). The
// edges are not read.
LayerForward heteroLinearForward(bool sorted) {
  return [sorted](Module& m, const Variable& x, const Tensor&, const Variable&) {
    const int64_t n = x.dim(0);
    std::vector<int64_t> t(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) t[static_cast<size_t>(k)] = sorted ? std::min<int64_t>(k / 2, 2) : k % 3;
    return static_cast<HeteroLinear&>(m).forward(x, n > 0 ? Tensor::fromVector(t) : Tensor::zeros({0}, DType::I64));
  };
}

std::function<std::unique_ptr<Module>(const nlohmann::json&, DType, Generator&)> gatedFromTable() {
  return [](const nlohmann::json& args, DType dtype, Generator& gen) -> std::unique_ptr<Module> {
    nlohmann::json a = args;
    if (a.contains("in_channels"))
      a["out_channels"] = std::max(a["in_channels"].get<int64_t>(), a["out_channels"].get<int64_t>());
    a.erase("in_channels");
    return GatedGraphConv::fromPyG(a, gen, dtype);
  };
}

nlohmann::json mlpSpec(std::vector<int64_t> widths) {
  return {{"class", "MLP"}, {"args", {{"channel_list", widths}, {"norm", nullptr}}}};
}
}  // namespace

const std::vector<LayerCase>& layerCases() {
  static const std::vector<LayerCase> cases = {
      {"GCNConv", {{"in_channels", 4}, {"out_channels", 3}},
       {"gcn_conv", "gcn_conv_no_self_loops", "gcn_conv_no_normalize_no_bias"},
       fromPyGOf<GCNConv>(), forwardOf<GCNConv>()},
      // Every aggregator and scaler, two towers over divided input, two-layer MLPs; train_norm so that every
      // state_dict entry has a gradient to check. The second entry runs the edge features through the checks.
      {"PNAConv",
       {{"in_channels", 4}, {"out_channels", 6}, {"aggregators", {"mean", "min", "max", "std", "var", "sum"}},
        {"scalers", {"identity", "amplification", "attenuation", "linear", "inverse_linear"}},
        {"deg", {1, 3, 6, 2, 1}}, {"towers", 2}, {"divide_input", true}, {"pre_layers", 2}, {"post_layers", 2},
        {"train_norm", true}},
       {"pna_conv", "pna_conv_towers_divide", "pna_conv_towers_no_divide", "pna_conv_pre_post_layers",
        "pna_conv_train_norm"},
       fromPyGOf<PNAConv>(), forwardWithEdgesOf<PNAConv>()},
      {"PNAConv_edge",
       {{"in_channels", 4}, {"out_channels", 4}, {"aggregators", {"mean", "min", "max", "std", "var"}},
        {"scalers", {"identity", "amplification", "attenuation", "linear", "inverse_linear"}},
        {"deg", {1, 3, 6, 2, 1}}, {"edge_dim", 3}, {"train_norm", true}},
       {"pna_conv_edge"}, fromPyGOf<PNAConv>(), forwardWithEdgesOf<PNAConv>(), 3},
      // The mean path with project and normalize, linear first (out < in); SAGEConv_max covers the gathered path.
      {"SAGEConv", {{"in_channels", 4}, {"out_channels", 3}, {"project", true}, {"normalize", true}},
       {"sage_conv", "sage_conv_mean_wide", "sage_conv_sum", "sage_conv_sum_narrow", "sage_conv_normalize",
        "sage_conv_project"},
       fromPyGOf<SAGEConv>(), forwardOf<SAGEConv>()},
      {"SAGEConv_max", {{"in_channels", 4}, {"out_channels", 5}, {"aggr", "max"}},
       {"sage_conv_max", "sage_conv_no_root_no_bias"}, fromPyGOf<SAGEConv>(), forwardOf<SAGEConv>()},
      // The table's own checks train (batch statistics over every row, padding included): no norm there; the
      // batch_norm references run in evaluation.
      {"GINConv", {{"in_channels", 4}, {"out_channels", 3}, {"nn", mlpSpec({4, 8, 3})}, {"train_eps", true}},
       {"gin_conv", "gin_conv_train_eps", "gin_conv_eps", "gin_conv_batch_norm", "gin_conv_batch_norm_act_first"},
       fromPyGWithNnChannels<GINConv>(1), forwardOf<GINConv>()},
      {"GINEConv",
       {{"in_channels", 4}, {"out_channels", 3}, {"nn", mlpSpec({4, 8, 3})}, {"train_eps", true}, {"edge_dim", 3}},
       {"gine_conv", "gine_conv_edge_dim", "gine_conv_eps_batch_norm"}, fromPyGWithNnChannels<GINEConv>(1),
       forwardWithEdgesOf<GINEConv>(), 3},
      {"EdgeConv", {{"in_channels", 4}, {"out_channels", 3}, {"nn", mlpSpec({8, 8, 3})}},
       {"edge_conv", "edge_conv_mean", "edge_conv_sum_batch_norm"}, fromPyGWithNnChannels<EdgeConv>(2),
       forwardOf<EdgeConv>()},
      // Several heads with the default self-loops; the _edge entries add edge features and their loops' "mean".
      {"GATConv", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}},
       {"gat_conv", "gat_conv_heads3", "gat_conv_heads3_mean", "gat_conv_no_self_loops"}, fromPyGOf<GATConv>(),
       forwardWithEdgesOf<GATConv>()},
      {"GATConv_edge", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"edge_dim", 3}},
       {"gat_conv_edge", "gat_conv_edge_fill_value", "gat_conv_edge_add", "gat_conv_edge_max", "gat_conv_edge_min",
        "gat_conv_edge_no_self_loops"},
       fromPyGOf<GATConv>(), forwardWithEdgesOf<GATConv>(), 3},
      {"GATv2Conv", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}},
       {"gatv2_conv", "gatv2_conv_heads3", "gatv2_conv_heads3_mean_no_bias", "gatv2_conv_share_weights",
        "gatv2_conv_no_self_loops"},
       fromPyGOf<GATv2Conv>(), forwardWithEdgesOf<GATv2Conv>()},
      {"GATv2Conv_edge", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"edge_dim", 3}},
       {"gatv2_conv_edge", "gatv2_conv_edge_fill_value", "gatv2_conv_edge_max", "gatv2_conv_edge_no_self_loops"},
       fromPyGOf<GATv2Conv>(), forwardWithEdgesOf<GATv2Conv>(), 3},
      {"GraphConv", {{"in_channels", 4}, {"out_channels", 3}},
       {"graph_conv", "graph_conv_wide", "graph_conv_mean", "graph_conv_softmax_learn", "graph_conv_multi_proj"},
       fromPyGOf<GraphConv>(), forwardOf<GraphConv>()},
      // A learnt softmax temperature per channel as the aggregation (aggr_module.t).
      {"GraphConv_softmax",
       {{"in_channels", 4}, {"out_channels", 3}, {"aggr", {{"class", "SoftmaxAggregation"}, {"args", {{"learn", true}}}}}},
       {}, fromPyGOf<GraphConv>(), forwardOf<GraphConv>()},
      {"GraphConv_max", {{"in_channels", 4}, {"out_channels", 5}, {"aggr", "max"}}, {"graph_conv_max"},
       fromPyGOf<GraphConv>(), forwardOf<GraphConv>()},
      {"SGConv", {{"in_channels", 4}, {"out_channels", 3}, {"K", 2}},
       {"sg_conv", "sg_conv_k3_wide", "sg_conv_no_self_loops_no_bias"}, fromPyGOf<SGConv>(), forwardOf<SGConv>()},
      // No parameters and no width change; the table's checks still need the channel counts: equal ones.
      {"APPNP", {{"in_channels", 4}, {"out_channels", 4}, {"K", 3}, {"alpha", 0.2}},
       {"appnp", "appnp_no_self_loops", "appnp_no_normalize"}, appnpFromTable(), forwardOf<APPNP>()},
      {"TAGConv", {{"in_channels", 4}, {"out_channels", 3}, {"K", 2}},
       {"tag_conv", "tag_conv_k1_no_bias", "tag_conv_no_normalize"}, fromPyGOf<TAGConv>(), forwardOf<TAGConv>()},
      {"LEConv", {{"in_channels", 4}, {"out_channels", 3}}, {"le_conv", "le_conv_no_bias"}, fromPyGOf<LEConv>(),
       forwardOf<LEConv>()},
      {"ClusterGCNConv", {{"in_channels", 4}, {"out_channels", 3}, {"diag_lambda", 0.3}},
       {"cluster_gcn_conv", "cluster_gcn_conv_diag_lambda"}, fromPyGOf<ClusterGCNConv>(),
       forwardOf<ClusterGCNConv>()},
      {"ResGatedGraphConv", {{"in_channels", 4}, {"out_channels", 3}},
       {"res_gated_graph_conv", "res_gated_graph_conv_tanh_no_root"}, fromPyGOf<ResGatedGraphConv>(),
       forwardOf<ResGatedGraphConv>()},
      {"ChebConv", {{"in_channels", 4}, {"out_channels", 3}, {"K", 3}},
       {"cheb_conv", "cheb_conv_rw_k2", "cheb_conv_none_k4_no_bias", "cheb_conv_k1"}, fromPyGOf<ChebConv>(),
       forwardOf<ChebConv>()},
      {"ChebConv_lambda", {{"in_channels", 4}, {"out_channels", 3}, {"K", 3}}, {"cheb_conv_lambda_max"},
       fromPyGOf<ChebConv>(),
       [](Module& m, const Variable& x, const Tensor& ei, const Variable&) {
         return static_cast<ChebConv&>(m).forward(x, ei, {1.5});
       }},
      {"GCN2Conv", {{"in_channels", 4}, {"out_channels", 4}, {"alpha", 0.2}, {"theta", 0.5}, {"layer", 2},
                    {"shared_weights", false}},
       {"gcn2_conv", "gcn2_conv_theta_layer_separate", "gcn2_conv_no_self_loops", "gcn2_conv_no_normalize"},
       channelsFromTable<GCN2Conv>(),
       [](Module& m, const Variable& x, const Tensor& ei, const Variable&) {
         return static_cast<GCN2Conv&>(m).forward(x, x, ei);
       }},
      {"GatedGraphConv", {{"in_channels", 3}, {"out_channels", 4}, {"num_layers", 2}},
       {"gated_graph_conv", "gated_graph_conv_mean_no_bias"}, gatedFromTable(), forwardOf<GatedGraphConv>()},
      {"GatedGraphConv_max", {{"in_channels", 2}, {"out_channels", 5}, {"num_layers", 1}, {"aggr", "max"}},
       {"gated_graph_conv_max"}, gatedFromTable(), forwardOf<GatedGraphConv>()},
      {"MFConv", {{"in_channels", 4}, {"out_channels", 3}, {"max_degree", 3}},
       {"mf_conv", "mf_conv_max_degree2_no_bias"}, fromPyGOf<MFConv>(), forwardOf<MFConv>()},
      {"FAConv", {{"in_channels", 4}, {"out_channels", 4}, {"eps", 0.3}},
       {"fa_conv", "fa_conv_eps_no_self_loops", "fa_conv_eps0"}, channelsFromTable<FAConv>(),
       [](Module& m, const Variable& x, const Tensor& ei, const Variable&) {
         return static_cast<FAConv&>(m).forward(x, x, ei);
       }},
      {"FiLMConv", {{"in_channels", 4}, {"out_channels", 3}},
       {"film_conv", "film_conv_sum_tanh", "film_conv_no_act_max", "film_conv_nn"}, fromPyGOf<FiLMConv>(),
       forwardOf<FiLMConv>()},
      {"FiLMConv_relations", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}},
       {"film_conv_relations"}, fromPyGOf<FiLMConv>(),
       [](Module& m, const Variable& x, const Tensor& ei, const Variable&) {
         return static_cast<FiLMConv&>(m).forward(x, ei, edgeTypesOf(ei));
       }},
      // Three relations, edge e of type e % 3 (rgcn_conv_relations4: a fourth without edges). The thread check's
      // 48 -> 40 channels take 2 blocks.
      {"RGCNConv", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}},
       {"rgcn_conv", "rgcn_conv_add", "rgcn_conv_no_root_no_bias", "rgcn_conv_relations4"}, fromPyGOf<RGCNConv>(),
       forwardWithEdgeTypesOf<RGCNConv>()},
      // Square and widening layers take RGCNConv's other paths (per-relation aggregates; one stacked product).
      {"RGCNConv_square", {{"in_channels", 4}, {"out_channels", 4}, {"num_relations", 3}},
       {"rgcn_conv_square", "rgcn_conv_square_add_relations4"}, fromPyGOf<RGCNConv>(),
       forwardWithEdgeTypesOf<RGCNConv>()},
      {"RGCNConv_widening", {{"in_channels", 3}, {"out_channels", 5}, {"num_relations", 4}, {"root_weight", false}},
       {"rgcn_conv_widening_relations4"}, fromPyGOf<RGCNConv>(), forwardWithEdgeTypesOf<RGCNConv>()},
      {"RGCNConv_bases", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"num_bases", 2}},
       {"rgcn_conv_bases", "rgcn_conv_bases_add_no_root"}, fromPyGOf<RGCNConv>(), forwardWithEdgeTypesOf<RGCNConv>()},
      {"RGCNConv_blocks", {{"in_channels", 4}, {"out_channels", 6}, {"num_relations", 3}, {"num_blocks", 2}},
       {"rgcn_conv_blocks", "rgcn_conv_blocks_max_no_bias"}, fromPyGOf<RGCNConv>(),
       forwardWithEdgeTypesOf<RGCNConv>()},
      {"RGCNConv_max", {{"in_channels", 4}, {"out_channels", 5}, {"num_relations", 3}, {"aggr", "max"}},
       {"rgcn_conv_max", "rgcn_conv_bases_max"}, fromPyGOf<RGCNConv>(), forwardWithEdgeTypesOf<RGCNConv>()},
      {"FastRGCNConv", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}},
       {"fast_rgcn_conv", "fast_rgcn_conv_add_no_root", "fast_rgcn_conv_bases", "fast_rgcn_conv_no_bias_relations4"},
       fromPyGOf<FastRGCNConv>(), forwardWithEdgeTypesOf<FastRGCNConv>()},
      {"FastRGCNConv_blocks", {{"in_channels", 4}, {"out_channels", 6}, {"num_relations", 3}, {"num_blocks", 2}},
       {"fast_rgcn_conv_blocks", "fast_rgcn_conv_blocks_add"}, fromPyGOf<FastRGCNConv>(),
       forwardWithEdgeTypesOf<FastRGCNConv>()},
      // Edge e of type e % 3 (rgat_conv_relations4: a fourth without edges); each entry one path of the attention.
      {"RGATConv", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}},
       {"rgat_conv", "rgat_conv_heads2", "rgat_conv_heads2_mean", "rgat_conv_relations4"}, fromPyGOf<RGATConv>(),
       rgatForward(), 0, kRgatModParameters},
      {"RGATConv_within",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"concat", false},
        {"attention_mechanism", "within-relation"}},
       {"rgat_conv_within", "rgat_conv_within_heads2_mean_no_bias"}, fromPyGOf<RGATConv>(), rgatForward(), 0,
       kRgatModParameters},
      {"RGATConv_multiplicative",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"dim", 2},
        {"attention_mode", "multiplicative-self-attention"}},
       {"rgat_conv_multiplicative", "rgat_conv_multiplicative_heads2_dim2", "rgat_conv_multiplicative_heads2_dim2_mean",
        "rgat_conv_within_multiplicative_dim2"},
       fromPyGOf<RGATConv>(), rgatForward(), 0, kRgatModParameters},
      {"RGATConv_bases", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"num_bases", 2}},
       {"rgat_conv_bases", "rgat_conv_bases_within_multiplicative"}, fromPyGOf<RGATConv>(), rgatForward(), 0,
       kRgatModParameters},
      {"RGATConv_blocks",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"num_blocks", 2}, {"dim", 2},
        {"attention_mode", "multiplicative-self-attention"}},
       {"rgat_conv_blocks", "rgat_conv_blocks_multiplicative_dim2"}, fromPyGOf<RGATConv>(), rgatForward(), 0,
       kRgatModParameters},
      {"RGATConv_modAdditive",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"mod", "additive"}},
       {"rgat_conv_mod_additive", "rgat_conv_multiplicative_mod_additive_dim2"}, fromPyGOf<RGATConv>(),
       rgatForward(), 0, {"l1", "b1", "l2", "b2"}},
      {"RGATConv_modScaled",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"dim", 2}, {"mod", "scaled"},
        {"attention_mode", "multiplicative-self-attention"}},
       {"rgat_conv_mod_scaled", "rgat_conv_multiplicative_mod_scaled_dim2"}, fromPyGOf<RGATConv>(), rgatForward(), 0,
       {"w"}},
      {"RGATConv_modFAdditive",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"mod", "f-additive"},
        {"attention_mechanism", "within-relation"}},
       {"rgat_conv_mod_f_additive", "rgat_conv_within_multiplicative_mod_f_additive"}, fromPyGOf<RGATConv>(),
       rgatForward(), 0, kRgatModParameters},
      {"RGATConv_modFScaled",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"mod", "f-scaled"}},
       {"rgat_conv_mod_f_scaled", "rgat_conv_within_mod_f_scaled_heads2_mean"}, fromPyGOf<RGATConv>(),
       rgatForward(), 0, kRgatModParameters},
      {"RGATConv_edge", {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"heads", 2}, {"edge_dim", 3}},
       {"rgat_conv_edge", "rgat_conv_edge_within_multiplicative_dim2"}, fromPyGOf<RGATConv>(), rgatForward(), 3,
       kRgatModParameters},
      {"RGATConv_edge1",
       {{"in_channels", 4}, {"out_channels", 3}, {"num_relations", 3}, {"mod", "scaled"}, {"edge_dim", 1}},
       {"rgat_conv_edge1_mod_scaled"}, fromPyGOf<RGATConv>(), rgatForward(), 1, {"w"}},
      {"HeteroLinear", {{"in_channels", 4}, {"out_channels", 3}, {"num_types", 3}},
       {"hetero_linear", "hetero_linear_no_bias", "hetero_linear_types4"}, fromPyGOf<HeteroLinear>(),
       heteroLinearForward(false)},
      {"HeteroLinear_sorted", {{"in_channels", 4}, {"out_channels", 3}, {"num_types", 3}, {"is_sorted", true}},
       {"hetero_linear_sorted"}, fromPyGOf<HeteroLinear>(), heteroLinearForward(true)},
      {"TransformerConv", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"beta", true}},
       {"transformer_conv", "transformer_conv_heads2", "transformer_conv_no_root_no_bias",
        "transformer_conv_mean_beta"},
       fromPyGOf<TransformerConv>(), forwardWithEdgesOf<TransformerConv>()},
      {"TransformerConv_edge", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"edge_dim", 3}},
       {"transformer_conv_edge", "transformer_conv_edge_beta"}, fromPyGOf<TransformerConv>(),
       forwardWithEdgesOf<TransformerConv>(), 3},
      // nn's widths follow the table's channels: edge_dim -> in x out.
      {"NNConv", {{"in_channels", 4}, {"out_channels", 3}, {"nn", mlpSpec({3, 5, 12})}},
       {"nn_conv", "nn_conv_mean_no_root", "nn_conv_max_no_bias"}, nnConvFromTable(),
       forwardWithEdgesOf<NNConv>(), 3},
      // The table's own checks train: layer norm (per row), not batch norm (the batch-norm reference runs in
      // evaluation).
      {"GENConv", {{"in_channels", 4}, {"out_channels", 3}, {"learn_t", true}, {"msg_norm", true},
                   {"learn_msg_scale", true}, {"norm", "layer"}, {"bias", true}},
       {"gen_conv", "gen_conv_learn_t_msg_norm", "gen_conv_softmax_sg", "gen_conv_multi"}, fromPyGOf<GENConv>(),
       forwardWithEdgesOf<GENConv>()},
      {"GENConv_edge", {{"in_channels", 4}, {"out_channels", 4}, {"edge_dim", 3}, {"aggr", "powermean"}, {"p", 2.0},
                        {"norm", nullptr}},
       {"gen_conv_edge_powermean", "gen_conv_edge_same_width"}, fromPyGOf<GENConv>(), forwardWithEdgesOf<GENConv>(),
       3},
      {"EGConv", {{"in_channels", 4}, {"out_channels", 4}, {"aggregators", {"symnorm", "max", "std"}},
                  {"num_heads", 2}, {"num_bases", 3}},
       {"eg_conv", "eg_conv_multi_aggr", "eg_conv_no_self_loops_no_bias", "eg_conv_sum_min"},
       fromPyGOf<EGConv>(), forwardOf<EGConv>()},  // (the thread check's 40 channels: 20 per head)
      // Its own k-NN graph (the edges given are not read); k = 3.
      {"DynamicEdgeConv", {{"in_channels", 4}, {"out_channels", 3}, {"nn", mlpSpec({8, 8, 3})}, {"k", 3}},
       {"dynamic_edge_conv", "dynamic_edge_conv_mean_k10"}, fromPyGWithNnChannels<DynamicEdgeConv>(2),
       [](Module& m, const Variable& x, const Tensor&, const Variable&) {
         return static_cast<DynamicEdgeConv&>(m).forward(x);
       }},
      {"GeneralConv", {{"in_channels", 4}, {"out_channels", 3}, {"heads", 2}, {"attention", true}},
       {"general_conv", "general_conv_attention_heads", "general_conv_dot_product_undirected_l2"},
       fromPyGOf<GeneralConv>(), forwardWithEdgesOf<GeneralConv>()},
      {"GeneralConv_edge", {{"in_channels", 4}, {"out_channels", 4}, {"in_edge_channels", 3}, {"heads", 2},
                            {"attention", true}, {"attention_type", "dot_product"}, {"directed_msg", false}},
       {"general_conv_edge_mean_skip", "general_conv_edge_attention_max"}, fromPyGOf<GeneralConv>(),
       forwardWithEdgesOf<GeneralConv>(), 3},
  };
  return cases;
}

}  // namespace gnn::testing
