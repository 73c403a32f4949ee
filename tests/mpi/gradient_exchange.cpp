// The gradient exchange (device/GradientExchange.h) over real MPI ranks (mpirun -np 4): allToAll delivers what
// each rank addressed to each, the summed gradients are the same bits as one process summing every replica in
// order (replicas spread one per rank and unevenly, two pipeline stages, gradients missing on some replicas or
// all, messages large enough for MPI's rendezvous protocol), the bytes a rank receives stay within 1.1 x
// 2 (n - 1) / n x the gradient's bytes with one replica per rank, and a rank that stops answering is named.
// Exits 0 when every check holds; rank 0 prints one line per check.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "device/GradientExchange.h"
#include "device/GradientReduction.h"
#include "device/MpiReplicas.h"

namespace {

using gnn::DType;
using gnn::Shape;
using gnn::Tensor;
using Gradients = std::vector<std::vector<std::vector<Tensor>>>;  // [replica][stage][parameter]

const std::vector<Shape> kShapes = {{100003}, {7}, {31, 9}, {2}, {250001}, {0}};
const std::vector<DType> kTypes = {DType::F32, DType::F32, DType::F64, DType::F32, DType::F32, DType::F32};

// Parameter 3: no gradient anywhere; parameter 1: none on replica 0; with two stages, parameters 0-2 are stage
// 0's and 2-5 stage 1's.
bool touches(int64_t r, int64_t s, size_t i, int64_t stages) {
  if (i == 3 || (i == 1 && r == 0)) return false;
  return stages == 1 || (s == 0 ? i <= 2 : i >= 2);
}

// Large values of alternating sign with small ones between them: another order of the additions gives other bits.
double value(int64_t r, int64_t s, size_t i, int64_t j) {
  const double big = 1e7 * static_cast<double>(1 + (j + static_cast<int64_t>(i) + s) % 13);
  switch (r % 4) {
    case 0: return big;
    case 1: return 0.3 + static_cast<double>(j % 17) * 1e-3;
    case 2: return -big + static_cast<double>(r);
    default: return 0.7 - static_cast<double>(j % 11) * 1e-4;
  }
}

Gradients gradients(int64_t replicas, int64_t stages) {
  Gradients g(static_cast<size_t>(replicas), std::vector<std::vector<Tensor>>(static_cast<size_t>(stages)));
  for (int64_t r = 0; r < replicas; ++r)
    for (int64_t s = 0; s < stages; ++s)
      for (size_t i = 0; i < kShapes.size(); ++i) {
        Tensor t;
        if (touches(r, s, i, stages)) {
          t = Tensor::empty(kShapes[i], kTypes[i]);
          for (int64_t j = 0; j < t.numel(); ++j) {
            if (kTypes[i] == DType::F64) t.data<double>()[j] = value(r, s, i, j);
            else t.data<float>()[j] = static_cast<float>(value(r, s, i, j));
          }
        }
        g[static_cast<size_t>(r)][static_cast<size_t>(s)].push_back(t);
      }
  return g;
}

// One process running every replica: the device's own reduction (reduceGradients: replicas in order, each
// one's stages in order).
std::vector<Tensor> orderedSum(const Gradients& all) {
  return gnn::reduceGradients(static_cast<int64_t>(all.size()), static_cast<int64_t>(all.front().size()),
                              kShapes.size(), [&](int64_t r, int64_t s, size_t i) {
                                return all[static_cast<size_t>(r)][static_cast<size_t>(s)][i];
                              });
}

int failures = 0;
void check(bool ok, int rank, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL on rank %d: %s\n", rank, what.c_str());
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::shared_ptr<gnn::MpiReplicas> group = gnn::MpiReplicas::launched(&argc, &argv);
  if (!group || group->size() < 2) {
    std::fprintf(stderr, "run under mpirun with 2 or more ranks (mpirun -np 4 %s)\n", argv[0]);
    return 2;
  }
  const int n = group->size(), me = group->rank();
  auto say = [&](const std::string& line) {
    if (me == 0) std::printf("ok: %s\n", line.c_str());
  };
  try {
    // allToAll: rank k gets from rank p the bytes p addressed to k, of sizes that differ (none, and more than
    // one eager message).
    auto message = [&](int from, int to) {
      if ((from + to) % 3 == 0) return std::string();
      return std::string(static_cast<size_t>(70000 * to + from), static_cast<char>('a' + from * n + to));
    };
    std::vector<std::string> toEach;
    for (int k = 0; k < n; ++k) toEach.push_back(message(me, k));
    const std::vector<std::string> got = group->allToAll(toEach, "the allToAll check");
    for (int p = 0; p < n; ++p)
      check(got[static_cast<size_t>(p)] == message(p, me), me, "allToAll: the bytes from rank " + std::to_string(p));
    say("allToAll delivers what each rank addressed to each");

    // Replicas spread as RequestShard spreads them (lower ranks take the extra ones).
    gnn::GradientExchange exchange(*group);
    for (int64_t stages : {1, 2})
      for (int64_t replicas : {static_cast<int64_t>(n), static_cast<int64_t>(2 * n - 1)}) {
        const Gradients all = gradients(replicas, stages);
        const std::vector<Tensor> one = orderedSum(all);
        const int64_t per = replicas / n, extra = replicas % n;
        const int64_t first = me * per + std::min<int64_t>(me, extra), count = per + (me < extra ? 1 : 0);
        const Gradients mine(all.begin() + first, all.begin() + first + count);
        const std::vector<Tensor> sum = exchange.sum(mine, first, "the gradients of " + std::to_string(replicas) + " replicas");
        const std::string where = std::to_string(replicas) + " replicas, " + std::to_string(stages) + " stages";
        int64_t G = 0;
        for (size_t i = 0; i < one.size(); ++i) {
          check(sum[i].defined() == one[i].defined(), me, where + ": whether parameter " + std::to_string(i) + " has a gradient");
          if (!one[i].defined() || !sum[i].defined()) continue;
          check(sum[i].bitEqual(one[i]), me, where + ": the bits of parameter " + std::to_string(i));
          G += static_cast<int64_t>(one[i].nbytes());
        }
        if (replicas == n && stages == 1) {
          const double bound = 1.1 * 2.0 * (n - 1) / n * static_cast<double>(G);
          check(static_cast<double>(exchange.lastBytesReceived()) <= bound, me,
                where + ": received " + std::to_string(exchange.lastBytesReceived()) + " bytes, over " + std::to_string(bound));
          std::vector<double> received = group->gatherDoubles(static_cast<double>(exchange.lastBytesReceived()), "bytes");
          std::string line;
          for (double b : received) line += (line.empty() ? "" : ", ") + std::to_string(static_cast<int64_t>(b));
          say(where + ": the bits of one process; bytes received per rank " + line + " for a " + std::to_string(G) +
              "-byte gradient (bound " + std::to_string(static_cast<int64_t>(bound)) + ")");
        } else {
          say(where + ": the bits of one process");
        }
      }

    // The last rank stops answering before the slices: the others name it within their deadline.
    const Gradients all = gradients(n, 1);
    const Gradients mine(all.begin() + me, all.begin() + me + 1);
    group->setTimeoutSeconds(2);
    if (me == n - 1) {
      std::this_thread::sleep_for(std::chrono::seconds(3));
    } else {
      std::string error;
      try {
        exchange.sum(mine, me, "the gradients of update 9");
      } catch (const gnn::ProcessGroupError& e) {
        error = e.what();
      }
      check(error.find("no data from rank " + std::to_string(n - 1)) != std::string::npos, me,
            "a silent rank is not named: '" + error + "'");
      say("a rank that stops answering is named: " + error);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL on rank %d: %s\n", me, e.what());
    group->abort(1);
  }
  return failures == 0 ? 0 : 1;
}
