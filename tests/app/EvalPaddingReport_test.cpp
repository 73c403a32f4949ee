// app/EvalPaddingReport.h: a set's shapes chosen once, the line shown only on a set's first pass, and the results'
// keys: each set's padding with its shapes and their molecules beside one shape's, the efficiencies over every
// set's last pass (the node-pair one only for models that read node-pair blocks).
#include "app/EvalPaddingReport.h"

#include <gtest/gtest.h>

#include "loaders/SyntheticGraphs.h"

namespace gnn::app {
namespace {

struct Sets {
  std::shared_ptr<InMemoryDataset> dataset = test::graphormerDataset(150, 6, 1, 24, 3);
  std::vector<int64_t> valid, test;
  FixedSizeOptions base;
  Sets() {
    for (int64_t i = 0; i < 150; ++i) (i % 3 == 0 ? test : valid).push_back((i * 7) % 150);
    base = FixedSizeOptions::fromDataset(*dataset, 17);
  }
};

TEST(EvalPaddingReport, ChoosesASetsShapesOnce) {
  Sets s;
  EvalPaddingReport r(s.dataset, s.base, 3, /*nodePairs=*/true, "prog");
  const ShapeBuckets& b = r.bucketsFor("valid", s.valid);
  EXPECT_GE(b.size(), 2);
  EXPECT_LE(b.size(), 3);
  // The same shapes however the set is named later: chosen from its molecules the first time.
  EXPECT_EQ(&r.bucketsFor("valid", s.test), &b);
  EXPECT_EQ(r.bucketsFor("test", s.test).toString(),
            ShapeBuckets::choose(graphSizes(*s.dataset, s.test), s.base, 3, ShapeCost::NodePairs).toString());
  EvalPaddingReport one(s.dataset, s.base, 1, true, "prog");
  EXPECT_EQ(one.bucketsFor("valid", s.valid).toString(), ShapeBuckets::single(s.base).toString());
}

TEST(EvalPaddingReport, ALineOnASetsFirstPassOnly) {
  Sets s;
  EvalPaddingReport r(s.dataset, s.base, 3, true, "prog");
  const PaddingReport p = plannedPadding(s.dataset, s.valid, r.bucketsFor("valid", s.valid), true);
  const std::optional<std::string> line = r.note("valid", s.valid, p);
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->rfind("prog: valid batches (100 molecules) in ", 0), 0u) << *line;
  EXPECT_NE(line->find("shapes (--eval-buckets 3): atoms "), std::string::npos) << *line;
  EXPECT_NE(line->find("atom pairs "), std::string::npos) << *line;
  EXPECT_NE(line->find("; one shape: "), std::string::npos) << *line;
  EXPECT_FALSE(r.note("valid", s.valid, p).has_value());
  EXPECT_TRUE(r.note("test", s.test, p).has_value());
}

TEST(EvalPaddingReport, ResultsOfEverySetsLastPass) {
  Sets s;
  EvalPaddingReport r(s.dataset, s.base, 3, true, "prog");
  const PaddingReport valid = plannedPadding(s.dataset, s.valid, r.bucketsFor("valid", s.valid), true);
  const PaddingReport test = plannedPadding(s.dataset, s.test, r.bucketsFor("test", s.test), true);
  r.note("valid", s.valid, PaddingReport{});
  r.note("valid", s.valid, valid);  // the last pass counts, the first one's JSON stays
  r.describe("test", s.test, test);
  nlohmann::json out;
  r.addTo(out);
  EXPECT_EQ(out["eval_buckets"], 3);
  ASSERT_TRUE(out["eval_padding"].contains("valid"));
  ASSERT_TRUE(out["eval_padding"].contains("test"));
  EXPECT_EQ(out["eval_padding"]["valid"]["batches"], 0);
  const nlohmann::json& t = out["eval_padding"]["test"];
  EXPECT_EQ(t["batches"], test.batches);
  EXPECT_EQ(t["single_shape"], fixedToJson(s.base));
  EXPECT_EQ(t["single_shape_padding"],
            plannedPadding(s.dataset, s.test, ShapeBuckets::single(s.base), true).toJson());
  int64_t molecules = 0;
  for (const nlohmann::json& shape : t["shapes"]) molecules += shape["molecules"].get<int64_t>();
  EXPECT_EQ(molecules, static_cast<int64_t>(s.test.size()));
  EXPECT_EQ(t["shapes"].size(), static_cast<size_t>(r.bucketsFor("test", s.test).size()));
  PaddingReport all = valid;
  all.merge(test);
  EXPECT_DOUBLE_EQ(out["eval_node_efficiency"].get<double>(), all.nodeEfficiency());
  EXPECT_DOUBLE_EQ(out["eval_edge_efficiency"].get<double>(), all.edgeEfficiency());
  EXPECT_DOUBLE_EQ(out["eval_node_pair_efficiency"].get<double>(), all.nodePairEfficiency());
  EXPECT_GT(all.nodeEfficiency(), 0);

  // Without node-pair blocks: no node-pair efficiency, no atom pairs in the line.
  EvalPaddingReport rows(s.dataset, s.base, 3, false, "prog");
  const std::optional<std::string> line =
      rows.note("valid", s.valid, plannedPadding(s.dataset, s.valid, rows.bucketsFor("valid", s.valid), false));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->find("atom pairs"), std::string::npos) << *line;
  nlohmann::json noPairs;
  rows.addTo(noPairs);
  EXPECT_FALSE(noPairs.contains("eval_node_pair_efficiency"));
}

}  // namespace
}  // namespace gnn::app
