// Molecule-level features (app/MoleculeFeatures.h): scaling statistics from the training rows only, non-finite
// values replaced, the user's file matched to molecules by their index in the input (rejected ones included), the
// same predictions whatever the padding, and end to end: molecule_property --molecule-features rdkit2d (and a
// features file) with `predict` reproducing --predict bit for bit, and checkpoints whose features cannot be
// reproduced refused.
#include "app/MoleculeFeatures.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "PredictionsFile.h"
#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"
#include "app/MoleculePredictions.h"
#include "data/NpzWriter.h"
#include "gnn/io/Checkpoint.h"
#include "models/Dmpnn.h"
#include "models/OgbMolGIN.h"

namespace gnn {
namespace {
using gnn::testing::kEsolCsv;
namespace fs = std::filesystem;
using testing::ProgramResult;
using testing::expectUsageError;
using testing::runExample;
using testing::lastJson;
using Row = testing::PredictionRow;
using testing::readPredictions;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class MoleculeFeatures : public gnn::testing::ScratchFolderTest {
 protected:
  // A dataset built from SMILES lines (rejected ones are recorded, not kept).
  std::shared_ptr<NpzDataset> build(const std::vector<std::string>& smiles) const {
    {
      std::ofstream smi(path("in.smi"));
      for (const auto& s : smiles) smi << s << "\n";
    }
    app::buildMoleculeDataset(path("in.smi"), "", "smiles", nlohmann::json::object(), 2, path("in.npz"));
    return std::make_shared<NpzDataset>(path("in.npz"));
  }
};

TEST_F(MoleculeFeatures, ScalingStatisticsComeFromTheTrainingRowsOnly) {
  app::MoleculeFeatureMatrix m;
  m.rows = 4;
  m.width = 3;
  m.computedWidth = 1;
  m.names = {"morgan_0", "a", "b"};
  m.fingerprint = {1, 0, 0};
  const double inf = std::numeric_limits<double>::infinity();
  m.values = {1, 2, 5,  //
              0, 100, 5,
              1, kNaN, 5,
              0, 4, inf};
  app::MoleculeFeatureScaling s = app::MoleculeFeatureScaling::fit(m, {0, 2, 3}, "morgan", "f.csv", "auto");
  EXPECT_EQ(s.scaled, (std::vector<uint8_t>{0, 1, 1}));  // auto: fingerprints stay as they are
  EXPECT_EQ(s.mean[0], 0.0);
  EXPECT_EQ(s.std[0], 1.0);
  EXPECT_EQ(s.mean[1], 3.0);  // rows 0 and 3 (row 1 is not a training row, row 2's value is missing)
  EXPECT_EQ(s.std[1], 1.0);   // population std of {2, 4}
  EXPECT_EQ(s.mean[2], 5.0);  // the inf is left out; a constant column keeps std 1
  EXPECT_EQ(s.std[2], 1.0);
  std::vector<float> v = s.apply(m);
  EXPECT_EQ(v, (std::vector<float>{1, -1, 0,  //
                                   0, 97, 0,
                                   1, 0, 0,   // NaN -> the training mean, 0 after standardisation
                                   0, 1, 0}));  // inf too
  app::MoleculeFeatureScaling all = app::MoleculeFeatureScaling::fit(m, {0, 1, 2, 3}, "morgan", "", "standard");
  EXPECT_EQ(all.scaled, (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(all.mean[0], 0.5);
  EXPECT_EQ(app::MoleculeFeatureScaling::fit(m, {0}, "morgan", "", "none").scaled, (std::vector<uint8_t>{0, 0, 0}));
  // What checkpoints keep reads back to the same bits.
  app::MoleculeFeatureScaling back = app::MoleculeFeatureScaling::fromJson(s.toJson(), "x.ckpt");
  EXPECT_EQ(back.apply(m), v);
  EXPECT_EQ(back.names, s.names);
  nlohmann::json broken = s.toJson();
  broken["std"][1] = 0.0;
  try {
    app::MoleculeFeatureScaling::fromJson(broken, "x.ckpt");
    FAIL() << "a zero std was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("x.ckpt: configuration 'derived.molecule_features'"), std::string::npos)
        << e.what();
  }
}

// Quantile scaling: each value becomes its empirical CDF over the training rows' 101 quantiles, bounded in
// [0, 1]; an outlier far beyond the training values (RDKit's Kappa3 on small molecules) stays at 1.
TEST_F(MoleculeFeatures, QuantileScalingIsTheTrainingCdf) {
  app::MoleculeFeatureMatrix m;
  m.rows = 9;
  m.width = 2;
  m.computedWidth = 1;
  m.names = {"kappa3", "file_a"};
  m.fingerprint = {0, 0};
  m.values = {1, 7, 2, 7, 3, 7, 4, 7, 5, 7,  // training rows 0..4: 1..5; column 1 constant
              3, 7, 2.5, 7, 1e6, 0, kNaN, kNaN};
  app::MoleculeFeatureScaling s = app::MoleculeFeatureScaling::fit(m, {0, 1, 2, 3, 4}, "rdkit2d", "f.csv", "auto");
  EXPECT_EQ(s.scaled, (std::vector<uint8_t>{2, 1}));  // auto: computed descriptors by quantiles, the file standardised
  ASSERT_EQ(s.quantiles[0].size(), 101u);
  EXPECT_DOUBLE_EQ(s.quantiles[0][25], 2.0);  // position 4 * 25 / 100 = 1 of the sorted 1..5
  std::vector<float> v = s.apply(m);
  EXPECT_FLOAT_EQ(v[0], 0.0f);    // the minimum: the first knot
  EXPECT_FLOAT_EQ(v[8], 1.0f);    // the maximum: the last knot
  EXPECT_FLOAT_EQ(v[10], 0.5f);   // 3: the median knot (50 of 100)
  EXPECT_NEAR(v[12], 0.375f, 1e-6);  // 2.5: halfway between knots 37 (2.48) and 38 (2.52)
  EXPECT_FLOAT_EQ(v[14], 1.0f);   // an outlier above every training value stays at 1
  EXPECT_FLOAT_EQ(v[16], 0.5f);   // missing: the median
  EXPECT_FLOAT_EQ(v[1], 0.0f);    // a constant standardised column: 0
  // A run of equal knots maps to its middle: a constant column by quantiles gives 0.5 for its value.
  app::MoleculeFeatureScaling q = app::MoleculeFeatureScaling::fit(m, {0, 1, 2, 3, 4}, "rdkit2d", "", "quantile");
  EXPECT_EQ(q.scaled, (std::vector<uint8_t>{2, 2}));
  EXPECT_FLOAT_EQ(q.apply(m)[1], 0.5f);
  EXPECT_FLOAT_EQ(q.apply(m)[15], 0.0f);  // below the constant: 0
  app::MoleculeFeatureScaling back = app::MoleculeFeatureScaling::fromJson(s.toJson(), "x.ckpt");
  EXPECT_EQ(back.apply(m), v);
  nlohmann::json unsorted = s.toJson();
  unsorted["quantiles"][0][3] = 100.0;
  EXPECT_THROW(app::MoleculeFeatureScaling::fromJson(unsorted, "x.ckpt"), std::runtime_error);
}

TEST_F(MoleculeFeatures, FileRowsFollowTheInputIncludingRejectedMolecules) {
  auto ds = build({"CCO", "C1CC", "c1ccccc1O", "CC(=O)O"});  // line 2 is rejected
  ASSERT_EQ(ds->size(), 3u);
  std::ofstream(path("f.csv")) << "x,y\n0,0.5\n1,1.5\n2,\n3,3.5\n";
  app::MoleculeFeatureMatrix m = app::computeMoleculeFeatures("rdkit2d", path("f.csv"), *ds, 3, 2);
  ASSERT_EQ(m.width, 129 + 2);
  EXPECT_EQ(m.names[129], "x");
  EXPECT_TRUE(m.fileHasHeader);
  EXPECT_EQ(m.values[static_cast<size_t>(0 * m.width + 129)], 0.0);
  EXPECT_EQ(m.values[static_cast<size_t>(1 * m.width + 129)], 2.0);  // phenol is the input's molecule 2
  EXPECT_TRUE(std::isnan(m.values[static_cast<size_t>(1 * m.width + 130)]));  // an empty field: missing
  EXPECT_EQ(m.values[static_cast<size_t>(2 * m.width + 130)], 3.5);
  EXPECT_TRUE(m.unparsed.empty());
  // The same values from an .npz without names.
  {
    NpzWriter w(path("f.npz"));
    const double values[] = {0, 0.5, 1, 1.5, 2, kNaN, 3, 3.5};
    const int features = w.addArray("features", "<f8", sizeof(double), {2});
    w.append(features, values, sizeof values);
    w.finish();
  }
  app::MoleculeFeatureMatrix n = app::computeMoleculeFeatures("", path("f.npz"), *ds, 3, 1);
  ASSERT_EQ(n.width, 2);
  EXPECT_EQ(n.names[0], "file_0");
  EXPECT_EQ(n.values[2], 2.0);
  // Too few rows, and a value that is no number, are named with the file.
  std::ofstream(path("short.csv")) << "1\n2\n";
  EXPECT_THROW(app::computeMoleculeFeatures("", path("short.csv"), *ds, 3, 1), std::runtime_error);
  std::ofstream(path("bad.csv")) << "1,2\n3,x\n";
  try {
    app::computeMoleculeFeatures("", path("bad.csv"), *ds, 3, 1);
    FAIL() << "'x' was read as a number";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2"), std::string::npos) << e.what();
  }
}

// The model's outputs for a molecule are the same bits alone in a batch, among others, or with more padding.
TEST_F(MoleculeFeatures, PaddingDoesNotChangeAPrediction) {
  auto ds = build({"CCO", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O", "Cn1cnc2c1c(=O)n(C)c(=O)n2C", "[Na+].[Cl-]",
                   "CCN(CC)CC", "O=C(O)c1ccncc1"});
  const int64_t n = static_cast<int64_t>(ds->size());
  app::MoleculeFeatureMatrix m = app::computeMoleculeFeatures("rdkit2d", "", *ds, n, 2);
  app::MoleculeFeatureScaling s = app::MoleculeFeatureScaling::fit(m, {0, 1, 2, 3, 4}, "rdkit2d", "", "auto");
  auto featured = std::make_shared<app::MoleculeFeatureDataset>(ds, s.apply(m), s.width);
  ASSERT_TRUE(featured->get(4).graphFeatures.defined());
  Generator gen(3);
  DmpnnOptions dopt;
  dopt.hidden = 32;
  dopt.ffnHidden = 16;
  dopt.graphFeatures = s.width;
  GraphModelOptions gopt;
  gopt.layers = 2;
  gopt.hidden = 16;
  gopt.graphFeatures = s.width;
  std::vector<std::unique_ptr<BlockModel>> models;
  models.push_back(std::make_unique<Dmpnn>(dopt, gen));
  models.push_back(std::make_unique<OgbMolGIN>(gopt, gen));
  std::vector<int64_t> everyone(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) everyone[static_cast<size_t>(i)] = i;
  FixedSizeOptions tight = FixedSizeOptions::fromDataset(*featured, 3), loose = tight;
  loose.numNodes *= 3;
  loose.numEdges *= 3;
  loose.numGraphs = 9;
  for (auto& model : models) {
    const TargetScaling none = TargetScaling::identity();
    app::MoleculePredictions all =
        app::predictMolecules(*model, 1, featured, everyone, tight, none, app::MoleculeTask::Regression);
    app::MoleculePredictions padded =
        app::predictMolecules(*model, 1, featured, everyone, loose, none, app::MoleculeTask::Regression);
    for (int64_t i = 0; i < n; ++i) {
      app::MoleculePredictions alone =
          app::predictMolecules(*model, 1, featured, {i}, loose, none, app::MoleculeTask::Regression);
      EXPECT_EQ(alone.pred.at(0), all.pred.at(i)) << "molecule " << i;
      EXPECT_EQ(padded.pred.at(i), all.pred.at(i)) << "molecule " << i;
    }
    // The features reach the output: other features, other predictions.
    std::vector<float> shifted = s.apply(m);
    for (float& v : shifted) v += 1;
    auto other = std::make_shared<app::MoleculeFeatureDataset>(ds, shifted, s.width);
    app::MoleculePredictions moved =
        app::predictMolecules(*model, 1, other, everyone, tight, none, app::MoleculeTask::Regression);
    EXPECT_NE(moved.pred.at(0), all.pred.at(0));
  }
}

// --- The programs ---------------------------------------------------------------------------------------------

const std::string kRun = "--model dmpnn --data " + kEsolCsv +
                         " --target-cols 'measured log solubility in mols per litre' --limit 200 --split random "
                         "--batch-size 50 --epochs 2 --hidden 64 --ffn-hidden-dim 32 --quiet --json --threads 2";

TEST_F(MoleculeFeatures, Rdkit2dEndToEndAndPredictReproducesIt) {
  const std::string ck = path("r.ckpt"), pred = path("test.csv");
  ProgramResult r = runExample("molecule_property", kRun + " --molecule-features rdkit2d --save " + ck +
                                                        " --predict " + pred, false);
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json j = lastJson(r.out);
  EXPECT_EQ(j["molecule_features"], "rdkit2d");
  EXPECT_EQ(j["molecule_features_width"], 129);
  // Without features: W_i 187 x 64, W_h 64 x 64, W_o (174 + 64) x 64 + 64, FFN 64 x 32 + 32, 32 x 1 + 1; the FFN's
  // first layer reads 129 more inputs.
  EXPECT_EQ(j["parameters"], 187 * 64 + 64 * 64 + 238 * 64 + 64 + (64 + 129) * 32 + 32 + 32 + 1);
  Checkpoint saved = Checkpoint::load(ck);
  const nlohmann::json& f = saved.meta["config"]["derived"]["molecule_features"];
  EXPECT_EQ(f["kind"], "rdkit2d");
  EXPECT_EQ(f["width"], 129);
  EXPECT_EQ(f["names"][0], "exactmw");
  EXPECT_EQ(saved.meta["config"]["molecule_features"], "rdkit2d");
  std::vector<Row> rows = readPredictions(pred);
  ASSERT_GT(rows.size(), 10u);
  std::reverse(rows.begin(), rows.end());
  testing::expectPredictReproduces(ck, rows, path("t.smi"), path("again.csv"), "--threads 1");

  // Checkpoints whose features cannot be reproduced are refused, naming what differs.
  ProgramResult extra = runExample("predict", "--checkpoint " + ck + " --input " + path("t.smi") + " --out " +
                                                  path("x.csv") + " --molecule-features-file " + pred);
  expectUsageError(extra, "was trained without a features file; drop the flag");
  Checkpoint other = saved;
  other.meta["config"]["derived"]["molecule_features"]["names"][5] = "NumWidgets";
  other.save(path("other.ckpt"));
  ProgramResult renamed = runExample("predict", "--checkpoint " + path("other.ckpt") + " --input " + path("t.smi") +
                                                    " --out " + path("x.csv"));
  EXPECT_EQ(renamed.code, 1) << renamed.out;
  EXPECT_NE(renamed.out.find("its molecule features cannot be reproduced here: column 5 was NumWidgets"),
            std::string::npos)
      << renamed.out;
  Checkpoint lost = saved;
  lost.meta["config"]["derived"].erase("molecule_features");
  lost.save(path("lost.ckpt"));
  ProgramResult gone = runExample("predict", "--checkpoint " + path("lost.ckpt") + " --input " + path("t.smi") +
                                                 " --out " + path("x.csv"));
  EXPECT_EQ(gone.code, 1) << gone.out;
  EXPECT_NE(gone.out.find("names --molecule-features rdkit2d but holds no 'derived.molecule_features'"),
            std::string::npos)
      << gone.out;
  // Continuing it with other features contradicts the checkpoint.
  expectUsageError(runExample("molecule_property", kRun + " --molecule-features morgan --load " + ck),
                   "--molecule-features morgan contradicts");
  // Models that read no molecule features refuse them.
  expectUsageError(runExample("pcqm4m_graphormer", "--molecule-features rdkit2d --epochs 0"),
                   "--molecule-features applies to --model gin, gcn and dmpnn");
  expectUsageError(runExample("molecule_property", kRun + " --molecule-features rdkit3d"),
                   "--molecule-features 'rdkit3d': must be one of morgan, morgan-count, rdkit2d");
  expectUsageError(runExample("molecule_property", kRun + " --molecule-features-scaling none"),
                   "--molecule-features-scaling applies with --molecule-features or --molecule-features-file");
}

TEST_F(MoleculeFeatures, FeaturesFileEndToEndAndPredictNeedsItsOwn) {
  // Two columns per molecule of the input file (1,128 lines of ESOL), a function of its index.
  const int64_t molecules = 1128;
  {
    std::ofstream f(path("esol_features.csv"));
    f << "index_mod_7,root\n";
    for (int64_t i = 0; i < molecules; ++i) f << i % 7 << "," << std::sqrt(static_cast<double>(i)) << "\n";
  }
  const std::string ck = path("f.ckpt"), pred = path("test.csv");
  ProgramResult r = runExample("molecule_property", kRun + " --molecule-features morgan --molecule-features-file " +
                                                        path("esol_features.csv") + " --save " + ck + " --predict " +
                                                        pred, false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(lastJson(r.out)["molecule_features_width"], 2048 + 2);
  const nlohmann::json f = Checkpoint::load(ck).meta["config"]["derived"]["molecule_features"];
  EXPECT_EQ(f["scaled"][0], 0);     // a Morgan bit
  EXPECT_EQ(f["scaled"][2048], 1);  // the file's columns
  EXPECT_EQ(f["names"][2049], "root");

  std::vector<Row> rows = readPredictions(pred);
  ASSERT_GT(rows.size(), 10u);
  std::reverse(rows.begin(), rows.end());
  // predict's own file: the rows of these molecules (the CSV's id is the molecule's index in ESOL), in order.
  {
    std::ofstream g(path("test_features.csv"));
    g << "index_mod_7,root\n";
    for (const Row& row : rows) {
      const int64_t i = std::stoll(row.id);
      g << i % 7 << "," << std::sqrt(static_cast<double>(i)) << "\n";
    }
  }
  testing::expectPredictReproduces(ck, rows, path("t.smi"), path("again.csv"),
                                   "--threads 1 --molecule-features-file " + path("test_features.csv"));
  ProgramResult without = runExample("predict", "--checkpoint " + ck + " --input " + path("t.smi") + " --out " +
                                                    path("x.csv"));
  expectUsageError(without, "give --molecule-features-file FILE with the same columns");
  {
    std::ofstream w(path("wide.csv"));
    for (size_t k = 0; k < rows.size(); ++k) w << "1,2,3\n";
  }
  ProgramResult wide = runExample("predict", "--checkpoint " + ck + " --input " + path("t.smi") + " --out " +
                                                 path("x.csv") + " --molecule-features-file " + path("wide.csv"));
  EXPECT_EQ(wide.code, 1) << wide.out;
  EXPECT_NE(wide.out.find("the features file had 2 columns"), std::string::npos) << wide.out;
}

}  // namespace
}  // namespace gnn
