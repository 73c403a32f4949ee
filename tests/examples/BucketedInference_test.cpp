// Inference in a few batch shapes (--eval-buckets, loaders/ShapeBuckets.h) gives the bits of one shape: a
// real molecule's prediction does not depend on the padding or the shape of its batch. Checked on the models
// (GIN, Graphormer-slim, SchNet on molecule-shaped graphs: predictions bucketed vs one shape, the batches'
// padding as planned) and on the programs (pcqm4m_graphormer, molecule_property, qm7_schnet: a checkpoint
// scored with --eval-buckets 1 and 4 gives the same metrics and --predict files, and `predict` the same file
// again).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "app/MoleculeModel.h"
#include "app/MoleculePredictions.h"
#include "loaders/SyntheticGraphs.h"
#include "models/GraphormerMolecules.h"

namespace gnn {
namespace {
namespace fs = std::filesystem;
using testing::runExample;
using testing::lastJson;

// ---- the models ----

struct ModelCase {
  std::string model;
  int64_t graphSlots;  // the single shape's (batch size + 1)
};
void PrintTo(const ModelCase& c, std::ostream* os) {
  *os << c.model << " in batches of " << c.graphSlots << " slots";
}

std::unique_ptr<BlockModel> smallModel(app::MoleculeModelSpec& spec) {
  // Widths of whole 64-byte rows (16 floats). At other widths (GIN's default 300) layerNorm's row sums start
  // their vector lanes at an address-dependent element, so a molecule's last bits follow its rows' alignment,
  // that is its position in the batch, in one shape as in several (gnn/ops/NnOps.cpp).
  spec.layers = 2;
  spec.hidden = 32;
  spec.filters = 32;
  spec.gaussians = 16;
  spec.multiHopMaxDist = 5;
  spec.tasks = 1;
  return app::makeMoleculeModel(spec, 3);
}

bool sameBits(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.data<float>(), b.data<float>(), a.nbytes()) == 0;
}

class BucketedModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(BucketedModels, PredictionsAreTheBitsOfOneShape) {
  app::MoleculeModelSpec spec;
  spec.model = GetParam().model;
  std::unique_ptr<BlockModel> model = smallModel(spec);
  // GIN and Graphormer: the first molecules of the shipped PCQM4Mv2-style set (3 to 51 atoms); SchNet: random
  // molecule-shaped graphs with coordinates, one in ten of up to 36 atoms. One shape pays for the largest.
  auto raw = std::make_shared<InMemoryDataset>();
  if (spec.isSchNet()) {
    Generator g(11);
    for (int64_t i = 0; i < 96; ++i) raw->push(test::graphormerGraph(g, 1, i % 10 == 0 ? 36 : 14, 5));
  } else {
    for (Graph& m : test::pcqmStyle(96, 51)) raw->push(std::move(m));
  }
  ASSERT_EQ(raw->size(), 96u);
  std::shared_ptr<const Dataset> ds = spec.view(raw);
  const FixedSizeOptions one = FixedSizeOptions::fromDataset(*ds, GetParam().graphSlots);
  std::vector<int64_t> positions;  // every molecule, in an order that is not the dataset's
  for (int64_t i = 0; i < static_cast<int64_t>(ds->size()); ++i) positions.push_back((i * 37) % 96);
  const ShapeBuckets buckets = app::inferenceBuckets(*ds, positions, one, 4, spec.isGraphormer());
  ASSERT_GE(buckets.size(), 2) << buckets.toString();
  const TargetScaling scaling = TargetScaling::identity();
  const auto regression = app::MoleculeTask::Regression;
  app::MoleculePredictions a = app::predictMolecules(*model, 1, ds, positions, one, scaling, regression);
  app::MoleculePredictions b = app::predictMolecules(*model, 1, ds, positions, buckets, scaling, regression);
  EXPECT_EQ(a.positions, b.positions);
  EXPECT_TRUE(b.skipped.empty());
  for (int64_t r = 0; r < a.pred.dim(0); ++r)
    ASSERT_EQ(a.pred.at(r), b.pred.at(r))
        << spec.model << ": molecule " << a.positions[static_cast<size_t>(r)] << " ("
        << ds->numNodes(static_cast<size_t>(a.positions[static_cast<size_t>(r)])) << " atoms) in "
        << buckets.toString();
  EXPECT_TRUE(sameBits(a.pred, b.pred));
  EXPECT_TRUE(sameBits(a.target, b.target));
  // The batches' padding is the planned one, and less of it than one shape's.
  const bool pairs = raw->get(0).spatialPos.defined();  // node-pair blocks in the batches
  const PaddingReport planned = plannedPadding(ds, positions, buckets, pairs);
  EXPECT_EQ(b.padding.toJson(), planned.toJson());
  EXPECT_EQ(b.padding.realNodes, a.padding.realNodes);
  EXPECT_LT(b.padding.totalNodes, a.padding.totalNodes);
  if (spec.isGraphormer()) {
    EXPECT_GT(b.padding.totalNodePairs, 0);
    EXPECT_LT(b.padding.totalNodePairs, a.padding.totalNodePairs / 2)
        << b.padding.toString() << " vs " << a.padding.toString();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BucketedModels,
                         ::testing::Values(ModelCase{"gin", 33}, ModelCase{"slim", 17},
                                           ModelCase{"schnet", 17}),
                         [](const auto& info) { return info.param.model; });

// ---- the programs ----

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class BucketedPrograms : public gnn::testing::ScratchFolderTest {
 protected:
  // Trains `args` for one epoch with --eval-buckets 4 (the default) and scores the checkpoint again with
  // --eval-buckets 1: the same metrics and --predict file; the JSON's evaluation padding for both.
  std::pair<nlohmann::json, nlohmann::json> trainThenScoreWithOneShape(const std::string& program,
                                                                       const std::string& args) {
    const std::string ck = path("run.ckpt");
    testing::ProgramResult a =
        runExample(program, args + " --epochs 1 --json --save " + ck + " --predict " + path("buckets.csv"));
    EXPECT_EQ(a.code, 0) << a.out;
    testing::ProgramResult b = runExample(
        program, "--load " + ck + " --epochs 1 --eval-buckets 1 --json --predict " + path("one.csv"));
    EXPECT_EQ(b.code, 0) << b.out;
    nlohmann::json ja = lastJson(a.out), jb = lastJson(b.out);
    EXPECT_EQ(ja["eval_buckets"], 4);
    EXPECT_EQ(jb["eval_buckets"], 1);
    EXPECT_TRUE(jb["evaluation_only"].get<bool>());
    // --eval-buckets is recorded in the checkpoint's configuration, as a flag an evaluation may change.
    EXPECT_EQ(jb["changed_from_checkpoint"], nlohmann::json::array({"eval-buckets"}));
    // Exact numbers (null where a set has no labels, as PCQM4Mv2's test molecules).
    EXPECT_TRUE(ja["valid_metric"].is_number());
    for (const char* k : {"valid_metric", "test_metric"}) EXPECT_EQ(ja[k], jb[k]) << k;
    const std::string bucketed = fileText(path("buckets.csv")), one = fileText(path("one.csv"));
    EXPECT_GT(bucketed.size(), 100u);
    EXPECT_EQ(bucketed, one);
    for (const char* set : {"valid", "test"}) {
      const nlohmann::json& pa = ja["eval_padding"][set];
      const nlohmann::json& pb = jb["eval_padding"][set];
      EXPECT_GE(pa["shapes"].size(), 2u) << set << ": " << pa.dump();
      EXPECT_EQ(pb["shapes"].size(), 1u);
      // One shape's padding as planned is the padding its batches had.
      EXPECT_EQ(pb["single_shape_padding"]["total_nodes"], pb["total_nodes"]);
      EXPECT_EQ(pa["single_shape_padding"], pb["single_shape_padding"]);
      EXPECT_EQ(pa["real_nodes"], pb["real_nodes"]);
      EXPECT_LT(pa["total_nodes"].get<int64_t>(), pb["total_nodes"].get<int64_t>()) << set;
    }
    EXPECT_GT(ja["eval_node_efficiency"].get<double>(), jb["eval_node_efficiency"].get<double>());
    return {ja, jb};
  }
};

// Graphormer-slim: the node-pair blocks take the side of each bucket, not of the largest molecule.
TEST_F(BucketedPrograms, GraphormerScoresAndPredictionsAreTheBitsOfOneShape) {
  auto [ja, jb] = trainThenScoreWithOneShape("pcqm4m_graphormer", "--limit 200 --batch-size 32");
  EXPECT_GT(ja["eval_node_pair_efficiency"].get<double>(), 2 * jb["eval_node_pair_efficiency"].get<double>());
  EXPECT_LT(ja["eval_padding"]["valid"]["total_node_pairs"].get<int64_t>(),
            jb["eval_padding"]["valid"]["total_node_pairs"].get<int64_t>() / 2);
}

// GIN (at a width of whole 64-byte rows, see above): and `predict` on the test molecules, given in reverse
// order and batched in buckets of their own, writes the single shape's predictions again.
TEST_F(BucketedPrograms, GinScoresAndPredictionsAreTheBitsOfOneShapeAndOfPredict) {
  trainThenScoreWithOneShape("molecule_property", "--limit 600 --hidden 64 --layers 3");
  std::ifstream in(path("one.csv"));
  std::string header, line;
  std::getline(in, header);
  std::vector<std::pair<std::string, std::string>> rows;  // smiles, prediction
  while (std::getline(in, line)) {
    const size_t c2 = line.find(',', line.find(',') + 1), c3 = line.rfind(',');
    rows.push_back({line.substr(c2 + 1, c3 - c2 - 1), line.substr(c3 + 1)});
  }
  ASSERT_GT(rows.size(), 20u);
  {
    std::ofstream smi(path("test.smi"));
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) smi << it->first << "\n";
  }
  testing::ProgramResult p =
      runExample("predict", "--checkpoint " + path("run.ckpt") + " --input " + path("test.smi") + " --out " +
                                path("again.csv") + " --eval-buckets 4");
  ASSERT_EQ(p.code, 0) << p.out;
  EXPECT_NE(p.out.find("batches in "), std::string::npos) << p.out;
  std::ifstream again(path("again.csv"));
  std::getline(again, header);
  std::vector<std::string> predicted;
  while (std::getline(again, line)) predicted.push_back(line.substr(line.rfind(',') + 1));
  ASSERT_EQ(predicted.size(), rows.size());
  for (size_t k = 0; k < rows.size(); ++k)
    EXPECT_EQ(predicted[rows.size() - 1 - k], rows[k].second) << rows[k].first;
}

// SchNet: buckets of fewer atoms and neighbour pairs.
TEST_F(BucketedPrograms, SchNetScoresAndPredictionsAreTheBitsOfOneShape) {
  trainThenScoreWithOneShape("qm7_schnet", "--limit 240");
}

}  // namespace
}  // namespace gnn
