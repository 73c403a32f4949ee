// HeteroGraph: PyG HeteroData's ordering, metadata and checks, and PyG 2.3.1's ToUndirected on hand-made graphs.
#include "data/HeteroGraph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/TensorValues.h"

namespace gnn {
namespace {

Tensor edges(const std::vector<int64_t>& rowsThenCols) {
  return Tensor::fromVector(rowsThenCols, {2, static_cast<int64_t>(rowsThenCols.size() / 2)});
}

void expectInvalid(const HeteroGraph& g, const std::string& fragment) {
  try {
    g.validate();
    FAIL() << "expected an error saying " << fragment;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(HeteroGraph, KeepsInsertionOrderAndNamesTypesAsPyG) {
  HeteroGraph g;
  g.addNodeType("paper", 3);
  g.addNodeType("author", 2);
  g.addEdgeType({"paper", "cites", "paper"}, edges({0, 1, 1, 2}));
  g.addEdgeType({"author", "writes", "paper"}, edges({0, 1, 2, 0}));
  const auto [nodeTypes, edgeTypes] = g.metadata();
  EXPECT_EQ(nodeTypes, (std::vector<std::string>{"paper", "author"}));
  EXPECT_EQ(edgeTypes, (std::vector<EdgeType>{{"paper", "cites", "paper"}, {"author", "writes", "paper"}}));
  EXPECT_EQ(edgeTypes[1].str(), "author__writes__paper");
  EXPECT_TRUE((EdgeType{"author", "writes", "paper"} < EdgeType{"paper", "cites", "paper"}));
  EXPECT_TRUE((EdgeType{"a", "r", "b"} < EdgeType{"a", "s", "a"}));
  EXPECT_FALSE((EdgeType{"a", "r", "b"} < EdgeType{"a", "r", "b"}));
  EXPECT_EQ(g.numNodes("author"), 2);
  EXPECT_EQ(g.numEdges(), 4);
  EXPECT_THROW(g.addNodeType("paper", 1), std::invalid_argument);
  EXPECT_THROW(g.addEdgeType({"paper", "cites", "paper"}, edges({0, 0})), std::invalid_argument);
  EXPECT_THROW(g.node("venue"), std::invalid_argument);
  g.validate();
}

// The usage example of data/HeteroGraph.h, as written there.
TEST(HeteroGraph, HeaderExample) {
  HeteroGraph g;
  g.addNodeType("paper", 3).x = Tensor::zeros({3, 128});
  g.addNodeType("author", 2);
  g.addEdgeType({"author", "writes", "paper"}, Tensor::fromVector<int64_t>({0, 1, 1, 2}, {2, 2}));
  g.validate();
  g.toUndirected();  // adds ("paper", "rev_writes", "author"), as PyG's T.ToUndirected()
  auto [nodeTypes, edgeTypes] = g.metadata();
  EXPECT_EQ(nodeTypes, (std::vector<std::string>{"paper", "author"}));
  EXPECT_EQ(edgeTypes, (std::vector<EdgeType>{{"author", "writes", "paper"}, {"paper", "rev_writes", "author"}}));
  EXPECT_EQ(values(g.edge({"paper", "rev_writes", "author"}).edgeIndex), (std::vector<int64_t>{1, 2, 0, 1}));
}

TEST(HeteroGraph, ValidateNamesTheTypeAndTheProblem) {
  HeteroGraph g;
  g.addNodeType("paper", 3);
  g.addNodeType("author", 2);
  g.addEdgeType({"author", "writes", "paper"}, edges({0, 1, 2, 3}));
  expectInvalid(g, "edge type author__writes__paper: edge 1 enters node 3 but 'paper' has 3 nodes");
  g.edge({"author", "writes", "paper"}).edgeIndex = edges({0, 2, 2, 0});
  expectInvalid(g, "edge type author__writes__paper: edge 1 leaves node 2 but 'author' has 2 nodes");
  g.edge({"author", "writes", "paper"}).edgeIndex = edges({0, 1, 2, 0});
  g.validate();
  g.node("paper").x = Tensor::zeros({2, 4});
  expectInvalid(g, "node type 'paper': x has shape [2, 4] but 3 rows were expected");
  g.node("paper").x = Tensor::zeros({3, 4});
  g.node("paper").testIdx = {3};
  expectInvalid(g, "node type 'paper': test split lists node 3 but the type has 3 nodes");
  g.node("paper").testIdx = {2};
  g.addEdgeType({"author", "at", "institution"}, edges({0, 0}));
  expectInvalid(g, "unknown destination node type 'institution'");
}

// The example in PyG 2.3.1's torch_geometric/utils/undirected.py docstring, as a relation between nodes of one type:
//   to_undirected([[0, 1, 1], [1, 0, 2]], [1., 1., 1.]) = ([[0, 1, 1, 2], [1, 0, 2, 1]], [2., 2., 1., 1.])
//   ... reduce='mean' -> [1., 1., 1., 1.]
TEST(HeteroGraph, ToUndirectedMergesASameTypeRelationAsPyGsDocstring) {
  for (EdgeReduce reduce : {EdgeReduce::Add, EdgeReduce::Mean}) {
    HeteroGraph g;
    g.addNodeType("n", 3);
    g.addEdgeType({"n", "to", "n"}, edges({0, 1, 1, 1, 0, 2})).edgeAttr = Tensor::fromVector<float>({1, 1, 1});
    g.toUndirected(reduce);
    EXPECT_EQ(g.edgeTypes().size(), 1u);
    const EdgeStore& s = g.edge({"n", "to", "n"});
    EXPECT_EQ(values(s.edgeIndex), (std::vector<int64_t>{0, 1, 1, 2, 1, 0, 2, 1}));
    EXPECT_EQ(s.edgeAttr.shape(), (Shape{4}));
    EXPECT_EQ(floats(s.edgeAttr), reduce == EdgeReduce::Add ? (std::vector<float>{2, 2, 1, 1})
                                                            : (std::vector<float>{1, 1, 1, 1}));
  }
}

TEST(HeteroGraph, ToUndirectedReducesMultiColumnFeaturesByRunOfEqualEdges) {
  HeteroGraph g;
  g.addNodeType("n", 3);
  // (2,0) twice and (0,2) once: all three fall on (0,2) and on (2,0) after the flips.
  EdgeStore& s = g.addEdgeType({"n", "to", "n"}, edges({2, 2, 0, 0, 0, 2}));
  s.edgeAttr = Tensor::fromVector<float>({1, 10, 2, 20, 4, 40}, {3, 2});
  g.toUndirected(EdgeReduce::Max);
  EXPECT_EQ(values(s.edgeIndex), (std::vector<int64_t>{0, 2, 2, 0}));
  EXPECT_EQ(floats(s.edgeAttr), (std::vector<float>{4, 40, 4, 40}));
  s.edgeIndex = edges({2, 2, 0, 0, 0, 2});
  s.edgeAttr = Tensor::fromVector<float>({1, 10, 2, 20, 4, 40}, {3, 2});
  g.toUndirected(EdgeReduce::Min);
  EXPECT_EQ(floats(s.edgeAttr), (std::vector<float>{1, 10, 1, 10}));
}

TEST(HeteroGraph, ToUndirectedRefusesMeanOverIntegerDuplicates) {
  HeteroGraph g;
  g.addNodeType("n", 2);
  g.addEdgeType({"n", "to", "n"}, edges({0, 1, 1, 0})).edgeReltype = Tensor::fromVector<int64_t>({1, 2}, {2, 1});
  EXPECT_THROW(g.toUndirected(EdgeReduce::Mean), std::invalid_argument);
}

TEST(HeteroGraph, ToUndirectedWithoutMergeAddsRevTypesForSameTypeRelationsToo) {
  HeteroGraph g;
  g.addNodeType("n", 3);
  g.addEdgeType({"n", "to", "n"}, edges({0, 1, 1, 2}));
  g.toUndirected(EdgeReduce::Add, /*merge=*/false);
  EXPECT_EQ(g.edgeTypes(), (std::vector<EdgeType>{{"n", "to", "n"}, {"n", "rev_to", "n"}}));
  EXPECT_EQ(values(g.edge({"n", "to", "n"}).edgeIndex), (std::vector<int64_t>{0, 1, 1, 2}));
  EXPECT_EQ(values(g.edge({"n", "rev_to", "n"}).edgeIndex), (std::vector<int64_t>{1, 2, 0, 1}));
}

// PyG assigns data[dst, 'rev_' + rel, src] = ..., over a reverse type that exists; it visits the types present
// when it starts, that reverse type among them (with its new edges), so it gets a reverse of its own.
TEST(HeteroGraph, ToUndirectedOverwritesAnExistingRevTypeAsPyGDoes) {
  HeteroGraph g;
  g.addNodeType("a", 2);
  g.addNodeType("b", 3);
  g.addEdgeType({"a", "r", "b"}, edges({0, 1, 2, 0})).edgeAttr = Tensor::fromVector<float>({7, 8});
  g.addEdgeType({"b", "rev_r", "a"}, edges({0, 0}));
  g.toUndirected();
  EXPECT_EQ(g.edgeTypes(), (std::vector<EdgeType>{{"a", "r", "b"}, {"b", "rev_r", "a"}, {"a", "rev_rev_r", "b"}}));
  EXPECT_EQ(values(g.edge({"b", "rev_r", "a"}).edgeIndex), (std::vector<int64_t>{2, 0, 0, 1}));
  EXPECT_EQ(floats(g.edge({"b", "rev_r", "a"}).edgeAttr), (std::vector<float>{7, 8}));
  EXPECT_EQ(values(g.edge({"a", "rev_rev_r", "b"}).edgeIndex), (std::vector<int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(floats(g.edge({"a", "rev_rev_r", "b"}).edgeAttr), (std::vector<float>{7, 8}));
  g.validate();
}

TEST(HeteroGraph, ToUndirectedOnAnEmptyRelationLeavesItEmpty) {
  HeteroGraph g;
  g.addNodeType("n", 2);
  g.addNodeType("m", 2);
  g.addEdgeType({"n", "to", "n"}, Tensor::empty({2, 0}, DType::I64));
  g.addEdgeType({"n", "to", "m"}, Tensor::empty({2, 0}, DType::I64));
  g.toUndirected();
  EXPECT_EQ(g.edge({"n", "to", "n"}).numEdges(), 0);
  EXPECT_EQ(g.edge({"m", "rev_to", "n"}).numEdges(), 0);
  g.validate();
}

}  // namespace
}  // namespace gnn
