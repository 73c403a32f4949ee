// Molecule embeddings (app/MoleculeEmbeddings.h, predict --embeddings): for every molecule model, the same bits
// for a molecule whatever batch and padding it sits in, and the head applied to them gives the model's
// predictions; predict's .npz read back with NpzFile and NumPy (shape, dtype, the CSV's lines and SMILES, a
// rejected line absent) and one molecule's row the same alone as among others.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "RunProgram.h"
#include "ScratchFolder.h"
#include "ShippedFiles.h"
#include "app/MoleculeData.h"
#include "app/MoleculeEmbeddings.h"
#include "app/MoleculeModel.h"
#include "app/MoleculePredictions.h"
#include "data/NpzDataset.h"
#include "data/NpzFile.h"
#include "gnn/io/Checkpoint.h"

namespace {
namespace fs = std::filesystem;
using namespace gnn;
using gnn::testing::expectUsageError;
using gnn::testing::runExample;
using gnn::testing::runProgram;

// Sizes from 2 to 24 heavy atoms, rings, charges, a halogen: batches of different fill.
const std::vector<std::string> kSmiles = {"CCO",
                                          "c1ccccc1O",
                                          "CC(=O)Nc1ccc(O)cc1",
                                          "O=C(O)c1ccccc1OC(C)=O",
                                          "CN1CCC[C@H]1c1cccnc1",
                                          "C[N+](C)(C)CC(=O)[O-]",
                                          "Clc1ccc(cc1)C(c1ccccc1)N1CCN(CC1)CCOCC(=O)O",
                                          "CC",
                                          "OCC1OC(O)C(O)C(O)C1O",
                                          "c1ccc2ccccc2c1"};

class Embeddings : public gnn::testing::ScratchFolderTest {
 protected:
  std::string writeSmi(const std::string& name, const std::vector<std::string>& lines) const {
    std::ofstream f(path(name));
    for (const auto& l : lines) f << l << "\n";
    return path(name);
  }
};

// The head of each model applied to embeddings [n, H] in double: [n, T].
std::vector<std::vector<double>> applyHead(BlockModel& model, const app::MoleculeModelSpec& spec, const Tensor& emb) {
  std::map<std::string, Tensor> p;
  for (const auto& [name, v] : model.namedParameters()) p[name] = v.value();
  std::vector<std::string> layers;
  if (spec.isDmpnn())
    for (int64_t l = 0; p.count("ffn." + std::to_string(l) + ".weight"); ++l) layers.push_back("ffn." + std::to_string(l));
  else
    layers.push_back("head");
  std::vector<std::vector<double>> out;
  for (int64_t i = 0; i < emb.dim(0); ++i) {
    std::vector<double> x(static_cast<size_t>(emb.dim(1)));
    for (int64_t k = 0; k < emb.dim(1); ++k) x[static_cast<size_t>(k)] = emb.data<float>()[i * emb.dim(1) + k];
    for (size_t l = 0; l < layers.size(); ++l) {
      if (l > 0)
        for (double& v : x) v = std::max(v, 0.0);
      const Tensor& w = p.at(layers[l] + ".weight");
      const Tensor& b = p.at(layers[l] + ".bias");
      std::vector<double> y(static_cast<size_t>(w.dim(0)));
      for (int64_t o = 0; o < w.dim(0); ++o) {
        double s = b.data<float>()[o];
        for (int64_t k = 0; k < w.dim(1); ++k) s += static_cast<double>(w.data<float>()[o * w.dim(1) + k]) * x[static_cast<size_t>(k)];
        y[static_cast<size_t>(o)] = s;
      }
      x = y;
    }
    out.push_back(x);
  }
  return out;
}

TEST_F(Embeddings, EveryModelsVectorIsPaddingInvariantAndTheHeadReproducesItsPredictions) {
  const std::string smi = writeSmi("mols.smi", kSmiles), npz = path("mols.npz");
  app::buildMoleculeDataset(smi, "smi", "smiles", {{"graphormer_max_dist", 5}, {"conformers", true}}, 1, npz);
  auto data = std::make_shared<NpzDataset>(npz);
  ASSERT_EQ(data->size(), kSmiles.size());
  std::vector<int64_t> all;
  for (size_t i = 0; i < data->size(); ++i) all.push_back(static_cast<int64_t>(i));
  for (const std::string m : {"gin", "gcn", "dmpnn", "slim", "schnet"}) {
    SCOPED_TRACE(m);
    app::MoleculeModelSpec spec;
    spec.model = m;
    spec.layers = 2;
    // 32 floats: rows of every width here (32, 64; Graphormer's 80) are whole 64-byte lines (gnn/ops/NnOps.cpp's
    // LayerNorm rounds a row by where it sits in memory when they are not: GIN's hidden 300 is not).
    spec.hidden = 32;
    spec.tasks = 3;
    spec.ffnHiddenDim = 16;
    spec.pool = "sum";
    std::unique_ptr<BlockModel> model = app::makeMoleculeModel(spec, 7);
    std::shared_ptr<const Dataset> ds = spec.view(data);
    // Two batch shapes: 2 molecules per batch, tight; 6 per batch with room to spare. The molecules in another
    // order too, so each shares its batch with others.
    FixedSizeOptions small = FixedSizeOptions::fromDataset(*ds, 3), large = FixedSizeOptions::fromDataset(*ds, 7);
    large.numNodes += 17;
    large.numEdges += 29;
    if (spec.isGraphormer()) {
      int64_t maxNodes = 0;
      for (size_t i = 0; i < ds->size(); ++i) maxNodes = std::max(maxNodes, ds->numNodes(i));
      small.maxNodesPerGraph = large.maxNodesPerGraph = maxNodes;
    }
    std::vector<int64_t> reversed(all.rbegin(), all.rend());
    app::MoleculeEmbeddings a = app::embedMolecules(*model, ds, all, small);
    app::MoleculeEmbeddings b = app::embedMolecules(*model, ds, reversed, large);
    ASSERT_EQ(a.positions, all);
    ASSERT_EQ(a.values.dim(0), static_cast<int64_t>(all.size()));
    ASSERT_EQ(a.values.dim(1), m == "slim" ? 80 : 32);
    const int64_t w = a.values.dim(1);
    for (size_t k = 0; k < all.size(); ++k) {
      const size_t r = all.size() - 1 - k;  // molecule k's row in b
      EXPECT_EQ(std::memcmp(a.values.data<float>() + k * w, b.values.data<float>() + r * w, w * sizeof(float)), 0)
          << "molecule " << k << " (" << kSmiles[k] << ") differs between the two batch shapes";
    }
    if (spec.isGraphormer()) {
      // predict grows the blocks to the input's largest molecule: a wider block gives the same bits.
      FixedSizeOptions wider = large;
      wider.maxNodesPerGraph += 6;
      wider.numNodes += 6;
      app::MoleculeEmbeddings c = app::embedMolecules(*model, ds, all, wider);
      EXPECT_EQ(std::memcmp(a.values.data<float>(), c.values.data<float>(), a.values.nbytes()), 0)
          << "blocks of side " << small.maxNodesPerGraph << " and " << wider.maxNodesPerGraph << " differ";
    }
    // Not all zero, and molecules differ from each other.
    EXPECT_NE(std::memcmp(a.values.data<float>(), a.values.data<float>() + w, w * sizeof(float)), 0);
    if (spec.isSchNet()) continue;  // its head is per atom: no molecule vector enters it
    app::MoleculePredictions p =
        app::predictMolecules(*model, spec.tasks, ds, all, small, TargetScaling::identity(), app::MoleculeTask::Regression);
    const auto head = applyHead(*model, spec, a.values);
    for (size_t k = 0; k < all.size(); ++k)
      for (int64_t t = 0; t < spec.tasks; ++t) {
        const double pred = p.pred.data<float>()[k * spec.tasks + t];
        EXPECT_NEAR(head[k][static_cast<size_t>(t)], pred, 1e-5 * (1 + std::fabs(pred))) << "molecule " << k << " target " << t;
      }
  }
}

// Predictions CSV rows: line, id, smiles, prediction.
struct CsvRow {
  int64_t line, id;
  std::string smiles;
  double prediction;
};
std::vector<CsvRow> readCsv(const std::string& path) {
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, "line,id,smiles,prediction");
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string f[4];
    for (auto& x : f) std::getline(s, x, ',');
    rows.push_back({std::stoll(f[0]), std::stoll(f[1]), f[2], std::stod(f[3])});
  }
  return rows;
}

