// ProductsLikeGraph: writes a synthetic node-classification graph shaped like ogbn-products (Hu et al., OGB,
// NeurIPS 2020: 2,449,029 nodes, 61,859,140 undirected edges = 123.7M directed ones, ~50 per node, 100
// real-valued features, 47 classes) in OGB's node-property raw layout, as OgbNodeDataset reads it (docs/datasets.md, "Node
// datasets"). The classes are planted communities, so a GCN can separate them, and the file is the same bytes
// for the same options on any machine (own random stream and number formatting, nothing from <random>).
//
//   ProductsLikeOptions o;
//   o.nodes = 24500;                       // 245,000 for the measurements in docs/datasets.md
//   ProductsLikeStats s = writeProductsLike("/tmp/products_like", o);
//
// Structure (all choices seeded):
//   classes   node v's class drawn with probability ~ (c + 1)^-0.7 (skewed like products' labels, milder)
//   edges     node u starts d_u undirected edges, d_u log-normal with mean avgDegree / 2, each written in both
//             directions (u,v then v,u), so edge.csv holds ~avgDegree directed edges per node; with oneWay
//             written once (u,v), as OGB stores ogbn-products, and OGB's loader (add_inverse_edge) or
//             OgbNodeOptions::addInverseEdges restores v,u right after each, the same graph bit for bit:
//             60% to a node near u on its class's ring (within +-ringWindow: fine-grained communities that
//             METIS can cut cheaply, as co-purchase graphs have), 20% to any node of u's class, 20% to any node
//             (edges across classes); self-loops are redrawn; duplicates are kept, as in raw edge lists
//   features  x_v = scale_j * (centroid_{class(v)} + noise * N(0, 1)) + offset_j, centroids N(0, 1): real values,
//             about half negative, with per-feature scale (0.5 .. 2) and offset (-1 .. 1) that standardisation
//             undoes; written with 3 decimals
//   split     a seeded permutation: the first 8% train, the next 2% valid, the rest test (products: 8/2/90)
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/OutFile.h"
#include "bench/SplitMix.h"

namespace gnn::bench {

struct ProductsLikeOptions {
  int64_t nodes = 24500;
  int64_t features = 100;
  int64_t classes = 47;
  double avgDegree = 50;  ///< directed edges per node (products: 2 x 61,859,140 / 2,449,029 = 50.5)
  double localFraction = 0.6, classFraction = 0.2;  ///< the rest go to uniform random nodes
  int64_t ringWindow = 100;
  double noise = 3.0;  ///< per-feature noise std relative to the centroids' (1)
  double trainFraction = 0.08, validFraction = 0.02;
  uint64_t seed = 0;
  bool gzip = true;  ///< .csv.gz (level 1) as OGB ships them, else plain .csv
  /// Each undirected edge once, OGB's form (read it with inverse edges added: a folder named ogbn-products, or
  /// --add-inverse-edges on). Off by default, so existing folders, commands and figures keep their meaning.
  bool oneWay = false;
};

struct ProductsLikeStats {
  int64_t nodes = 0, edges = 0;  ///< edges: directed edges of the graph (with oneWay, twice edge.csv's lines)
  int64_t bytes = 0;             ///< on disk, all files
  double seconds = 0;
};

namespace detail {

// Refuses options no graph can be written with.
inline void checkOptions(const ProductsLikeOptions& o) {
  if (o.nodes < 2 || o.features < 1 || o.classes < 1 || o.classes > o.nodes || o.avgDegree <= 0 ||
      o.localFraction < 0 || o.classFraction < 0 || o.localFraction + o.classFraction > 1 || o.ringWindow < 1 ||
      o.trainFraction <= 0 || o.validFraction < 0 || o.trainFraction + o.validFraction > 1)
    throw std::invalid_argument("writeProductsLike: options out of range");
}

// Creates dir's folders and removes what an earlier run of the other compression left there.
inline void prepareFolders(const std::string& dir, bool gzip) {
  namespace fs = std::filesystem;
  fs::create_directories(fs::path(dir) / "raw");
  fs::create_directories(fs::path(dir) / "split" / "random");
  // A file of the other compression left from an earlier run would be found first or second by the reader.
  for (const char* f : {"raw/edge", "raw/node-feat", "raw/node-label", "raw/num-node-list", "split/random/train",
                        "split/random/valid", "split/random/test"})
    fs::remove(fs::path(dir) / (std::string(f) + (gzip ? ".csv" : ".csv.gz")));
}

// Classes: skewed, every class used at least once (the first C nodes take one each, in a shuffled order).
inline std::vector<int32_t> drawClasses(const ProductsLikeOptions& o) {
  const int64_t n = o.nodes, C = o.classes;
  std::vector<int32_t> cls(static_cast<size_t>(n));
  SplitMix r = stream(o.seed, 1);
  std::vector<double> cdf(static_cast<size_t>(C));
  double s = 0;
  for (int64_t c = 0; c < C; ++c) cdf[c] = (s += std::pow(static_cast<double>(c + 1), -0.7));
  for (double& v : cdf) v /= s;
  for (int64_t v = 0; v < n; ++v) {
    const double u = r.uniform();
    cls[v] = static_cast<int32_t>(std::min<int64_t>(C - 1, std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin()));
  }
  for (int64_t c = 0; c < C; ++c) cls[r.below(static_cast<uint64_t>(n))] = static_cast<int32_t>(c);
  return cls;
}

// Each class's ring: its nodes in id order (class c's are ring[ringPtr[c] .. ringPtr[c + 1])); pos[v] is v's
// place on it.
struct ClassRings {
  std::vector<int64_t> ringPtr, ring, pos;

