// node_property --model rgcn and --model hgt on a heterogeneous folder (OGB's heterogeneous layout): a graph whose
// papers' labels only their authors tell (the papers' own features are noise), learnt by R-GCN (full-batch, on
// neighbour batches: --loader neighbor, close to full batch, and on METIS clusters of all nodes of all types:
// --loader cluster; padding's effect is tested on the models, tests/loaders/HeteroBatchToHomogeneous_test.cpp and
// tests/models/HeteroHGT_test.cpp) and HGT (full-batch and on both loaders' batches), and not by a model of the
// papers alone; the same bits on rerun and on 1 and 2 threads; every refusal naming what is refused and what exists.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "RunProgram.h"
#include "ScratchFolder.h"

namespace {
namespace fs = std::filesystem;
using gnn::testing::expectUsageError;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;

constexpr int kClasses = 4, kAuthorsPerClass = 15, kPapers = 600, kFeatures = 16;
constexpr int kAuthors = kClasses * kAuthorsPerClass, kVenues = 5, kVenueFeatures = 8, kInstitutions = 7;

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// The graph, in both layouts: paper p has class p % 4 and two distinct authors of that class (15 authors a
// class, ~20 papers an author), 16 features of uniform noise, and two citations of random papers, whatever their
// class. Papers 0-299 train, 300-449 validate, 450-599 test. So a validation paper's class is known only through
// its authors, whose other papers are mostly training papers of the same class: R-GCN reads it from the author
// embeddings that the training papers' labels shape; a model of the papers and their citations finds nothing.
struct PaperGraph {
  std::string writes, cites, features, labels;
  std::string publishedIn, venueFeatures;  // a third type for writeHeteroFolder's withVenues: noise too
};

PaperGraph makePaperGraph() {
  std::mt19937_64 rng(7);  // fully specified by the standard: the same graph everywhere
  PaperGraph g;
  for (int p = 0; p < kPapers; ++p) {
    const int c = p % kClasses, a = static_cast<int>(rng() % kAuthorsPerClass);
    const int b = (a + 1 + static_cast<int>(rng() % (kAuthorsPerClass - 1))) % kAuthorsPerClass;
    for (int author : {a, b})
      g.writes += std::to_string(c * kAuthorsPerClass + author) + "," + std::to_string(p) + "\n";
    for (int k = 0; k < 2; ++k) g.cites += std::to_string(p) + "," + std::to_string(rng() % kPapers) + "\n";
    for (int f = 0; f < kFeatures; ++f)
      g.features += (f ? "," : "") + std::to_string(static_cast<double>(rng() % 2001) / 1000.0 - 1.0);
    g.features += "\n";
    g.labels += std::to_string(c) + "\n";
    g.publishedIn += std::to_string(p) + "," + std::to_string(rng() % kVenues) + "\n";
  }
  for (int v = 0; v < kVenues; ++v)
    for (int f = 0; f < kVenueFeatures; ++f)
      g.venueFeatures += std::to_string(static_cast<double>(rng() % 1001) / 1000.0) +
                         (f + 1 < kVenueFeatures ? "," : "\n");
  return g;
}

std::string idRange(int begin, int end) {
  std::string s;
  for (int i = begin; i < end; ++i) s += std::to_string(i) + "\n";
  return s;
}

void writeSplit(const fs::path& dir) {
  writeFile(dir / "train.csv", idRange(0, 300));
  writeFile(dir / "valid.csv", idRange(300, 450));
  writeFile(dir / "test.csv", idRange(450, 600));
}

// OGB's heterogeneous layout (ogbn-mag's): author (no features) -writes-> paper, paper -cites-> paper; labels and
// a split for papers, and with authorLabels for authors too (their class). withVenues adds paper -published_in->
// venue, 5 venues of 8 noise features: two feature widths, so each featured type gets a Linear of its own. (Non-
// negative, so --normalize-features auto normalises their rows: standard normalisation takes a type's training
// nodes, which venues have none of.) withInstitutions adds author -affiliated_with-> institution, 7 institutions
// without features, one an author: one more node type and, after ToUndirected, two more relations.
void writeHeteroFolder(const fs::path& dir, const PaperGraph& g, bool authorLabels = false, bool withVenues = false,
                       bool withInstitutions = false) {
  const std::string counts = std::to_string(kAuthors) + "," + std::to_string(kPapers);
  writeFile(dir / "raw/num-node-dict.csv",
            withVenues         ? "author,paper,venue\n" + counts + ",5\n"
            : withInstitutions ? "author,institution,paper\n" + std::to_string(kAuthors) + "," +
                                     std::to_string(kInstitutions) + "," + std::to_string(kPapers) + "\n"
                               : "author,paper\n" + counts + "\n");
  writeFile(dir / "raw/triplet-type-list.csv",
            std::string("author,writes,paper\npaper,cites,paper\n") + (withVenues ? "paper,published_in,venue\n" : "") +
                (withInstitutions ? "author,affiliated_with,institution\n" : ""));
  if (withInstitutions) {
    std::string affiliations;
    for (int a = 0; a < kAuthors; ++a)
      affiliations += std::to_string(a) + "," + std::to_string(a % kInstitutions) + "\n";
    writeFile(dir / "raw/relations/author___affiliated_with___institution/edge.csv", affiliations);
    writeFile(dir / "raw/relations/author___affiliated_with___institution/num-edge-list.csv",
              std::to_string(kAuthors) + "\n");
  }
  if (withVenues) {
    writeFile(dir / "raw/relations/paper___published_in___venue/edge.csv", g.publishedIn);
    writeFile(dir / "raw/relations/paper___published_in___venue/num-edge-list.csv", std::to_string(kPapers) + "\n");
    writeFile(dir / "raw/node-feat/venue/node-feat.csv", g.venueFeatures);
  }
  writeFile(dir / "raw/relations/author___writes___paper/edge.csv", g.writes);
  writeFile(dir / "raw/relations/author___writes___paper/num-edge-list.csv", std::to_string(2 * kPapers) + "\n");
  writeFile(dir / "raw/relations/paper___cites___paper/edge.csv", g.cites);
  writeFile(dir / "raw/relations/paper___cites___paper/num-edge-list.csv", std::to_string(2 * kPapers) + "\n");
  writeFile(dir / "raw/node-feat/paper/node-feat.csv", g.features);
  writeFile(dir / "raw/node-label/paper/node-label.csv", g.labels);
  writeFile(dir / "raw/nodetype-has-label.csv",
            std::string("author,paper\n") + (authorLabels ? "True" : "False") + ",True\n");
  writeFile(dir / "split/random/nodetype-has-split.csv", "author,paper\nFalse,True\n");
  writeSplit(dir / "split/random/paper");
  if (!authorLabels) return;
  std::string classes;  // each author's class
  for (int a = 0; a < kAuthors; ++a) classes += std::to_string(a / kAuthorsPerClass) + "\n";
  writeFile(dir / "raw/node-label/author/node-label.csv", classes);
}

// The papers alone in OGB's homogeneous layout: their features, labels, split and citations.
void writePapersOnlyFolder(const fs::path& dir, const PaperGraph& g) {
  writeFile(dir / "raw/edge.csv", g.cites);
  writeFile(dir / "raw/node-feat.csv", g.features);
  writeFile(dir / "raw/node-label.csv", g.labels);
  writeSplit(dir / "split/random");
}

class NodeHeteroRgcn : public gnn::testing::SuiteScratchFolderTest<NodeHeteroRgcn> {
 protected:
  static void SetUpTestSuite() {
    makeFolder("NodeHeteroRgcn");
    const PaperGraph g = makePaperGraph();
    writeHeteroFolder(dir_ / "papers_authors", g);
    writeHeteroFolder(dir_ / "two_labelled", g, /*authorLabels=*/true);
    writeHeteroFolder(dir_ / "with_venues", g, /*authorLabels=*/false, /*withVenues=*/true);
    writeHeteroFolder(dir_ / "with_institutions", g, false, false, /*withInstitutions=*/true);
    writePapersOnlyFolder(dir_ / "papers_only", g);
  }
  static std::string hetero() { return "--data " + path("papers_authors"); }

