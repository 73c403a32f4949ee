// A program's body runs under a context of its own: --precision bf16 holds inside the program, on the thread that
// evaluates, and ends with it (no process-wide precision), so a program run in-process leaves its caller alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/DeviceFlags.h"
#include "app/Program.h"
#include "gnn/system/ExecutionContext.h"

namespace gnn::app {
namespace {

// Runs a program with the device flags given `args`; returns the matmul precision its body ran under.
MatmulPrecision precisionInside(std::vector<std::string> args) {
  Program prog("program_context_test", "a program with the device flags");
  DeviceFlags df;
  df.addTo(prog);
  std::vector<char*> argv;
  args.insert(args.begin(), "program_context_test");
  for (std::string& a : args) argv.push_back(a.data());
  MatmulPrecision inside = MatmulPrecision::Float32;
  const int code = prog.run(static_cast<int>(argv.size()), argv.data(), [&] {
    df.apply(prog);
    inside = ExecutionContext::current().matmulPrecision();
    EXPECT_EQ(df.options.precision, parsePrecision(df.precision));
    return 0;
  });
  EXPECT_EQ(code, 0);
  return inside;
}

TEST(ProgramContext, Bf16HoldsInsideTheProgramAndEndsWithIt) {
  ASSERT_EQ(ExecutionContext::current().matmulPrecision(), MatmulPrecision::Float32);
  EXPECT_EQ(precisionInside({"--precision", "bf16"}), MatmulPrecision::BFloat16);
  EXPECT_EQ(ExecutionContext::current().matmulPrecision(), MatmulPrecision::Float32);
  EXPECT_EQ(precisionInside({}), MatmulPrecision::Float32);
  EXPECT_EQ(precisionInside({"--precision", "fp16", "--device", "ipu"}), MatmulPrecision::Float32);
}

}  // namespace
}  // namespace gnn::app
