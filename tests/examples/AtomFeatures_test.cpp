// The user's atom features (--atom-features; app/AtomFeatures.h, data/AtomFeatureFile.h): both file layouts read
// to the same values, bad files named with their line; scaling statistics from the training atoms only; rows
// matched to molecules by their index in the input (rejected ones included) and checked against each parsed
// molecule's atoms; and end to end: molecule_property --atom-features (dmpnn, gin) trains, `predict` with the
// new molecules' own file reproduces --predict bit for bit in another order and batch shape, and bad files,
// widths and flags are refused clearly.
#include "app/AtomFeatures.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "PredictionsFile.h"
#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"
#include "data/NpzWriter.h"
#include "gnn/io/Checkpoint.h"

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

// Writes `values` [rows, width] float64 and `ptr` as the .npz layout.
void writeNpz(const std::string& path, const std::vector<double>& values, int64_t width, const std::vector<int64_t>& ptr,
              bool withPtr = true) {
  NpzWriter w(path);
  const int f = w.addArray("features", "<f8", sizeof(double), {width});
  w.append(f, values.data(), values.size() * sizeof(double));
  if (withPtr) {
    const int p = w.addArray("atom_ptr", "<i8", sizeof(int64_t));
    w.append(p, ptr.data(), ptr.size() * sizeof(int64_t));
  }
  w.finish();
}

// The same as CSV lines molecule,atom,f1..fk with every double exactly (%.17g; nan for missing).
void writeCsv(const std::string& path, const std::vector<double>& values, int64_t width, const std::vector<int64_t>& ptr,
              const std::string& header = "") {
  std::ofstream out(path);
  if (!header.empty()) out << header << "\n";
  char buf[64];
  for (size_t m = 0; m + 1 < ptr.size(); ++m)
    for (int64_t a = ptr[m]; a < ptr[m + 1]; ++a) {
      out << m << "," << a - ptr[m];
      for (int64_t c = 0; c < width; ++c) {
        std::snprintf(buf, sizeof buf, "%.17g", values[static_cast<size_t>(a * width + c)]);
        out << "," << (std::isnan(values[static_cast<size_t>(a * width + c)]) ? "nan" : buf);
      }
      out << "\n";
    }
}

// Atom features that are a function of the molecule alone (so any order of the same molecules gets the same
// rows): the atom's degree one-hot (0..4, binary columns) and a value of its element and position, missing on
// atom 0 of molecules whose atom count is a multiple of 5.
constexpr int64_t kWidth = 6;
void atomRows(const Graph& g, std::vector<double>& out) {
  std::vector<int64_t> degree(static_cast<size_t>(g.numNodes), 0);
  for (int64_t e = 0; e < g.numEdges(); ++e) ++degree[static_cast<size_t>(g.edgeIndex.at(e))];
  for (int64_t a = 0; a < g.numNodes; ++a) {
    for (int64_t d = 0; d < 5; ++d) out.push_back(std::min<int64_t>(degree[static_cast<size_t>(a)], 4) == d ? 1.0 : 0.0);
    out.push_back(a == 0 && g.numNodes % 5 == 0 ? kNaN : g.x.at(a * g.x.cols()) * 0.37 + static_cast<double>(a) * 0.11);
  }
}

// The file for every molecule of `ds`'s input (0 rows for one it rejected), in the input's order.
void featuresFor(const NpzDataset& ds, std::vector<double>& values, std::vector<int64_t>& ptr) {
  std::map<int64_t, size_t> position;
  int64_t molecules = 0;
  for (size_t i = 0; i < ds.size(); ++i) {
    position[ds.sourceIndex(i)] = i;
    molecules = std::max(molecules, ds.sourceIndex(i) + 1);
  }
  values.clear();
  ptr.assign(1, 0);
  for (int64_t m = 0; m < molecules; ++m) {
    if (auto it = position.find(m); it != position.end()) atomRows(ds.get(it->second), values);
    ptr.push_back(static_cast<int64_t>(values.size()) / kWidth);
  }
}