  static nlohmann::json runJson(const std::string& args) {
    ProgramResult r = runExample("node_property", args + " --json --quiet");
    EXPECT_EQ(r.code, 0) << r.out;
    return gnn::testing::lastJson(r.out);
  }
};

TEST_F(NodeHeteroRgcn, LearnsWhatOnlyTheRelationsTell) {
  const nlohmann::json rgcn = runJson(hetero() + " --model rgcn --epochs 40");
  const nlohmann::json papersOnly = runJson("--data " + path("papers_only") + " --model sage --epochs 40");
  // Guessing gives 25 %: 150 validation papers at 25 % reach 50 % with probability below 1e-10, 80 % never.
  const double rgcnValid = rgcn["val_acc_mean"].get<double>(), alone = papersOnly["val_acc_mean"].get<double>();
  EXPECT_GE(rgcnValid, 0.80) << rgcn.dump();
  EXPECT_GE(rgcn["test_acc_mean"].get<double>(), 0.80) << rgcn.dump();
  EXPECT_LE(alone, 0.45) << papersOnly.dump();
  EXPECT_GE(rgcnValid - alone, 0.35);
  // The graph as read: ToUndirected's rev_writes appended, cites merged in place; authors embedded.
  EXPECT_EQ(rgcn["target_type"], "paper");
  EXPECT_EQ(rgcn["num_relations"], 3);
  EXPECT_EQ(rgcn["edge_types"], (nlohmann::json{"author__writes__paper", "paper__cites__paper",
                                                  "paper__rev_writes__author"}));
  EXPECT_EQ(rgcn["node_types"]["author"]["num_features"], 0);
  EXPECT_EQ(rgcn["node_types"]["paper"]["num_features"], kFeatures);
  EXPECT_EQ(rgcn["num_nodes"], kAuthors + kPapers);
  EXPECT_EQ(rgcn["normalize_features"], "standard");  // auto: the papers' features have negative values
  EXPECT_EQ(rgcn["layers"], 2);
  EXPECT_EQ(rgcn["hidden"], 64);
  for (const char* key : {"test_acc_std", "epoch_ms_median", "infer_ms_median", "peak_rss_mb", "loss_checksum",
                          "predictions_checksum", "param_checksum", "best_epoch", "final_loss"})
    EXPECT_TRUE(rgcn.contains(key)) << key;
  // Two feature widths (papers 16, venues 8): each through a Linear to --hidden, the authors' embeddings as wide.
  const nlohmann::json venues = runJson("--data " + path("with_venues") + " --model rgcn --epochs 40");
  EXPECT_EQ(venues["num_relations"], 5);
  EXPECT_EQ(venues["node_types"]["venue"]["num_features"], kVenueFeatures);
  EXPECT_GE(venues["val_acc_mean"].get<double>(), 0.75) << venues.dump();
  // The basis decomposition learns it too.
  const nlohmann::json bases = runJson(hetero() + " --model rgcn --epochs 40 --num-bases 2");
  EXPECT_EQ(bases["num_bases"], 2);
  EXPECT_GE(bases["val_acc_mean"].get<double>(), 0.75) << bases.dump();
}

TEST_F(NodeHeteroRgcn, ReportsEachEpochAndTheTestAccuracy) {
  const ProgramResult r = runExample("node_property", hetero() + " --model rgcn --epochs 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("heterogeneous, 660 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target 'paper': 4 classes, split 300/150/150"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch 3/3  loss "), std::string::npos) << r.out;  // the Trainer's line per epoch
  EXPECT_NE(r.out.find("papers_authors (paper): test accuracy"), std::string::npos) << r.out;
}

