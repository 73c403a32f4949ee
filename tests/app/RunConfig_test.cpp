#include "app/RunConfig.h"

#include <gtest/gtest.h>

#include <vector>

namespace gnn::app {
namespace {

// Runs `body` as a program given `args` (its --hidden flag bound to `hidden`); returns the exit code.
int runWith(std::vector<std::string> args, int64_t& hidden, const std::function<void(const Program&)>& body) {
  Program prog("run_config_test", "a program with one flag");
  prog.flags().add_options()("hidden", value(&hidden, int64_t{300}), "width");
  std::vector<char*> argv;
  args.insert(args.begin(), "run_config_test");
  for (std::string& a : args) argv.push_back(a.data());
  return prog.run(static_cast<int>(argv.size()), argv.data(), [&] {
    body(prog);
    return 0;
  });
}

int derivedValue(RunConfig& config, int& calls) {
  auto derive = [&] {
    ++calls;
    return 42;
  };
  return config.deriveOnce(
      "width", derive, [](const nlohmann::json& j) { return j.get<int>(); }, [](int v) { return nlohmann::json(v); });
}

TEST(RunConfig, AFirstRunDerivesOnceAndStoresTheValue) {
  RunConfig config;
  int calls = 0;
  EXPECT_EQ(derivedValue(config, calls), 42);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(config.derived["width"], 42);
  EXPECT_EQ(config.toJson()["derived"]["width"], 42);
}

TEST(RunConfig, AContinuedRunRestoresTheValueAndNeverDerives) {
  int64_t hidden = 0;
  EXPECT_EQ(runWith({}, hidden,
                    [&](const Program& prog) {
                      RunConfig config;
                      config.bind("hidden", &hidden);
                      config.restore({{"hidden", 300}, {"derived", {{"width", 7}}}}, prog, "run.ckpt");
                      int calls = 0;
                      EXPECT_EQ(derivedValue(config, calls), 7);
                      EXPECT_EQ(calls, 0);
                      EXPECT_EQ(config.toJson()["derived"]["width"], 7);
                      // A value the checkpoint lacks (written before it was derived) is derived.
                      EXPECT_EQ(config.deriveOnce(
                                    "depth", [] { return 3; }, [](const nlohmann::json&) -> int {
                                      ADD_FAILURE() << "nothing to read";
                                      return 0;
                                    },
                                    [](int v) { return nlohmann::json(v); }),
                                3);
                    }),
            0);
}

TEST(RunConfig, AMalformedStoredValueIsNamedWithTheCheckpoint) {
  int64_t hidden = 0;
  runWith({}, hidden, [&](const Program& prog) {
    RunConfig config;
    config.restore({{"derived", {{"width", "wide"}}}}, prog, "run.ckpt");
    int calls = 0;
    try {
      derivedValue(config, calls);
      ADD_FAILURE() << "a string read as a width";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "run.ckpt: configuration 'derived.width' = \"wide\" is malformed; the checkpoint cannot "
                             "be used");
    }
    EXPECT_EQ(calls, 0);
    RunConfig notObject;
    try {
      notObject.restore({{"derived", 5}}, prog, "run.ckpt");
      ADD_FAILURE() << "derived 5 accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "run.ckpt: configuration 'derived' is not a JSON object; the checkpoint cannot be used");
    }
  });
}

TEST(RunConfig, AFlagTheUserGaveMustAgreeWithTheCheckpoint) {
  // Not given: the checkpoint's value is taken.
  int64_t hidden = 0;
  runWith({}, hidden, [&](const Program& prog) {
    RunConfig config;
    config.bind("hidden", &hidden);
    config.restore({{"hidden", 128}}, prog, "run.ckpt");
    EXPECT_EQ(hidden, 128);
  });
  // Given and equal: fine.
  runWith({"--hidden", "128"}, hidden, [&](const Program& prog) {
    RunConfig config;
    config.bind("hidden", &hidden);
    EXPECT_NO_THROW(config.restore({{"hidden", 128}}, prog, "run.ckpt"));
  });
  // Given and different: refused, both values named (exit 2, a usage error).
  testing::internal::CaptureStderr();
  const int code = runWith({"--hidden", "64"}, hidden, [&](const Program& prog) {
    RunConfig config;
    config.bind("hidden", &hidden);
    config.restore({{"hidden", 128}}, prog, "run.ckpt");
  });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--hidden 64 contradicts run.ckpt (hidden 128)"), std::string::npos) << err;
}

// A flag outside the model (batching, metrics) is restored like any other when the run continues training, and
// refused when it contradicts; an evaluation-only restore keeps the given value and names it. A model flag is
// refused either way.
TEST(RunConfig, AnEvaluationOnlyRestoreKeepsFlagsOutsideTheModel) {
  int64_t hidden = 0;
  std::string strategy = "plan";
  auto withStrategy = [&](std::vector<std::string> args, bool evaluationOnly) {
    Program prog("run_config_test", "two flags");
    prog.flags().add_options()("hidden", value(&hidden, int64_t{300}), "width")("strategy", value(&strategy, "plan"),
                                                                                 "batching");
    std::vector<char*> argv;
    args.insert(args.begin(), "run_config_test");
    for (std::string& a : args) argv.push_back(a.data());
    std::vector<std::string> changed;
    const int code = prog.run(static_cast<int>(argv.size()), argv.data(), [&] {
      RunConfig config;
      config.bind("hidden", &hidden);
      config.bindOutsideModel("strategy", &strategy);
      config.restore({{"hidden", 128}, {"strategy", "plan"}}, prog, "run.ckpt", evaluationOnly);
      changed = config.changedOutsideModel();
      return 0;
    });
    return std::make_pair(code, changed);
  };
  testing::internal::CaptureStderr();
  EXPECT_EQ(withStrategy({"--strategy", "stream"}, /*evaluationOnly=*/false).first, 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--strategy stream contradicts run.ckpt (strategy plan)"), std::string::npos) << err;
  EXPECT_NE(err.find("an evaluation-only run, --epochs 0, may change it"), std::string::npos) << err;

  const auto [code, changed] = withStrategy({"--strategy", "stream"}, /*evaluationOnly=*/true);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(strategy, "stream");
  EXPECT_EQ(hidden, 128);  // not given: the checkpoint's
  EXPECT_EQ(changed, std::vector<std::string>{"strategy"});
  EXPECT_TRUE(withStrategy({}, true).second.empty());
  EXPECT_EQ(strategy, "plan");  // not given: the checkpoint's, evaluation-only or not

  testing::internal::CaptureStderr();
  EXPECT_EQ(withStrategy({"--hidden", "64", "--strategy", "stream"}, true).first, 2);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--hidden 64 contradicts run.ckpt (hidden 128)"), std::string::npos) << err;
}

}  // namespace
}  // namespace gnn::app