class AtomFeatures : public gnn::testing::ScratchFolderTest {
 protected:
  std::shared_ptr<NpzDataset> build(const std::string& input, const std::string& name) const {
    app::buildMoleculeDataset(input, "", "smiles", nlohmann::json::object(), 2, path(name));
    return std::make_shared<NpzDataset>(path(name));
  }
  std::shared_ptr<NpzDataset> buildSmiles(const std::vector<std::string>& smiles) const {
    {
      std::ofstream smi(path("in.smi"));
      for (const auto& s : smiles) smi << s << "\n";
    }
    return build(path("in.smi"), "in.npz");
  }
};

template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(AtomFeatures, BothLayoutsReadTheSameAndBadFilesAreNamed) {
  // Molecule 0: 2 atoms, molecule 1: none, molecule 2: 3 atoms; two columns, one value missing.
  const std::vector<double> v = {0.5, 1, -2, 3, 4, kNaN, 6, 7, 8.25, 9};
  const std::vector<int64_t> ptr = {0, 2, 2, 5};
  writeNpz(path("a.npz"), v, 2, ptr);
  writeCsv(path("a.csv"), v, 2, ptr, "molecule,atom,charge,size");
  AtomFeatureFile n = AtomFeatureFile::read(path("a.npz")), c = AtomFeatureFile::read(path("a.csv"));
  for (const AtomFeatureFile* f : {&n, &c}) {
    EXPECT_EQ(f->molecules, 3);
    EXPECT_EQ(f->width, 2);
    EXPECT_EQ(f->ptr, ptr);
    EXPECT_EQ(f->atoms(1), 0);
    EXPECT_EQ(f->row(2)[0], 4.0);
    EXPECT_TRUE(std::isnan(f->row(2)[1]));
    EXPECT_EQ(f->row(2)[4], 8.25);
  }
  EXPECT_EQ(c.names, (std::vector<std::string>{"charge", "size"}));
  EXPECT_TRUE(c.header);
  EXPECT_EQ(n.names, (std::vector<std::string>{"file_0", "file_1"}));

  writeNpz(path("noptr.npz"), v, 2, ptr, false);
  EXPECT_NE(errorOf([&] { AtomFeatureFile::read(path("noptr.npz")); }).find("noptr.npz: no array 'atom_ptr'"),
            std::string::npos);
  writeNpz(path("short.npz"), v, 2, {0, 2, 4});
  EXPECT_NE(errorOf([&] { AtomFeatureFile::read(path("short.npz")); })
                .find("short.npz: atom_ptr ends at 4 but 'features' has 5 rows"),
            std::string::npos);
  std::ofstream(path("order.csv")) << "0,0,1\n0,1,2\n0,3,3\n";
  EXPECT_NE(errorOf([&] { AtomFeatureFile::read(path("order.csv")); })
                .find("order.csv:3: molecule 0, atom 3: expected atom 2"),
            std::string::npos);
  std::ofstream(path("back.csv")) << "1,0,1\n0,0,2\n";
  EXPECT_NE(errorOf([&] { AtomFeatureFile::read(path("back.csv")); }).find("back.csv:2: molecule 0 after molecule 1"),
            std::string::npos);
  std::ofstream(path("word.csv")) << "0,0,1\n0,1,x\n";
  EXPECT_NE(errorOf([&] { AtomFeatureFile::read(path("word.csv")); }).find("word.csv:2: column 3 is 'x'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { AtomFeatureFile::read(path("none.npz")); }).find("none.npz: no such file"), std::string::npos);
}

TEST_F(AtomFeatures, ScalingStatisticsComeFromTheTrainingAtomsOnly) {
  app::AtomFeatureMatrix m;
  m.rows = 3;
  m.width = 3;
  m.ptr = {0, 2, 3, 5};
  m.names = {"onehot", "value", "gaps"};
  m.values = {1, 2, 5,     // molecule 0
              0, 4, kNaN,  //
              1, 100, 7,   // molecule 1 (not a training molecule)
              0, kNaN, 1,  // molecule 2
              1, 6, 3};
  app::AtomFeatureScaling s = app::AtomFeatureScaling::fit(m, {0, 2}, "a.npz", "auto");
  EXPECT_EQ(s.scaled, (std::vector<uint8_t>{0, 1, 1}));  // auto: a 0/1 column stays as given
  EXPECT_EQ(s.mean[0], 0.5);
  EXPECT_EQ(s.mean[1], 4.0);  // 2, 4, 6: molecule 1's 100 and the missing value are left out
  EXPECT_DOUBLE_EQ(s.std[1], std::sqrt(8.0 / 3));
  EXPECT_EQ(s.mean[2], 3.0);  // 5, 1, 3
  std::vector<float> v = s.apply(m);
  ASSERT_EQ(v.size(), 15u);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[4], 0.0f);                                                       // 4 is the mean
  EXPECT_EQ(v[5], 0.0f);                                                       // missing: the mean, 0 once scaled
  EXPECT_EQ(v[10], 0.0f);                                                      // missing too
  EXPECT_FLOAT_EQ(v[7], static_cast<float>((100 - 4) / std::sqrt(8.0 / 3)));   // scaled with the training statistics
  m.values[0] = kNaN;
  EXPECT_EQ(s.apply(m)[0], 0.5f);  // a missing value in an unscaled column: its training mean
  EXPECT_EQ(app::AtomFeatureScaling::fit(m, {0, 2}, "", "standard").scaled, (std::vector<uint8_t>{1, 1, 1}));
  EXPECT_EQ(app::AtomFeatureScaling::fit(m, {0, 2}, "", "none").scaled, (std::vector<uint8_t>{0, 0, 0}));
  // What checkpoints keep reads back to the same bits.
  app::AtomFeatureScaling back = app::AtomFeatureScaling::fromJson(s.toJson(), "x.ckpt");
  EXPECT_EQ(back.apply(m), s.apply(m));
  nlohmann::json broken = s.toJson();
  broken["std"][1] = 0.0;
  EXPECT_NE(errorOf([&] { app::AtomFeatureScaling::fromJson(broken, "x.ckpt"); })
                .find("x.ckpt: configuration 'derived.atom_features' is inconsistent"),
            std::string::npos);
}

TEST_F(AtomFeatures, RowsFollowTheInputAndAtomCountsAreChecked) {
  auto ds = buildSmiles({"CCO", "C1CC", "c1ccccc1O", "CC(=O)O"});  // line 2 is rejected
  ASSERT_EQ(ds->size(), 3u);
  // One column: 10 * molecule + atom; the rejected molecule keeps 4 rows of its own.
  std::vector<double> v;
  const std::vector<int64_t> atoms = {3, 4, 7, 4};
  std::vector<int64_t> ptr = {0};
  for (int64_t m = 0; m < 4; ++m) {
    for (int64_t a = 0; a < atoms[static_cast<size_t>(m)]; ++a) v.push_back(static_cast<double>(10 * m + a));
    ptr.push_back(static_cast<int64_t>(v.size()));
  }
  writeNpz(path("a.npz"), v, 1, ptr);
  app::AtomFeatureMatrix m = app::gatherAtomFeatures(AtomFeatureFile::read(path("a.npz")), *ds, 3);
  EXPECT_EQ(m.ptr, (std::vector<int64_t>{0, 3, 10, 14}));
  EXPECT_EQ(m.values[3], 20.0);   // phenol is the input's molecule 2
  EXPECT_EQ(m.values[13], 33.0);  // acetic acid's last atom
  app::AtomFeatureScaling s = app::AtomFeatureScaling::fit(m, {0, 1, 2}, path("a.npz"), "none");
  app::AtomFeatureDataset featured(ds, s.apply(m), m.ptr, 1);
  Graph g = featured.get(1);
  ASSERT_EQ(g.nodeFeatures.shape(), (Shape{7, 1}));
  EXPECT_EQ(g.nodeFeatures.at(6), 26.0);

  // Acetic acid given 5 atoms: the file, the molecule and its line are named.
  std::vector<double> w = v;
  w.push_back(34);
  ptr.back() += 1;
  writeNpz(path("b.npz"), w, 1, ptr);
  const std::string e = errorOf([&] { app::gatherAtomFeatures(AtomFeatureFile::read(path("b.npz")), *ds, 3); });
  EXPECT_NE(e.find("b.npz: molecule 3 of the input (line 4, CC(=O)O) has 5 atom rows here, but its parsed molecule "
                   "has 4 atoms"),
            std::string::npos)
      << e;
  // A file that stops before the last molecule.
  ptr.pop_back();
  v.resize(static_cast<size_t>(ptr.back()));
  writeNpz(path("c.npz"), v, 1, ptr);
  EXPECT_NE(errorOf([&] { app::gatherAtomFeatures(AtomFeatureFile::read(path("c.npz")), *ds, 3); })
                .find("c.npz: holds the atoms of 3 molecules, but molecule 3 of the input (line 4"),
            std::string::npos);
}

// --- The programs ---------------------------------------------------------------------------------------------

const std::string kData = "--data " + kEsolCsv +
                          " --target-cols 'measured log solubility in mols per litre' --limit 200 --split random "
                          "--batch-size 50 --epochs 2 --quiet --json --threads 1";

TEST_F(AtomFeatures, EndToEndAndPredictReproducesIt) {
  std::vector<double> values;
  std::vector<int64_t> ptr;
  featuresFor(*build(kEsolCsv, "esol.npz"), values, ptr);
  ASSERT_EQ(ptr.size(), 1129u);
  writeNpz(path("esol_atoms.npz"), values, kWidth, ptr);
  const std::vector<std::pair<std::string, std::string>> models = {
      {"dmpnn", "--model dmpnn --hidden 32 --ffn-hidden-dim 16"}, {"gin", "--model gin --layers 2 --hidden 32"}};
  for (const auto& [name, flags] : models) {
    SCOPED_TRACE(name);
    const std::string ck = path(name + ".ckpt"), pred = path(name + "_test.csv");
    ProgramResult r = runExample("molecule_property", kData + " " + flags + " --atom-features " +
                                                          path("esol_atoms.npz") + " --save " + ck + " --predict " + pred,
                                 false);
    ASSERT_EQ(r.code, 0) << r.out;
    nlohmann::json j = lastJson(r.out);
    EXPECT_EQ(j["atom_features_width"], kWidth);
    // dmpnn: W_i reads 6 more inputs and W_o 6 more (no bias in W_i); gin: Linear(6, 32) with its bias.
    const int64_t extra = name == "dmpnn" ? 2 * kWidth * 32 : kWidth * 32 + 32;
    ProgramResult plain = runExample("molecule_property", kData + " " + flags, false);
    ASSERT_EQ(plain.code, 0) << plain.out;
    EXPECT_EQ(j["parameters"].get<int64_t>(), lastJson(plain.out)["parameters"].get<int64_t>() + extra);
    EXPECT_TRUE(std::isfinite(j["test_metric"].get<double>()));
    const nlohmann::json f = Checkpoint::load(ck).meta["config"]["derived"]["atom_features"];
    EXPECT_EQ(f["width"], kWidth);
    EXPECT_EQ(f["scaled"].get<std::vector<int>>(), (std::vector<int>{0, 0, 0, 0, 0, 1}));  // the degree one-hot stays 0/1

    // predict on the test molecules reversed, with their own file (CSV this time), in other batch shapes.
    std::vector<Row> rows = readPredictions(pred);
    ASSERT_GT(rows.size(), 10u);
    std::reverse(rows.begin(), rows.end());
    {
      std::ofstream smi(path("t.smi"));
      for (const Row& row : rows) smi << row.smiles << "\n";
    }
    std::vector<double> tv;
    std::vector<int64_t> tp;
    featuresFor(*build(path("t.smi"), "t.npz"), tv, tp);
    writeCsv(path("t_atoms.csv"), tv, kWidth, tp);
    const std::string predict = "--checkpoint " + ck + " --input " + path("t.smi") + " --threads 1 --out ";
    ProgramResult p = runExample("predict", predict + path("again.csv") + " --eval-buckets 1 --atom-features " +
                                                path("t_atoms.csv"));
    ASSERT_EQ(p.code, 0) << p.out;
    std::vector<Row> again = readPredictions(path("again.csv"));
    ASSERT_EQ(again.size(), rows.size());
    for (size_t k = 0; k < again.size(); ++k)
      EXPECT_EQ(again[k].prediction, rows[k].prediction) << "row " << k << " " << rows[k].smiles;

    // The checkpoint needs the file, of its width, with rows that match the molecules.
    expectUsageError(runExample("predict", predict + path("x.csv")), "give --atom-features FILE with the same columns");
    std::vector<double> narrow;
    for (size_t a = 0; a < tv.size(); a += kWidth) narrow.insert(narrow.end(), tv.begin() + a, tv.begin() + a + 4);
    writeNpz(path("narrow.npz"), narrow, 4, tp);
    ProgramResult wrongWidth = runExample("predict", predict + path("x.csv") + " --atom-features " + path("narrow.npz"));
    EXPECT_EQ(wrongWidth.code, 1) << wrongWidth.out;
    EXPECT_NE(wrongWidth.out.find(ck + ": its atom features cannot be reproduced here: the atom features file had 6 "
                                       "columns"),
              std::string::npos)
        << wrongWidth.out;
    if (name != "dmpnn") continue;
    // An evaluation-only run of the checkpoint reads the file it names and scores the same.
    std::string evaluate = kData + " " + flags + " --load " + ck;
    evaluate.replace(evaluate.find("--epochs 2"), 10, "--epochs 0");
    ProgramResult scored = runExample("molecule_property", evaluate, false);
    ASSERT_EQ(scored.code, 0) << scored.out;
    EXPECT_EQ(lastJson(scored.out)["test_metric"], j["test_metric"]);
    expectUsageError(runExample("molecule_property", evaluate + " --atom-features " + path("t_atoms.csv")),
                     "--atom-features " + path("t_atoms.csv") + " contradicts");
    std::vector<int64_t> shifted = tp;  // molecule 0 one atom short, molecule 1 one more
    shifted[1] -= 1;
    writeNpz(path("shifted.npz"), tv, kWidth, shifted);
    ProgramResult count = runExample("predict", predict + path("x.csv") + " --atom-features " + path("shifted.npz"));
    EXPECT_EQ(count.code, 1) << count.out;
    EXPECT_NE(count.out.find("shifted.npz: molecule 0 of the input (line 1, " + rows[0].smiles + ") has "),
              std::string::npos)
        << count.out;
    expectUsageError(runExample("predict", predict + path("x.csv") + " --atom-features " + path("missing.npz")),
                     "--atom-features " + path("missing.npz") + ": no such file");
  }
  EXPECT_FALSE(fs::exists(path("x.csv")));
}

TEST_F(AtomFeatures, ProgramsRefuseBadFilesAndModelsThatReadNone) {
  expectUsageError(runExample("molecule_property", kData + " --atom-features " + path("missing.npz")),
                   "--atom-features " + path("missing.npz") + ": no such file");
  writeNpz(path("noptr.npz"), {1, 2}, 1, {}, false);
  ProgramResult noPtr = runExample("molecule_property", kData + " --atom-features " + path("noptr.npz"));
  EXPECT_EQ(noPtr.code, 1) << noPtr.out;
  EXPECT_NE(noPtr.out.find(path("noptr.npz") + ": no array 'atom_ptr'"), std::string::npos) << noPtr.out;
  // ESOL's first molecule with one atom too many: named with its line (the CSV's header is line 1).
  writeCsv(path("one.csv"), {0, 1, 2, 3}, 1, {0, 4});
  ProgramResult wrong = runExample("molecule_property", kData + " --atom-features " + path("one.csv"));
  EXPECT_EQ(wrong.code, 1) << wrong.out;
  EXPECT_NE(wrong.out.find(path("one.csv") + ": molecule 0 of the input (line 2, "), std::string::npos) << wrong.out;
  expectUsageError(runExample("molecule_property", kData + " --atom-features-scaling none"),
                   "--atom-features-scaling applies with --atom-features FILE");
  expectUsageError(runExample("molecule_property", kData + " --atom-features " + path("one.csv") +
                                                       " --atom-features-scaling minmax"),
                   "--atom-features-scaling");
  expectUsageError(runExample("pcqm4m_graphormer", "--model slim --atom-features " + path("one.csv") + " --epochs 0"),
                   "--atom-features applies to --model gin, gcn and dmpnn; slim reads no atom features");
}

}  // namespace
}  // namespace gnn