TEST_F(NodeHeteroRgcn, SameBitsOnRerunAndOnOneAndTwoThreads) {
  const std::string args = hetero() + " --model rgcn --epochs 12 --seed 3";
  const nlohmann::json a = runJson(args + " --threads 1"), b = runJson(args + " --threads 2"),
                       c = runJson(args + " --threads 2");
  for (const char* key : {"loss_checksum", "predictions_checksum", "param_checksum"}) {
    EXPECT_EQ(a[key], b[key]) << key;
    EXPECT_EQ(b[key], c[key]) << key;
  }
  const nlohmann::json other = runJson(hetero() + " --model rgcn --epochs 12 --seed 4");
  EXPECT_NE(other["param_checksum"], a["param_checksum"]);  // the seed does reach the weights
}

TEST_F(NodeHeteroRgcn, ChoosesTheTargetTypeAmongSeveralLabelledOnes) {
  const std::string two = "--data " + path("two_labelled") + " --model rgcn --epochs 2";
  expectUsageError(runExample("node_property", two), "--target-type");
  expectUsageError(runExample("node_property", two + " --target-type venue"), "no such node type");
  const nlohmann::json j = runJson(two + " --target-type paper");
  EXPECT_EQ(j["target_type"], "paper");
  expectUsageError(runExample("node_property", hetero() + " --model rgcn --target-type author"), "has no labels");
}