  ClassRings(const std::vector<int32_t>& cls, int64_t C) {
    const int64_t n = static_cast<int64_t>(cls.size());
    ringPtr.assign(static_cast<size_t>(C) + 1, 0);
    ring.resize(static_cast<size_t>(n));
    pos.resize(static_cast<size_t>(n));
    for (int64_t v = 0; v < n; ++v) ++ringPtr[cls[v] + 1];
    for (int64_t c = 0; c < C; ++c) ringPtr[c + 1] += ringPtr[c];
    std::vector<int64_t> fill(ringPtr.begin(), ringPtr.end() - 1);
    for (int64_t v = 0; v < n; ++v) {
      pos[v] = fill[cls[v]] - ringPtr[cls[v]];
      ring[fill[cls[v]]++] = v;
    }
  }
};

// Writes edge.csv; returns the graph's directed edges (its lines, or twice them with oneWay).
inline int64_t writeEdges(const std::string& path, const ProductsLikeOptions& o, const std::vector<int32_t>& cls,
                          const ClassRings& rings) {
  const int64_t n = o.nodes;
  const std::vector<int64_t>& ringPtr = rings.ringPtr;
  const std::vector<int64_t>& ring = rings.ring;
  const std::vector<int64_t>& pos = rings.pos;
  int64_t edges = 0;
  OutFile out(path, o.gzip);
  SplitMix r = stream(o.seed, 2);
  // Log-normal d_u with sigma 0.8: mean exp(mu + 0.32) = avgDegree / 2 (a heavy tail, as co-purchase degrees).
  const double mu = std::log(o.avgDegree / 2.0) - 0.32;
  for (int64_t u = 0; u < n; ++u) {
    const int64_t d = std::max<int64_t>(1, std::llround(std::exp(mu + 0.8 * r.normal())));
    const int64_t c = cls[u], lo = ringPtr[c], size = ringPtr[c + 1] - lo;
    for (int64_t k = 0; k < d; ++k) {
      int64_t v = u;
      for (int tries = 0; v == u && tries < 64; ++tries) {
        const double kind = r.uniform();
        if (kind < o.localFraction && size > 1) {
          const int64_t w = std::min<int64_t>(o.ringWindow, (size - 1) / 2 + 1);
          int64_t off = static_cast<int64_t>(r.below(static_cast<uint64_t>(2 * w))) - w;
          if (off >= 0) ++off;  // -w .. -1, 1 .. w
          v = ring[lo + ((pos[u] + off) % size + size) % size];
        } else if (kind < o.localFraction + o.classFraction && size > 1) {
          v = ring[lo + static_cast<int64_t>(r.below(static_cast<uint64_t>(size)))];
        } else {
          v = static_cast<int64_t>(r.below(static_cast<uint64_t>(n)));
        }
      }
      if (v == u) continue;
      out.putInt(u);
      out.put(',');
      out.putInt(v);
      out.endLine();
      if (!o.oneWay) {
        out.putInt(v);
        out.put(',');
        out.putInt(u);
        out.endLine();
      }
      edges += 2;
    }
  }
  out.close();
  return edges;
}

inline void writeFeatures(const std::string& path, const ProductsLikeOptions& o, const std::vector<int32_t>& cls) {
  const int64_t n = o.nodes, C = o.classes, F = o.features;
  SplitMix r = stream(o.seed, 3);
  std::vector<double> centroid(static_cast<size_t>(C * F)), scale(static_cast<size_t>(F)),
      offset(static_cast<size_t>(F));
  for (double& v : centroid) v = r.normal();
  for (int64_t j = 0; j < F; ++j) {
    scale[j] = 0.5 + 1.5 * r.uniform();
    offset[j] = -1.0 + 2.0 * r.uniform();
  }
  OutFile out(path, o.gzip);
  for (int64_t v = 0; v < n; ++v) {
    const double* m = centroid.data() + static_cast<int64_t>(cls[v]) * F;
    for (int64_t j = 0; j < F; ++j) {
      if (j) out.put(',');
      out.putFixed3(scale[j] * (m[j] + o.noise * r.normal()) + offset[j]);
    }
    out.endLine();
  }
  out.close();
}

// node-label.csv and num-node-list.csv.
inline void writeLabels(const std::string& dir, const std::string& ext, const ProductsLikeOptions& o,
                        const std::vector<int32_t>& cls) {
  namespace fs = std::filesystem;
  const int64_t n = o.nodes;
  OutFile labels((fs::path(dir) / ("raw/node-label" + ext)).string(), o.gzip);
  for (int64_t v = 0; v < n; ++v) {
    labels.putInt(cls[v]);
    labels.endLine();
  }
  labels.close();
  OutFile count((fs::path(dir) / ("raw/num-node-list" + ext)).string(), o.gzip);
  count.putInt(n);
  count.endLine();
  count.close();
}

inline void writeSplit(const std::string& dir, const std::string& ext, const ProductsLikeOptions& o) {
  namespace fs = std::filesystem;
  const int64_t n = o.nodes;
  SplitMix r = stream(o.seed, 4);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) perm[v] = v;
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[r.below(static_cast<uint64_t>(i + 1))]);
  const int64_t nTrain = std::max<int64_t>(1, std::llround(o.trainFraction * static_cast<double>(n)));
  const int64_t nValid = std::llround(o.validFraction * static_cast<double>(n));
  auto write = [&](const char* name, int64_t b, int64_t e) {
    std::sort(perm.begin() + b, perm.begin() + e);
    OutFile f((fs::path(dir) / "split" / "random" / (std::string(name) + ext)).string(), o.gzip);
    for (int64_t i = b; i < e; ++i) {
      f.putInt(perm[i]);
      f.endLine();
    }
    f.close();
  };
  write("train", 0, nTrain);
  write("valid", nTrain, std::min(n, nTrain + nValid));
  write("test", std::min(n, nTrain + nValid), n);
}

}  // namespace detail

/// Writes the dataset into dir (created; files replaced). Memory: O(nodes) (the class of every node and each
/// class's ring), never O(edges): edges and features are generated and written as they go.
inline ProductsLikeStats writeProductsLike(const std::string& dir, const ProductsLikeOptions& o) {
  namespace fs = std::filesystem;
  detail::checkOptions(o);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string ext = o.gzip ? ".csv.gz" : ".csv";
  detail::prepareFolders(dir, o.gzip);
  const std::vector<int32_t> cls = detail::drawClasses(o);
  const detail::ClassRings rings(cls, o.classes);
  ProductsLikeStats st;
  st.nodes = o.nodes;
  st.edges = detail::writeEdges((fs::path(dir) / ("raw/edge" + ext)).string(), o, cls, rings);
  detail::writeFeatures((fs::path(dir) / ("raw/node-feat" + ext)).string(), o, cls);
  detail::writeLabels(dir, ext, o, cls);
  detail::writeSplit(dir, ext, o);
  st.bytes = detail::bytesUnder(dir);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return st;
}

}  // namespace gnn::bench
