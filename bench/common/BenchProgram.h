// BenchProgram: the command line of the bench_* programs: their flags (boost::program_options), a `--help`
// that says what the program measures and what its ratios are formed from, value checks in flag terms, and
// exit codes: 0 success, 1 an error in the input or the run (`<program>: error: <what>`), 2 a bad command
// line
// (`<program>: <what> (see <program> --help)`). The JSON result goes to stdout, messages to stderr. These are
// the conventions of the examples, so a script treats every gnn program alike.
//
//   int main(int argc, char** argv) {
//     bench::BenchProgram prog("bench_x", "one line", "Measures: ...\nCompared with: ...\nRatio: ...");
//     int64_t rounds = 4;
//     prog.flags().add_options()("rounds", bench::value(&rounds, int64_t{4}), "timed rounds");
//     return prog.run(argc, argv, [&] {
//       bench::requireAtLeast("--rounds", rounds, 1);
//       ...
//       return 0;
//     });
//   }
#pragma once
#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace gnn::bench {

namespace po = boost::program_options;

/// A command-line value that is invalid in itself or with another flag: exit code 2, message in flag terms.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The shortest text that reads back as the same double (1e-3, 0.5, 300): help shows what a user would type.
std::string formatNumber(double v);

/// A flag value whose default is shown as a user would write it: never `(=0.00050000000000000001)`, and
/// `true`/`false` rather than `1`/`0`.
template <class T>
po::typed_value<T>* value(T* target, const T& def) {
  if constexpr (std::is_same_v<T, bool>)
    return po::value(target)->default_value(def, def ? "true" : "false");
  else if constexpr (std::is_floating_point_v<T>)
    return po::value(target)->default_value(def, formatNumber(def));
  else
    return po::value(target)->default_value(def);
}
/// A flag value whose default is shown as `label` (a path relative to the source tree, "all cores", ...).
template <class T>
po::typed_value<T>* value(T* target, const T& def, const std::string& label) {
  return po::value(target)->default_value(def, label);
}

/// Checks that throw UsageError naming the flag and the value given.
void requireAtLeast(const std::string& flag, int64_t v, int64_t min);
void requireRange(const std::string& flag, int64_t v, int64_t min, int64_t max);
void requireOneOf(const std::string& flag, const std::string& v, std::initializer_list<const char*> allowed);
/// Comma-separated values, each one of `allowed`; at least one. Returns them in the order given.
std::vector<std::string> requireListOf(const std::string& flag, const std::string& v,
                                       std::initializer_list<const char*> allowed);
/// A thread count: 0 (all cores) up to the cores this process may run on. More threads than cores would
/// measure the scheduler, not the program.
void requireThreads(const std::string& flag, int64_t v);

/// An input file or folder that must exist; otherwise a runtime error (exit 1) naming the flag and the path,
/// before any reader guesses at a format from a name that is not there.
void requireInput(const std::string& flag, const std::string& path);

/// The cores this process may run on (its CPU affinity mask, as gnn's thread budget counts them).
int machineCores();

/// `examples/data/<name>` as a user would type it from the source root: the default shown in --help.
std::string shippedDataLabel(const std::string& name);
/// The shipped data set or file `name` under examples/data: from the working directory (`examples/data/...`,
/// `../examples/data/...`), else the source tree this program was built from. Returns the label when none
/// exists, so the error that follows names the path a user would expect.
std::string shippedData(const std::string& name);

class BenchProgram {
 public:
  /// `about`: a few lines on what the program measures (quantity, unit), what it is compared with, and how
  /// each ratio is formed; printed by --help above the flags.
  BenchProgram(std::string name, std::string summary, std::string about);

  const std::string& name() const { return name_; }
  /// Add the program's own flags here before run().
  po::options_description& flags() { return flags_; }

  /// Parses the command line (a bad one: message + hint on stderr, exit 2), prints --help (exit 0), then runs
  /// `body`. UsageError: exit 2; any other exception: `<program>: error: <what>`, exit 1. Returns the exit
  /// code for main to return.
  int run(int argc, char** argv, const std::function<int()>& body);

  /// Prints `<program>: note: <text>` on stderr.
  void note(const std::string& text) const;

  /// The --help text (without the flags) and the usage hint that follows a command-line error.
  std::string helpHeader() const;
  std::string usageHint() const;

 private:
  std::string name_, summary_, about_;
  po::options_description flags_;
  po::variables_map vm_;
};

}  // namespace gnn::bench