TEST_F(NodeHeteroRgcn, RefusesWhatHeterogeneousGraphsDoNotHave) {
  const std::string h = hetero();
  expectUsageError(runExample("node_property", h + " --model gcn"),
                   "--model rgcn (R-GCN) or --model hgt (HGT) on the CPU, full-batch or with --loader neighbor or "
                   "cluster");
  expectUsageError(runExample("node_property", h), "--model gcn");  // node_property's default model
  expectUsageError(runExample("node_property", h + " --model rgcn --loader cluster --clusters 700"), "--clusters");
  expectUsageError(runExample("node_property", h + " --model rgcn --loader neighbor --num-neighbors 5,5,5"),
                   "3 hops for --layers 2");
  expectUsageError(runExample("node_property", h + " --model rgcn --loader neighbor --num-neighbors 5,x"),
                   "--num-neighbors");
  expectUsageError(runExample("node_property", h + " --model rgcn --loader neighbor --trim-to-layer off"),
                   "--trim-to-layer");
  expectUsageError(runExample("node_property", h + " --model rgcn --device ipu --loader neighbor --eight-bit-io"),
                   "node ids cross the host link as z");
  expectUsageError(runExample("node_property", h + " --model rgcn --device ipu --loader cluster --clusters 4 "
                                                   "--eight-bit-io"),
                   "--eight-bit-io with --loader cluster");
  expectUsageError(runExample("node_property", h + " --model hgt --device ipu --loader cluster --clusters 4"),
                   "HGT's blocks on the simulated IPU take the whole typed graph");
  expectUsageError(runExample("node_property", h + " --model rgcn --heads 4"), "--heads");
  writeFile(dir_ / "saved.ckpt", "refused before it is read");
  expectUsageError(runExample("node_property", h + " --model rgcn --load " + path("saved.ckpt")),
                   "continuing a saved run is offered for homogeneous graphs");
  expectUsageError(runExample("node_property", h + " --model rgcn --num-bases=-1"), "--num-bases");
  expectUsageError(runExample("cora_gcn", h), "--model gcn");
  // And R-GCN's flags on a homogeneous graph.
  expectUsageError(runExample("node_property", "--model rgcn --epochs 1"), "is homogeneous");
  expectUsageError(runExample("node_property", "--data " + path("papers_only") + " --target-type paper"),
                   "--target-type");
  expectUsageError(runExample("node_property", "--num-bases 3"), "--num-bases");
}

// --loader neighbor: batches of 64 training papers (5 an epoch), a fan-out per layer.
std::string neighbor() { return " --model rgcn --loader neighbor --batch-size 64"; }

TEST_F(NodeHeteroRgcn, NeighbourBatchesLearnCloseToFullBatch) {
  const nlohmann::json full = runJson(hetero() + " --model rgcn --epochs 40");
  const nlohmann::json batches = runJson(hetero() + neighbor() + " --epochs 40");
  // The full-batch test's bar, and within 0.10 of full batch (15 of 150 validation papers): sampled neighbourhoods
  // see a paper's two authors whenever a fan-out reaches them, so little should be lost.
  const double v = batches["val_acc_mean"].get<double>(), f = full["val_acc_mean"].get<double>();
  EXPECT_GE(v, 0.80) << batches.dump();
  EXPECT_GE(v, f - 0.10) << "full batch " << f << ", neighbour batches " << v;
  EXPECT_GE(batches["test_acc_mean"].get<double>(), 0.80) << batches.dump();
  EXPECT_EQ(batches["loader"], "neighbor");
  EXPECT_EQ(batches["num_neighbors"], (nlohmann::json{15, 10}));  // the default: a fan-out per layer
  EXPECT_EQ(batches["batch_size"], 64);
  EXPECT_EQ(batches["evaluation"], "full");
  const nlohmann::json& run = batches["loader_runs"][0];
  EXPECT_EQ(run["batches_per_epoch"], 5);  // 300 training papers
  EXPECT_EQ(run["target_rows"], 64);
  EXPECT_GT(run["fixed_num_nodes"]["author"].get<int64_t>(), 1);
  EXPECT_TRUE(run["fixed_num_edges"].contains("author__writes__paper")) << run.dump();
}