TEST_F(Embeddings, PredictWritesThemAsNpzInTheCsvsOrder) {
  const std::string& esol = gnn::testing::kEsolCsv;
  const std::string ck = path("gin.ckpt");
  gnn::testing::ProgramResult r = runExample(
      "molecule_property", "--data " + esol + " --target-cols 'measured log solubility in mols per litre' --limit 60 "
                           "--split random --hidden 32 --layers 2 --batch-size 20 --epochs 1 --target-scaling none "
                           "--threads 1 --quiet --save " + ck);
  ASSERT_EQ(r.code, 0) << r.out;
  // Line 3 is no molecule: it has no row, and the rows keep the input's order.
  const std::string input = writeSmi("new.smi", {kSmiles[2], kSmiles[6], "C1CC(", kSmiles[0], kSmiles[8], kSmiles[4]});
  const std::string csv = path("new.csv"), emb = path("new.npz");
  r = runExample("predict", "--checkpoint " + ck + " --input " + input + " --out " + csv + " --embeddings " + emb +
                                " --threads 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("new.smi:3: rejected"), std::string::npos) << r.out;
  const std::vector<CsvRow> rows = readCsv(csv);
  ASSERT_EQ(rows.size(), 5u);
  {
    NpzFile f(emb);
    EXPECT_EQ(f.arrays().size(), 5u);
    const NpzFile::Array& e = f.get("embeddings", "<f4", 2);
    ASSERT_EQ(e.shape, (std::vector<int64_t>{5, 32}));
    const NpzFile::Array& line = f.get("line", "<i8", 1);
    const NpzFile::Array& id = f.get("id", "<i8", 1);
    const NpzFile::Array& smiles = f.get("smiles", "|u1", 1);
    const NpzFile::Array& ptr = f.get("smiles_ptr", "<i8", 1);
    ASSERT_EQ(line.shape, (std::vector<int64_t>{5}));
    ASSERT_EQ(ptr.shape, (std::vector<int64_t>{6}));
    const auto* lines = reinterpret_cast<const int64_t*>(line.data);
    const auto* ids = reinterpret_cast<const int64_t*>(id.data);
    const auto* p = reinterpret_cast<const int64_t*>(ptr.data);
    EXPECT_EQ(std::vector<int64_t>(lines, lines + 5), (std::vector<int64_t>{1, 2, 4, 5, 6}));
    // The CSV's rows, and the head applied to the embeddings gives its predictions (--target-scaling none).
    Checkpoint c = Checkpoint::load(ck);
    const std::string prefix = c.tensors.count("best.head.weight") ? "best." : "model.";
    const Tensor& w = c.tensors.at(prefix + "head.weight");
    const Tensor& b = c.tensors.at(prefix + "head.bias");
    ASSERT_EQ(w.shape(), (std::vector<int64_t>{1, 32}));
    const auto* x = reinterpret_cast<const float*>(e.data);
    for (size_t k = 0; k < rows.size(); ++k) {
      EXPECT_EQ(lines[k], rows[k].line);
      EXPECT_EQ(ids[k], rows[k].id);
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(smiles.data) + p[k], p[k + 1] - p[k]), rows[k].smiles);
      double y = b.data<float>()[0];
      for (int64_t j = 0; j < 32; ++j) y += static_cast<double>(w.data<float>()[j]) * x[k * 32 + j];
      EXPECT_NEAR(y, rows[k].prediction, 1e-5 * (1 + std::fabs(y))) << "row " << k;
    }
  }
  // NumPy reads it as it is (no pickle): with the first python3 that has it.
  std::string python;
  for (const char* p : {"python3", "/usr/bin/python3"})
    if (python.empty() && runProgram(std::string(p) + " -c 'import numpy'").code == 0) python = p;
  if (python.empty()) GTEST_SKIP() << "no python3 with NumPy here; the rest was checked with NpzFile";
  const std::string py = python + " -c \"import numpy as np; d = np.load('" + emb +
                         "'); e = d['embeddings']; print(e.dtype, e.shape, list(d['line']), "
                         "bytes(d['smiles'][d['smiles_ptr'][1]:d['smiles_ptr'][2]]).decode())\"";
  gnn::testing::ProgramResult np = runProgram(py);
  ASSERT_EQ(np.code, 0) << np.out;
  EXPECT_EQ(np.out, "float32 (5, 32) [1, 2, 4, 5, 6] " + rows[1].smiles + "\n");

  // One molecule alone (another batch fill, other padding): the same bits as its row among the others.
  const std::string alone = writeSmi("alone.smi", {kSmiles[6]});
  r = runExample("predict", "--checkpoint " + ck + " --input " + alone + " --out " + path("alone.csv") +
                                " --embeddings " + path("alone.npz") + " --quiet");
  ASSERT_EQ(r.code, 0) << r.out;
  NpzFile one(path("alone.npz")), many(emb);
  ASSERT_EQ(one.get("embeddings").shape, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(std::memcmp(one.get("embeddings").data, many.get("embeddings").data + 32 * sizeof(float), 32 * sizeof(float)), 0);

  expectUsageError(runExample("predict", "--checkpoint " + ck + " --input " + input + " --out " + csv +
                                             " --embeddings " + path("no/such/dir/e.npz")),
                   "--embeddings " + path("no/such/dir/e.npz") + ": the folder");
}

}  // namespace
