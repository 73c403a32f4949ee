#include "models/GpsOptions.h"

#include <vector>

#include "gnn/system/Check.h"
#include "models/AtomEncoder.h"
#include "models/BondEncoder.h"
#include "models/SpatialEncoding.h"

namespace gnn {

namespace {
int64_t vocabulary(const std::vector<int64_t>& dims) {
  int64_t v = 0;
  for (int64_t d : dims) v += d;
  return v;
}
// Weights of NormMlp(in, hidden, out): two linears with biases and the LayerNorm's gamma and beta.
int64_t normMlpWeights(int64_t in, int64_t hidden, int64_t out) { return in * hidden + hidden + 2 * hidden + hidden * out + out; }
}  // namespace

void GpsOptions::validate() const {
  GNN_CHECK_ARG(layers >= 1 && nodeDim >= 1 && edgeDim >= 1 && globalDim >= 1 && expansion >= 1 && ffn >= 1 &&
                    heads >= 1 && tasks >= 1,
                "GPS++: layers, widths, expansion, heads and tasks must be >= 1");
  GNN_CHECK_ARG(nodeDim % heads == 0, "GPS++: the node width (", nodeDim, ") must be a multiple of heads (", heads,
                ")");
  for (double p : {nodeDropout, edgeDropout, globalDropout, attentionDropout, graphDropout})
    GNN_CHECK_ARG(p >= 0 && p < 1, "GPS++: dropouts must be in [0, 1), got ", p);
}

int64_t GpsOptions::parameterCount() const {
  const int64_t n = nodeDim, e = edgeDim, g = globalDim, x = expansion;
  int64_t w = vocabulary(AtomEncoder::featureDims()) * n + vocabulary(BondEncoder::featureDims()) * e +
              SpatialEncoding::kDistances * heads + g;
  for (int64_t l = 0; l < layers; ++l) {
    w += normMlpWeights(2 * n + e + g, x * e, e) + normMlpWeights(2 * (e + n) + n + g, x * n, n);
    if (l + 1 < layers) w += normMlpWeights(g + n + e, x * g, g);
    w += (n * 3 * n + 3 * n) + (n * n + n) + (n * ffn + ffn) + (ffn * n + n) + 3 * 2 * n;  // attention, FFN, 3 norms
  }
  return w + normMlpWeights(n, x * g, tasks);  // the decoder: GPS++'s decoder_hidden = global_latent x ratio
}

}  // namespace gnn