TEST_F(NodeHeteroRgcn, NeighbourBatchesGiveTheSameBitsOnRerunAndOnOneAndTwoThreads) {
  const std::string args = hetero() + neighbor() + " --epochs 8 --seed 3";
  const nlohmann::json a = runJson(args + " --threads 1"), b = runJson(args + " --threads 2"),
                       c = runJson(args + " --threads 2");
  for (const char* key : {"loss_checksum", "predictions_checksum", "param_checksum"}) {
    EXPECT_EQ(a[key], b[key]) << key;
    EXPECT_EQ(b[key], c[key]) << key;
  }
  const nlohmann::json other = runJson(hetero() + neighbor() + " --epochs 8 --seed 4");
  EXPECT_NE(other["loss_checksum"], a["loss_checksum"]);  // the seed reaches the batches and the weights
}

TEST_F(NodeHeteroRgcn, HgtLearnsWhatOnlyTheRelationsTell) {
  const nlohmann::json hgt = runJson(hetero() + " --model hgt --epochs 40");
  EXPECT_GE(hgt["val_acc_mean"].get<double>(), 0.80) << hgt.dump();
  EXPECT_GE(hgt["test_acc_mean"].get<double>(), 0.80) << hgt.dump();
  EXPECT_EQ(hgt["model"], "hgt");
  EXPECT_EQ(hgt["heads"], 2);  // HGT's default
  EXPECT_EQ(hgt["layers"], 2);
  EXPECT_EQ(hgt["hidden"], 64);
  EXPECT_EQ(hgt["num_relations"], 3);
  EXPECT_EQ(hgt["norm"], "layer");  // HGT's default: the HGT authors' LayerNorms
  EXPECT_EQ(hgt["featureless"], "embedding");
  // hgt_dblp.py's model, without the norms, and the featureless types' input from their neighbours' features.
  const nlohmann::json plain = runJson(hetero() + " --model hgt --epochs 40 --norm none --featureless mean");
  EXPECT_EQ(plain["norm"], "none");
  EXPECT_NE(plain["param_checksum"], hgt["param_checksum"]);
  EXPECT_FALSE(plain["neighbour_mean_features"].empty()) << plain.dump();
  EXPECT_GE(plain["val_acc_mean"].get<double>(), 0.5) << plain.dump();
  // Two feature widths (papers 16, venues 8) and a type that receives only from papers.
  const nlohmann::json venues = runJson("--data " + path("with_venues") + " --model hgt --epochs 40 --heads 4");
  EXPECT_EQ(venues["heads"], 4);
  EXPECT_GE(venues["val_acc_mean"].get<double>(), 0.75) << venues.dump();
}

TEST_F(NodeHeteroRgcn, HgtSameBitsOnRerunAndOnOneAndTwoThreads) {
  const std::string args = hetero() + " --model hgt --epochs 6 --seed 3";
  const nlohmann::json a = runJson(args + " --threads 1"), b = runJson(args + " --threads 2"),
                       c = runJson(args + " --threads 2");
  for (const char* key : {"loss_checksum", "predictions_checksum", "param_checksum"}) {
    EXPECT_EQ(a[key], b[key]) << key;
    EXPECT_EQ(b[key], c[key]) << key;
  }
}

