// toHomogeneous: PyG 2.3.1's HeteroData.to_homogeneous on a hand-made graph, every value worked out by hand from
// torch_geometric/data/hetero_data.py (node slices in type order, edge_index + [[src offset], [dst offset]], type
// vectors by repeat_interleave, features of the types that lack them filled with NaN / -1 or left out).
#include "data/HeteroToHomogeneous.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace gnn {
namespace {

std::vector<int64_t> ints(const Tensor& t) {
  const int64_t* p = t.data<int64_t>();
  return std::vector<int64_t>(p, p + t.numel());
}

Tensor edges(const std::vector<int64_t>& rowsThenCols) {
  return Tensor::fromVector(rowsThenCols, {2, static_cast<int64_t>(rowsThenCols.size() / 2)});
}

// author (2 nodes, no features), paper (3 nodes: x [3, 2], y, node_year), field (1 node, x [1, fieldWidth]);
// author-writes-paper, paper-cites-paper (with edge features), paper-has-field.
HeteroGraph smallGraph(int64_t fieldWidth) {
  HeteroGraph g;
  g.addNodeType("author", 2);
  NodeStore& paper = g.addNodeType("paper", 3);
  paper.x = Tensor::fromVector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  paper.y = Tensor::fromVector<int64_t>({0, 1, 0});
  paper.nodeFiles["node_year"] = Tensor::fromVector<int64_t>({2001, 2002, 2003}, {3, 1});
  std::vector<float> field(static_cast<size_t>(fieldWidth), 7.0f);
  g.addNodeType("field", 1).x = Tensor::fromVector(field, {1, fieldWidth});
  g.addEdgeType({"author", "writes", "paper"}, edges({0, 1, 1, /**/ 0, 0, 2}));
  g.addEdgeType({"paper", "cites", "paper"}, edges({0, 2, /**/ 1, 1})).edgeAttr =
      Tensor::fromVector<float>({0.5f, 0.25f}, {2, 1});
  g.addEdgeType({"paper", "has", "field"}, edges({2, /**/ 0}));
  g.validate();
  return g;
}

TEST(HeteroToHomogeneous, LaysTypesOutInOrderWithOffsets) {
  const HomogeneousGraph h = toHomogeneous(smallGraph(2));
  EXPECT_EQ(h.numNodes, 6);
  EXPECT_EQ(h.nodeTypeNames, (std::vector<std::string>{"author", "paper", "field"}));
  EXPECT_EQ(h.nodeSlices, (std::vector<int64_t>{0, 2, 5, 6}));
  EXPECT_EQ(h.nodeOffset("paper"), 2);
  EXPECT_EQ(h.nodeOffset("field"), 5);
  EXPECT_THROW(h.nodeOffset("venue"), std::invalid_argument);
  EXPECT_EQ(ints(h.nodeType), (std::vector<int64_t>{0, 0, 1, 1, 1, 2}));
  // writes + [[0], [2]], cites + [[2], [2]], has + [[2], [5]].
  EXPECT_EQ(ints(h.edgeIndex), (std::vector<int64_t>{0, 1, 1, 2, 4, 4, /**/ 2, 2, 4, 3, 3, 5}));
  EXPECT_EQ(ints(h.edgeType), (std::vector<int64_t>{0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(h.edgeSlices, (std::vector<int64_t>{0, 3, 5, 6}));
  ASSERT_EQ(h.edgeTypeNames.size(), 3u);
  EXPECT_EQ(h.edgeTypeNames[1], (EdgeType{"paper", "cites", "paper"}));
}

TEST(HeteroToHomogeneous, FillsTheTypesWithoutAFeatureWithDummyValues) {
  const HomogeneousGraph h = toHomogeneous(smallGraph(2));
  ASSERT_EQ(h.x.shape(), (Shape{6, 2}));
  const float* x = h.x.data<float>();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::isnan(x[i])) << i;  // the authors' rows
  EXPECT_EQ(std::vector<float>(x + 4, x + 12), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 7}));
  EXPECT_EQ(ints(h.y), (std::vector<int64_t>{-1, -1, 0, 1, 0, -1}));
  ASSERT_EQ(h.nodeFiles.count("node_year"), 1u);
  EXPECT_EQ(h.nodeFiles.at("node_year").shape(), (Shape{6, 1}));
  EXPECT_EQ(ints(h.nodeFiles.at("node_year")), (std::vector<int64_t>{-1, -1, 2001, 2002, 2003, -1}));
  ASSERT_EQ(h.edgeAttr.shape(), (Shape{6, 1}));
  const float* a = h.edgeAttr.data<float>();
  EXPECT_TRUE(std::isnan(a[0]) && std::isnan(a[1]) && std::isnan(a[2]) && std::isnan(a[5]));
  EXPECT_EQ(a[3], 0.5f);
  EXPECT_EQ(a[4], 0.25f);
  EXPECT_FALSE(h.edgeReltype.defined());  // no type has one
}

TEST(HeteroToHomogeneous, LeavesOutWhatPyGLeavesOut) {
  // Widths 2 and 3: len(set(sizes)) != 1, so x is neither filled nor combined; y still is.
  const HomogeneousGraph wide = toHomogeneous(smallGraph(3));
  EXPECT_FALSE(wide.x.defined());
  EXPECT_TRUE(wide.y.defined());
  // Without dummy values only the features every type has are combined: none here.
  ToHomogeneousOptions o;
  o.dummyValues = false;
  o.addNodeType = false;
  o.addEdgeType = false;
  const HomogeneousGraph bare = toHomogeneous(smallGraph(2), o);
  EXPECT_FALSE(bare.x.defined());
  EXPECT_FALSE(bare.y.defined());
  EXPECT_FALSE(bare.edgeAttr.defined());
  EXPECT_TRUE(bare.nodeFiles.empty());
  EXPECT_FALSE(bare.nodeType.defined());
  EXPECT_FALSE(bare.edgeType.defined());
  EXPECT_EQ(ints(bare.edgeIndex), (std::vector<int64_t>{0, 1, 1, 2, 4, 4, /**/ 2, 2, 4, 3, 3, 5}));
}

TEST(HeteroToHomogeneous, AfterToUndirectedTheReverseRelationsComeLast) {
  // PyG's usual order: T.ToUndirected() appends rev_writes and rev_has; cites merges in place.
  HeteroGraph g = smallGraph(2);
  g.toUndirected();
  const HomogeneousGraph h = toHomogeneous(g);
  ASSERT_EQ(h.edgeTypeNames.size(), 5u);
  EXPECT_EQ(h.edgeTypeNames[3], (EdgeType{"paper", "rev_writes", "author"}));
  EXPECT_EQ(h.edgeTypeNames[4], (EdgeType{"field", "rev_has", "paper"}));
  // cites (0->1, 2->1) made undirected and coalesced: (0,1) (1,0) (1,2) (2,1), each + 2.
  EXPECT_EQ(h.edgeSlices, (std::vector<int64_t>{0, 3, 7, 8, 11, 12}));
  const std::vector<int64_t> e = ints(h.edgeIndex);
  EXPECT_EQ(std::vector<int64_t>(e.begin() + 3, e.begin() + 7), (std::vector<int64_t>{2, 3, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(e.begin() + 12 + 3, e.begin() + 12 + 7), (std::vector<int64_t>{3, 2, 4, 3}));
  // rev_writes: papers (offset 2) to authors (offset 0): the writes edges flipped.
  EXPECT_EQ(std::vector<int64_t>(e.begin() + 8, e.begin() + 11), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(std::vector<int64_t>(e.begin() + 12 + 8, e.begin() + 12 + 11), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(ints(h.edgeType), (std::vector<int64_t>{0, 0, 0, 1, 1, 1, 1, 2, 3, 3, 3, 4}));
}

TEST(HeteroToHomogeneous, CombinesTheNamedFeaturesOnly) {
  // PyG's node_attrs / edge_attrs: [] combines nothing; a name is combined (dummy-filled first) or refused.
  ToHomogeneousOptions none;
  none.nodeAttrs = std::vector<std::string>{};
  none.edgeAttrs = std::vector<std::string>{};
  const HomogeneousGraph bare = toHomogeneous(smallGraph(2), none);
  EXPECT_FALSE(bare.x.defined());
  EXPECT_FALSE(bare.y.defined());
  EXPECT_TRUE(bare.nodeFiles.empty());
  EXPECT_FALSE(bare.edgeAttr.defined());
  EXPECT_EQ(ints(bare.nodeType), (std::vector<int64_t>{0, 0, 1, 1, 1, 2}));
  ToHomogeneousOptions justY;
  justY.nodeAttrs = std::vector<std::string>{"y"};
  const HomogeneousGraph y = toHomogeneous(smallGraph(3), justY);
  EXPECT_FALSE(y.x.defined());
  EXPECT_EQ(ints(y.y), (std::vector<int64_t>{-1, -1, 0, 1, 0, -1}));
  ToHomogeneousOptions wideX;
  wideX.nodeAttrs = std::vector<std::string>{"x"};
  EXPECT_THROW(toHomogeneous(smallGraph(3), wideX), std::invalid_argument);  // widths 2 and 3
  wideX.nodeAttrs = std::vector<std::string>{"node_species"};
  EXPECT_THROW(toHomogeneous(smallGraph(2), wideX), std::invalid_argument);  // no type has it
}

TEST(HeteroToHomogeneous, RefusesAFeatureOfTwoDtypes) {
  HeteroGraph g = smallGraph(2);
  g.node("field").y = Tensor::fromVector<float>({1.0f});
  EXPECT_THROW(toHomogeneous(g), std::invalid_argument);
}

}  // namespace
}  // namespace gnn
