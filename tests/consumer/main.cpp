// Uses an installed gnn through its public headers only: builds a graph, runs a small computation on the
// autograd tape and checks values and gradients. Exit status 0 = the installed package works.
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "data/Graph.h"
#include "gnn/autograd/Variable.h"
#include "gnn/nn/conv/GCNConv.h"
#include "gnn/system/Random.h"
#include "gnn/tensor/Tensor.h"

namespace {

int failures = 0;
void expectNear(const char* what, double got, double want) {
  if (std::abs(got - want) > 1e-9) {
    std::printf("FAIL %s: got %.12g, want %.12g\n", what, got, want);
    ++failures;
  }
}

// y = sum over edges (s -> d) of w[s] * x[d]: a weighted neighbour sum, written as one op with its backward
// closure, the way gnn's own ops are written (see gnn/autograd/Variable.h).
gnn::Variable edgeSum(const gnn::Variable& w, const gnn::Variable& x, const gnn::Tensor& edgeIndex) {
  const int64_t e = edgeIndex.dim(1);
  const int64_t* src = edgeIndex.data<int64_t>();
  const int64_t* dst = src + e;
  const double* wv = w.value().data<double>();
  const double* xv = x.value().data<double>();
  double y = 0;
  for (int64_t i = 0; i < e; ++i) y += wv[src[i]] * xv[dst[i]];
  gnn::OpInfo info{"edgeSum", 2 * e, e * 32, 8, 4 * e};
  return gnn::Variable::record(info, gnn::Tensor::scalar(y, gnn::DType::F64), {w, x}, {edgeIndex, w.value(), x.value()},
                               [](const gnn::Tensor& gy, std::vector<gnn::GradInput>& in,
                                  const std::vector<gnn::Tensor>& saved) {
                                 const gnn::Tensor& edgeIndex = saved[0];
                                 const int64_t n = edgeIndex.dim(1);
                                 const int64_t* s = edgeIndex.data<int64_t>();
                                 const int64_t* d = s + n;
                                 const double g = gy.item();
                                 gnn::Tensor gw = gnn::Tensor::zeros(in[0].shape(), gnn::DType::F64);
                                 gnn::Tensor gx = gnn::Tensor::zeros(in[1].shape(), gnn::DType::F64);
                                 const double* wv = saved[1].data<double>();
                                 const double* xv = saved[2].data<double>();
                                 for (int64_t i = 0; i < n; ++i) {
                                   gw.data<double>()[s[i]] += g * xv[d[i]];
                                   gx.data<double>()[d[i]] += g * wv[s[i]];
                                 }
                                 if (in[0].requiresGrad()) in[0].addGrad(gw);
                                 if (in[1].requiresGrad()) in[1].addGrad(gx);
                               });
}

}  // namespace

int main() {
  // A directed triangle 0 -> 1 -> 2 -> 0 plus the edge 0 -> 2.
  gnn::Graph g;
  g.numNodes = 3;
  g.x = gnn::Tensor::fromVector<double>({1.0, 2.0, 3.0}, {3, 1});
  g.edgeIndex = gnn::Tensor::fromVector<int64_t>({0, 1, 2, 0, /**/ 1, 2, 0, 2}, {2, 4});
  g.validate("consumer graph");
  if (g.numEdges() != 4) {
    std::printf("FAIL numEdges: %lld\n", static_cast<long long>(g.numEdges()));
    ++failures;
  }

  gnn::Variable w(gnn::Tensor::fromVector<double>({0.5, -1.0, 2.0}, {3}), /*requiresGrad=*/true);
  gnn::Variable x(g.x.reshape({3}), /*requiresGrad=*/true);
  gnn::Variable y = edgeSum(w, x, g.edgeIndex);
  // y = w0*x1 + w1*x2 + w2*x0 + w0*x2 = 0.5*2 - 1*3 + 2*1 + 0.5*3 = 1.5
  expectNear("y", y.value().item(), 1.5);
  y.backward();
  // dy/dw = [x1 + x2, x2, x0] = [5, 3, 1]; dy/dx = [w2, w0, w1 + w0] = [2, 0.5, -0.5]
  const double wantW[] = {5, 3, 1}, wantX[] = {2, 0.5, -0.5};
  for (int i = 0; i < 3; ++i) {
    expectNear("dy/dw", w.grad().at(i), wantW[i]);
    expectNear("dy/dx", x.grad().at(i), wantX[i]);
  }

  // A bad graph is a user error with a message, not a crash.
  gnn::Graph bad = g;
  bad.numNodes = 2;
  bad.x = gnn::Tensor();
  bool threw = false;
  try {
    bad.validate("bad graph");
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  if (!threw) {
    std::printf("FAIL validate accepted an edge to node 2 in a 2-node graph\n");
    ++failures;
  }

  // A layer from its room (gnn/nn/conv), with PyG's parameter names and layout: GCNConv(1 -> 2) on the graph,
  // weight [2, 1] = [1, -1], bias [0.5, 0]. Self-loops added; in-degrees 2, 2, 3 (node 2 hears 0, 1 and itself).
  gnn::Generator gen(1);
  gnn::GCNConvOptions opt;
  opt.dtype = gnn::DType::F64;
  gnn::GCNConv conv(1, 2, gen, opt);
  const auto named = conv.namedParameters();
  if (named.size() != 2 || named[0].first != "lin.weight" || named[0].second.shape() != gnn::Shape{2, 1}) {
    std::printf("FAIL GCNConv's parameters are not PyG's lin.weight [out, in] and bias\n");
    ++failures;
  }
  conv.weight().value() = gnn::Tensor::fromVector<double>({1.0, -1.0}, {2, 1});
  conv.bias()->value() = gnn::Tensor::fromVector<double>({0.5, 0.0}, {2});
  const gnn::Tensor h = conv.forward(gnn::Variable(g.x), g.edgeIndex).value();
  // Node 0 hears node 2 (degree 3) and itself (degree 2): 3 / sqrt(6) + 1 / 2.
  const double h0 = 3.0 / std::sqrt(6.0) + 1.0 / 2.0;
  expectNear("GCNConv h[0][0]", h.at(0), h0 + 0.5);
  expectNear("GCNConv h[0][1]", h.at(1), -h0);

  if (failures) return 1;
  std::printf("consumer: installed gnn works (y = %g, dy/dw = [%g, %g, %g])\n", y.value().item(),
              w.grad().at(0), w.grad().at(1), w.grad().at(2));
  return 0;
}