TEST_F(NodeHeteroRgcn, HgtRefusesWhatItDoesNotRead) {
  const std::string h = hetero() + " --model hgt --epochs 1";
  expectUsageError(runExample("node_property", h + " --dropout 0.3"), "--dropout: not read by --model hgt");
  expectUsageError(runExample("node_property", h + " --num-bases 2"), "--num-bases: not read by --model hgt");
  expectUsageError(runExample("node_property", h + " --act elu"), "--act: not read by --model hgt");
  expectUsageError(runExample("node_property", h + " --hidden 30 --heads 4"), "must be a multiple of --heads 4");
  expectUsageError(runExample("node_property", h + " --heads 0"), "--heads");
  expectUsageError(runExample("node_property", h + " --norm batch"), "--norm batch: --model hgt takes layer");
  expectUsageError(runExample("node_property", h + " --featureless zeros"), "--featureless zeros: embedding or mean");
  expectUsageError(runExample("node_property", h + " --loader neighbor --num-neighbors 4"), "1 hops for --layers 2");
  expectUsageError(runExample("node_property", "--model hgt --epochs 1"),
                   "HGT classifies the nodes of a heterogeneous");
}

// --loader cluster: the 660 nodes in 16 METIS clusters, 4 a batch (4 batches an epoch), as OGB's ogbn-mag
// cluster_gcn.py partitions all nodes of all types.
std::string cluster() { return " --loader cluster --clusters 16 --clusters-per-batch 4"; }

TEST_F(NodeHeteroRgcn, ClusterBatchesLearnWhatOnlyTheRelationsTell) {
  const nlohmann::json batches = runJson(hetero() + " --model rgcn" + cluster() + " --epochs 40");
  // Full batch's bar (guessing gives 25 %: see LearnsWhatOnlyTheRelationsTell). A batch keeps only the edges between
  // its clusters; METIS keeps a paper's authors beside it where it can. (1 Dec 2026: validation 0.97, test 0.99.)
  EXPECT_GE(batches["val_acc_mean"].get<double>(), 0.80) << batches.dump();
  EXPECT_GE(batches["test_acc_mean"].get<double>(), 0.80) << batches.dump();
  EXPECT_EQ(batches["loader"], "cluster");
  EXPECT_EQ(batches["clusters"], 16);
  EXPECT_EQ(batches["clusters_per_batch"], 4);
  EXPECT_EQ(batches["evaluation"], "full");
  const nlohmann::json& run = batches["loader_runs"][0];
  EXPECT_EQ(run["batches_per_epoch"], 4);
  EXPECT_EQ(run["last_epoch"]["trimmed"], 0) << "the worst case's sizes never trim";
  EXPECT_GT(run["fixed_num_nodes"]["author"].get<int64_t>(), 1);
  EXPECT_TRUE(run["fixed_num_edges"].contains("paper__rev_writes__author")) << run.dump();
}

TEST_F(NodeHeteroRgcn, ClusterBatchesGiveTheSameBitsOnRerunAndOnOneAndTwoThreads) {
  const std::string args = hetero() + " --model rgcn" + cluster() + " --epochs 6 --seed 3";
  const nlohmann::json a = runJson(args + " --threads 1"), b = runJson(args + " --threads 2"),
                       c = runJson(args + " --threads 2");
  for (const char* key : {"loss_checksum", "predictions_checksum", "param_checksum"}) {
    EXPECT_EQ(a[key], b[key]) << key;
    EXPECT_EQ(b[key], c[key]) << key;
  }
  const nlohmann::json other = runJson(hetero() + " --model rgcn" + cluster() + " --epochs 6 --seed 4");
  EXPECT_NE(other["loss_checksum"], a["loss_checksum"]);  // the seed reaches the partition, batches and weights
}

TEST_F(NodeHeteroRgcn, HgtLearnsOnNeighbourAndClusterBatches) {
  for (const std::string& loader : {std::string(" --loader neighbor --batch-size 64"), cluster()}) {
    // 10 epochs: validation 1.00 on either loader's batches (1 Dec 2026); full batch's bar.
    const nlohmann::json hgt = runJson(hetero() + " --model hgt" + loader + " --epochs 10");
    EXPECT_GE(hgt["val_acc_mean"].get<double>(), 0.80) << loader << ": " << hgt.dump();
    EXPECT_GE(hgt["test_acc_mean"].get<double>(), 0.80) << loader << ": " << hgt.dump();
    EXPECT_EQ(hgt["model"], "hgt");
    EXPECT_EQ(hgt["evaluation"], "full");
  }
  const std::string args = hetero() + " --model hgt --loader neighbor --batch-size 64 --epochs 3 --seed 3";
  const nlohmann::json a = runJson(args + " --threads 1"), b = runJson(args + " --threads 2");
  for (const char* key : {"loss_checksum", "predictions_checksum", "param_checksum"}) EXPECT_EQ(a[key], b[key]) << key;
}

