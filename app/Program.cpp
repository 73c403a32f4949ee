#include "app/Program.h"

#include "device/Plan.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <new>

#include "app/MemoryBounds.h"
#include "app/StopSignal.h"
#include "data/MoleculeDatasetBuilder.h"
#include "device/MpiReplicas.h"
#include "gnn/kernels/Gemm.h"
#include "gnn/system/ExecutionContext.h"
#include "gnn/system/Parallel.h"

#include <omp.h>
#include <thread>

namespace gnn::app {

std::string formatNumber(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

namespace {
std::string shown(double v) { return formatNumber(v); }

// kernels::warmUp on its own thread for the life of a program's body. Not under ThreadSanitizer, which cannot
// see the OpenMP runtime's synchronisation (the first kernel call then waits for the generation inside it).
class GemmWarmUp {
 public:
  GemmWarmUp() {
#if !defined(__SANITIZE_THREAD__)
    thread_ = std::thread([] {
      try {
        kernels::warmUp();
      } catch (...) {  // a failing kernel shows itself at the first real call, with its context
      }
    });
#endif
  }
  ~GemmWarmUp() {
    if (thread_.joinable()) thread_.join();
  }
  GemmWarmUp(const GemmWarmUp&) = delete;
  GemmWarmUp& operator=(const GemmWarmUp&) = delete;

 private:
  std::thread thread_;
};
}  // namespace

void requireAtLeast(const std::string& flag, double v, double min) {
  if (!(v >= min)) throw UsageError(flag + " " + shown(v) + ": must be at least " + shown(min));
}
void requireRange(const std::string& flag, double v, double min, double max) {
  if (!(v >= min && v <= max))
    throw UsageError(flag + " " + shown(v) + ": must be between " + shown(min) + " and " + shown(max));
}
void requirePositive(const std::string& flag, double v) {
  if (!(std::isfinite(v) && v > 0)) throw UsageError(flag + " " + shown(v) + ": must be a finite number > 0");
}
void requireOneOf(const std::string& flag, const std::string& v, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw UsageError(flag + " '" + v + "': must be one of " + list);
}
std::vector<std::string> splitCommaList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}
std::vector<std::string> requireListOf(const std::string& flag, const std::string& v,
                                       std::initializer_list<const char*> allowed) {
  std::vector<std::string> out = splitCommaList(v);
  for (const std::string& item : out) requireOneOf(flag, item, allowed);
  if (out.empty()) throw UsageError(flag + " '" + v + "': names no value");
  return out;
}

Program::Program(std::string name, std::string summary)
    : name_(std::move(name)), summary_(std::move(summary)), flags_("Options") {
  flags_.add_options()("help,h", "show this help and exit");
}

po::options_description& Program::group(const std::string& title) {
  for (auto& [t, g] : groups_)
    if (t == title) return g;
  groups_.emplace_back(title, po::options_description(title));
  return groups_.back().second;
}

bool Program::given(const std::string& flag) const {
  auto it = vm_.find(flag);
  return it != vm_.end() && !it->second.defaulted();
}

void Program::note(const std::string& text) const {
  if (primary()) std::cerr << name_ << ": " << text << "\n";
}

std::string Program::who() const {
  return isDistributed(processes_.get()) ? name_ + " (rank " + std::to_string(processes_->rank()) + ")" : name_;
}

int Program::run(int argc, char** argv, const std::function<int()>& body) {
  try {
    processes_ = MpiReplicas::launched(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << name_ << ": error: " << e.what() << "\n";
    return 1;
  }
  ProcessGroup* g = processes_.get();
  if (isDistributed(g)) {
    // Results on stdout come from rank 0 alone (mpirun merges every rank's stdout).
    if (g->rank() != 0 && !std::freopen("/dev/null", "w", stdout)) std::cerr << who() << ": cannot silence stdout\n";
    // The host's cores shared among its ranks: each rank's default threads and device workers are its share
    // (Open MPI binds 1-2 ranks to a core each by default; then the affinity mask already says so).
    const int host = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int share = std::max(1, std::min(machineCores(), host / std::max(1, g->localSize())));
    setDefaultThreads(share);
    setCoreSlots(share);
    omp_set_num_threads(share);
  }
  int code = runBody(argc, argv, body);
  if (isDistributed(g) && code != 0) {
    // Ranks that failed together (the same error everywhere: a non-finite loss met in the gradient exchange, a
    // bad flag) end together with their code; when the others are elsewhere (waiting in a collective for this
    // rank), nothing more will come from them: end the job.
    try {
      const std::vector<double> codes = g->gatherDoubles(code, "the exit codes");
      for (double c : codes)
        if (c != code) g->abort(code);
    } catch (const ProcessGroupError&) {
      g->abort(code);
    }
  }
  return code;
}

int Program::runBody(int argc, char** argv, const std::function<int()>& body) {
  po::options_description all;
  all.add(flags_);
  for (const auto& [title, g] : groups_) all.add(g);
  // --help is answered before notify(), which refuses a missing required flag: `bench_make_products_like --help`
  // used to say "the option '--out' is required but missing" instead of showing the help.
  try {
    po::store(po::parse_command_line(argc, argv, all), vm_);
  } catch (const po::error& e) {
    if (primary()) std::cerr << name_ << ": " << e.what() << " (see " << name_ << " --help)\n";
    return 2;
  }
  if (vm_.count("help")) {
    std::cout << name_ << ": " << summary_ << "\n\n" << all << "\n";
    if (!epilog_.empty()) std::cout << epilog_ << "\n";
    return 0;
  }
  try {
    po::notify(vm_);
  } catch (const po::error& e) {
    if (primary()) std::cerr << name_ << ": " << e.what() << " (see " << name_ << " --help)\n";
    return 2;
  }
  // oneDNN's one-time kernel generation on a spare thread, while the program reads its data.
  const GemmWarmUp warm;
  // The body runs under a context of its own: what it sets on it (the matmul precision of --precision) ends with
  // the program, so a program run in-process leaves its caller's context as it was.
  ExecutionContext context;
  ContextScope use(context);
  // Errors every rank meets alike are printed by rank 0 only; a rank's own failure names it.
  try {
    return body();
  } catch (const UsageError& e) {
    if (primary()) std::cerr << name_ << ": " << e.what() << " (see " << name_ << " --help)\n";
    return 2;
  } catch (const EarlyExit& e) {
    return e.code();
  } catch (const OutOfMemory& e) {
    if (primary()) std::cerr << name_ << ": " << e.what();
    return 3;
  } catch (const Interrupted& e) {
    if (primary()) std::cerr << name_ << ": " << e.what() << "\n";
    return 128 + e.signal();
  } catch (const BuildInterrupted& e) {
    std::cerr << who() << ": interrupted while building the dataset; nothing was left behind\n";
    return 128 + e.code();
  } catch (const ProcessGroupError& e) {
    std::cerr << who() << ": error: " << e.what() << "\n";
    if (processes_) processes_->abort(1);
    return 1;
  } catch (const std::bad_alloc&) {
    // An allocation the size checks before it (MemoryBounds.h) let through: said in the program's words.
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.0f", physicalMemoryBytes() / (1024.0 * 1024.0 * 1024.0));
    std::cerr << who() << ": error: out of memory: an allocation failed on this machine of " << gib
              << " GiB; lower the sizes that grow with the data or the model (--batch-size, --num-nodes, --hidden, "
                 "--layers, --chunk) or the threads running at once\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << who() << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gnn::app
