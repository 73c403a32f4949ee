// NeighbourMeanFeatures: the featureless types' rows as their featured neighbours' means, worked by hand on an
// ogbn-mag-shaped graph (papers featured; authors and fields one hop away; institutions two), as the HGT authors'
// ogbn-mag preprocessing makes them.
#include "data/NeighbourMeanFeatures.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gnn {
namespace {

Tensor edges(const std::vector<int64_t>& rowsThenCols) {
  return Tensor::fromVector(rowsThenCols, {2, static_cast<int64_t>(rowsThenCols.size() / 2)});
}

void expectRow(const Tensor& x, int64_t row, const std::vector<float>& want) {
  ASSERT_EQ(x.dim(1), static_cast<int64_t>(want.size()));
  for (size_t f = 0; f < want.size(); ++f)
    EXPECT_FLOAT_EQ(x.data<float>()[row * x.dim(1) + static_cast<int64_t>(f)], want[f]) << "row " << row;
}

// paper x: [1, 0], [3, 2], [5, 4]; author 0 writes papers 0, 1; author 1 writes paper 2; author 2 writes none;
// field 0 is the topic of papers 0, 1, 2; institution 0 has authors 0 and 1; institution 1 has author 2.
HeteroGraph magShaped() {
  HeteroGraph g;
  g.addNodeType("author", 3);
  g.addNodeType("field_of_study", 1);
  g.addNodeType("institution", 2);
  g.addNodeType("paper", 3).x = Tensor::fromVector<float>({1, 0, 3, 2, 5, 4}, {3, 2});
  g.addEdgeType({"author", "affiliated_with", "institution"}, edges({0, 1, 2, 0, 0, 1}));
  g.addEdgeType({"author", "writes", "paper"}, edges({0, 0, 1, 0, 1, 2}));
  g.addEdgeType({"paper", "has_topic", "field_of_study"}, edges({0, 1, 2, 0, 0, 0}));
  g.toUndirected();
  return g;
}

TEST(NeighbourMeanFeatures, OneHopTypesTakeTheirPapersMeanAndTwoHopTypesTheirMeans) {
  HeteroGraph g = magShaped();
  const std::vector<std::string> filled = fillFeaturelessByNeighbourMean(g);
  // Authors and fields in the first round (from papers), institutions in the second (from the authors' rows).
  EXPECT_EQ(filled, (std::vector<std::string>{"author", "field_of_study", "institution"}));
  const Tensor& author = g.node("author").x;
  expectRow(author, 0, {2, 1});  // papers 0 and 1
  expectRow(author, 1, {5, 4});  // paper 2
  expectRow(author, 2, {0, 0});  // no paper: zeros
  expectRow(g.node("field_of_study").x, 0, {3, 2});
  // Institutions read authors (filled the round before), not papers: institution 0 = mean(author 0, author 1).
  expectRow(g.node("institution").x, 0, {3.5f, 2.5f});
  expectRow(g.node("institution").x, 1, {0, 0});
  expectRow(g.node("paper").x, 1, {3, 2});  // featured types are left as they were
}

TEST(NeighbourMeanFeatures, LeavesATypeNoFeaturedTypeReachesWithout) {
  HeteroGraph g;
  g.addNodeType("paper", 2).x = Tensor::fromVector<float>({1, 2}, {2, 1});
  g.addNodeType("island", 2);
  g.addNodeType("empty", 0);
  g.addEdgeType({"island", "links", "island"}, edges({0, 1}));
  g.addEdgeType({"paper", "cites", "paper"}, edges({0, 1}));
  EXPECT_TRUE(fillFeaturelessByNeighbourMean(g).empty());
  EXPECT_FALSE(g.node("island").x.defined());
  EXPECT_FALSE(g.node("empty").x.defined());
}

TEST(NeighbourMeanFeatures, SkipsSourcesOfAnotherWidthThanTheFirst) {
  HeteroGraph g;
  g.addNodeType("a", 1).x = Tensor::fromVector<float>({4, 6}, {1, 2});
  g.addNodeType("b", 1).x = Tensor::fromVector<float>({100, 100, 100}, {1, 3});
  g.addNodeType("t", 1);
  g.addEdgeType({"a", "r", "t"}, edges({0, 0}));
  g.addEdgeType({"b", "s", "t"}, edges({0, 0}));
  fillFeaturelessByNeighbourMean(g);
  expectRow(g.node("t").x, 0, {4, 6});  // b's three-wide rows are not averaged in
}

}  // namespace
}  // namespace gnn