// --device ipu: the whole typed graph as one micro-batch (app/HeteroNodeDevice.h) gives the CPU's bits: the same
// ops in the same order, dropout drawn from the same (seed, optimizer step, micro-batch 0) key. Without dropout, two
// replicas of the same graph seed each backward with half the loss, whose sums are exact: the same bits again, also
// with two accumulated micro-batches on two pipelined stages for R-GCN, whose weights each receive one gradient a
// micro-batch. HGT's shared weights (a type's projections, read by every relation from it) receive several, which
// accumulation sums in another order: within 1e-6 there, as the engine's own tests hold (docs/device.md).
TEST_F(NodeHeteroRgcn, SimulatedIpuGivesTheCpuBits) {
  const std::string rgcn = hetero() + " --model rgcn --epochs 6 --seed 3";
  const nlohmann::json cpu = runJson(rgcn), ipu = runJson(rgcn + " --device ipu");
  for (const char* key : {"loss_checksum", "param_checksum", "predictions_checksum", "val_acc_mean"})
    EXPECT_EQ(cpu[key], ipu[key]) << key;
  EXPECT_EQ(ipu["device"], "ipu");
  EXPECT_EQ(cpu["device"], "cpu");
  EXPECT_EQ(ipu["host_requests"], 6);  // an update an epoch, as the CPU's step
  EXPECT_TRUE(ipu["memory_by_type"]["node_types"].contains("author")) << ipu.dump();
  const std::string still = rgcn + " --dropout 0";
  const nlohmann::json one = runJson(still);
  const nlohmann::json four = runJson(still + " --device ipu --replicas 2 --grad-accum 2 --pipeline-splits layers/1");
  EXPECT_EQ(four["ipus"], 4);
  EXPECT_EQ(one["param_checksum"], four["param_checksum"]);
  EXPECT_EQ(one["predictions_checksum"], four["predictions_checksum"]);
  const std::string hgt = hetero() + " --model hgt --epochs 4 --seed 3";
  const nlohmann::json hcpu = runJson(hgt), hipu = runJson(hgt + " --device ipu --replicas 2");
  for (const char* key : {"loss_checksum", "param_checksum", "predictions_checksum"})
    EXPECT_EQ(hcpu[key], hipu[key]) << key;
  const nlohmann::json piped = runJson(hgt + " --device ipu --grad-accum 2 --pipeline-splits layers/1");
  EXPECT_EQ(piped["ipus"], 2);
  const double a = hcpu["param_l2"][0].get<double>(), b = piped["param_l2"][0].get<double>();
  EXPECT_LE(std::abs(a - b) / a, 1e-6) << a << " vs " << b;
  EXPECT_EQ(hcpu["predictions_checksum"], piped["predictions_checksum"]);
}

// --loader neighbor on the simulated IPU (R-GCN): each fixed-size sampled batch a micro-batch, its featureless
// rows' ids in z; one a request gives the CPU's bits, and two a request (--grad-accum 2) stack 5 batches into 3
// host requests an epoch, the last padded with a weight-0 micro-batch.
TEST_F(NodeHeteroRgcn, SimulatedIpuTrainsNeighbourBatches) {
  const std::string sampled = hetero() + neighbor() + " --epochs 3 --seed 3";
  const nlohmann::json cpu = runJson(sampled), ipu = runJson(sampled + " --device ipu");
  for (const char* key : {"loss_checksum", "param_checksum", "predictions_checksum"})
    EXPECT_EQ(cpu[key], ipu[key]) << key;
  EXPECT_EQ(ipu["loader_runs"][0]["batches_per_epoch"], 5);
  // The split by type counts the batch's rows, as the loader fixed them.
  EXPECT_EQ(ipu["memory_by_type"]["node_types"]["author"]["rows"], ipu["loader_runs"][0]["fixed_num_nodes"]["author"]);
  const nlohmann::json two = runJson(sampled + " --device ipu --grad-accum 2");
  EXPECT_EQ(two["host_requests"], 9);
  EXPECT_NE(two["param_checksum"], ipu["param_checksum"]);
}

