// Program: the command line of every gnn program: its flags (boost::program_options), `--help`, value checks
// in flag terms, and exit codes (0 success, 1 an error in the input or the run, 2 a bad command line, 3 the
// model does not fit on the simulated IPUs (the out-of-memory report), 130/143 interrupted by SIGINT/SIGTERM). Messages go to stderr as `<program>: ...`; results go to stdout.
//
//   int main(int argc, char** argv) {
//     app::Program prog("my_tool", "What my_tool does, in one line");
//     int64_t n = 10;
//     prog.flags().add_options()("count", app::value(&n, 10), "how many");
//     return prog.run(argc, argv, [&] {
//       app::requireAtLeast("--count", n, 1);
//       std::cout << n << "\n";
//       return 0;
//     });
//   }
#pragma once
#include <boost/program_options.hpp>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/ProcessGroup.h"

namespace gnn::app {

namespace po = boost::program_options;

/// A command-line value that is invalid in itself or with another flag: exit code 2, message in flag terms.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Ends the program early with `code` once its work is done (--plan-only): not an error.
class EarlyExit {
 public:
  explicit EarlyExit(int code) : code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// The shortest text that reads back as the same double (1e-3, 0.5, 300): help shows what a user would type.
std::string formatNumber(double v);

/// A flag value with its default shown as a user would write it (never `(=0.00050000000000000001)`).
template <class T>
po::typed_value<T>* value(T* target, const T& def) {
  if constexpr (std::is_floating_point_v<T>)
    return po::value(target)->default_value(def, formatNumber(def));
  else if constexpr (std::is_same_v<T, std::string>)
    return po::value(target)->default_value(def, def.empty() ? "\"\"" : def);
  else
    return po::value(target)->default_value(def);
}
/// Overload for string literals: app::value(&s, "mean").
inline po::typed_value<std::string>* value(std::string* target, const char* def) {
  return value(target, std::string(def));
}

/// Checks that throw UsageError naming the flag and the value given.
void requireAtLeast(const std::string& flag, double v, double min);
void requireRange(const std::string& flag, double v, double min, double max);
/// Finite and > 0 (learning rates, clip norms).
void requirePositive(const std::string& flag, double v);
void requireOneOf(const std::string& flag, const std::string& v, std::initializer_list<const char*> allowed);
/// The items of a comma-separated flag value ("a,b,,c" -> a, b, c: empty items are skipped).
std::vector<std::string> splitCommaList(const std::string& text);
/// Comma-separated values, each one of `allowed`; at least one.
std::vector<std::string> requireListOf(const std::string& flag, const std::string& v,
                                       std::initializer_list<const char*> allowed);

class Program {
 public:
  Program(std::string name, std::string summary);

  const std::string& name() const { return name_; }
  /// Add the program's own flags here before run().
  po::options_description& flags() { return flags_; }
  /// A group of flags shown under its own heading in --help (e.g. "Training"); the same title gives the same
  /// group.
  po::options_description& group(const std::string& title);
  /// Extra text printed after the flags in --help (formats, examples).
  void setEpilog(std::string text) { epilog_ = std::move(text); }

  /// True when the user gave `flag` (without the dashes) on the command line, not just its default.
  bool given(const std::string& flag) const;
  const po::variables_map& values() const { return vm_; }

  /// Parses the command line (a bad one: message + hint on stderr, exit 2), prints --help (exit 0), then runs
  /// `body`. UsageError → exit 2; EarlyExit → its code; gnn::OutOfMemory → the report on stderr, exit 3; any other
  /// exception → `<program>: error: <what>` and exit 1; SIGINT/SIGTERM
  /// seen by a StopSignal → 130/143. Returns the exit code for main to return. Under mpirun: every rank ends
  /// with the same code when they fail together (a non-finite loss, a bad flag); when a rank's error leaves the
  /// others waiting, or another rank stops answering (ProcessGroupError), the whole job is aborted (MPI_Abort).
  int run(int argc, char** argv, const std::function<int()>& body);

  /// Prints `<program>: <text>` on stderr (notes and warnings that are not progress); on rank 0 only.
  void note(const std::string& text) const;

  /// Under mpirun (device/MpiReplicas.h): the job's processes, set up by run() before the body; null in a plain
  /// process. The other ranks print nothing but errors (named with their rank) and write no files: checkpoints,
  /// logs, traces, predictions and results come from rank 0. Each rank's default thread count is its share of
  /// the host's cores.
  const std::shared_ptr<ProcessGroup>& processes() const { return processes_; }
  /// Rank 0 or a plain process: the one that prints results and writes files.
  bool primary() const { return isPrimary(processes_.get()); }
  /// `<program>` or `<program> (rank 1)`: how messages begin.
  std::string who() const;

 private:
  std::string name_, summary_, epilog_;
  po::options_description flags_;
  // A deque: references handed out by group() stay valid as groups are added.
  std::deque<std::pair<std::string, po::options_description>> groups_;
  po::variables_map vm_;
  std::shared_ptr<ProcessGroup> processes_;
  int runBody(int argc, char** argv, const std::function<int()>& body);
};

}  // namespace gnn::app