// The plan counts each type's tensors: one more node type (7 institutions without features) and its two relations
// (affiliated_with and its reverse) add, in the plan's own categories, exactly their weights (the institutions'
// embedding rows at the input width, the papers' 16, and each relation's RGCNConv weights, 16 x 64 then 64 x 4),
// their gradients and Adam's two moments, and the I/O buffers of their rows and edges (a mask byte a row; two node
// ids and the relation as 32-bit values and a mask byte an edge; double-buffered), all counted here from the graph;
// memory_by_type names the same figures, and the whole IPU grows by more (the activations over their rows).
TEST_F(NodeHeteroRgcn, SimulatedIpuPlanCountsEachTypesTensors) {
  auto plan = [](const std::string& folder) {
    const ProgramResult r = runExample(
        "node_property", "--data " + path(folder) + " --model rgcn --device ipu --plan-only --json --quiet", false);
    EXPECT_EQ(r.code, 0) << r.out;
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json a = plan("papers_authors"), b = plan("with_institutions");
  const int64_t embedding = kInstitutions * kFeatures, perRelation = kFeatures * 64 + 64 * kClasses;
  const int64_t params = embedding + 2 * perRelation, edges = kAuthors;
  const int64_t perEdge = 3 * 4 + 1, io = kInstitutions + 2 * edges * perEdge;
  auto grew = [&](const char* category) {
    return b["ipus"][0]["by_category"].value(category, int64_t{0}) -
           a["ipus"][0]["by_category"].value(category, int64_t{0});
  };
  EXPECT_EQ(grew("weights"), params * 4);
  EXPECT_EQ(grew("gradients"), params * 4);
  EXPECT_EQ(grew("optimizer state"), params * 8);
  EXPECT_EQ(grew("I/O buffers"), 2 * io);
  EXPECT_GT(b["ipus"][0]["total_bytes"].get<int64_t>() - a["ipus"][0]["total_bytes"].get<int64_t>(),
            params * 16 + 2 * io);
  const nlohmann::json& m = b["memory_by_type"];
  EXPECT_EQ(m["bytes_per_parameter"].get<double>(), 16.0);
  const nlohmann::json& institution = m["node_types"]["institution"];
  EXPECT_EQ(institution["rows"], kInstitutions);
  EXPECT_EQ(institution["parameters"], embedding);
  EXPECT_EQ(institution["parameter_bytes"], embedding * 16);
  EXPECT_EQ(institution["input_bytes"], kInstitutions);
  for (const char* r : {"author__affiliated_with__institution", "institution__rev_affiliated_with__author"}) {
    const nlohmann::json& rel = m["relations"][r];
    EXPECT_EQ(rel["edges"], edges) << r;
    EXPECT_EQ(rel["parameters"], perRelation) << r;
    EXPECT_EQ(rel["parameter_bytes"], perRelation * 16) << r;
    EXPECT_EQ(rel["io_buffer_bytes"], 2 * edges * perEdge) << r;
  }
  EXPECT_EQ(m["node_types"]["paper"]["input_bytes"], kPapers * (kFeatures * 4 + 1));
  // The relations both graphs have hold the same in both.
  EXPECT_EQ(a["memory_by_type"]["relations"]["author__writes__paper"], m["relations"]["author__writes__paper"]);
}

// A tile memory too small for the graph: refused at compile time with the out-of-memory report (exit 3), and the
// report's JSON keeps the split by type.
TEST_F(NodeHeteroRgcn, SimulatedIpuRefusesAGraphItsMemoryCannotHold) {
  const std::string report = path("oom.json");
  const ProgramResult r =
      runExample("node_property", hetero() + " --model rgcn --device ipu --tile-memory 98400 --report " + report);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("Out of memory: IPU 0"), std::string::npos) << r.out;
  std::ifstream f(report);
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_TRUE(j["memory_by_type"]["relations"].contains("author__writes__paper")) << j.dump();
  expectUsageError(runExample("node_property", hetero() + " --model rgcn --tile-memory 98400"), "--device ipu");
}

}  // namespace
