// The stage tasks of one update as a unit (device/StageTaskRunner.h), without a device program around them: a
// model cut into two stages on two runtimes gives the loss and the parameter gradients of the whole model run in
// one piece, bit for bit, on one worker or two; a task is ready only once its inputs are there; every task and
// every crossing of a stage boundary is reported on its replica's stage's track.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "SmallMolecules.h"
#include "device/ExecutionProgramParts.h"
#include "device/StageTaskRunner.h"
#include "device/TaskScheduler.h"
#include "gnn/ops/Ops.h"

namespace gnn {
namespace {

Batch batchOf(size_t first, size_t count) { return test::smallBatch(first, count); }
std::unique_ptr<BlockModel> gin() { return test::smallGin(); }

LossFn l1() { return test::maskedL1(); }

// The model whole on one context: its loss and its parameters' gradients.
std::pair<double, std::vector<Tensor>> wholeModel(BlockModel& model, const Batch& b) {
  ExecutionContext ctx;
  GradientSink sink;
  ctx.setGradientSink(&sink);
  ContextScope use(ctx);
  const Variable out = model.runBlocks(BlockState(), b, 0, static_cast<size_t>(model.numBlocks())).get("out");
  Variable loss = l1().loss(out, b);
  loss.backward(Tensor::full(loss.shape(), 1.0, loss.dtype()));
  return {loss.value().item(), sink.grads(model.parameters())};
}

// One update of one micro-batch through the runner: the model cut before its block `split`, each stage on its own
// runtime, `workers` threads.
struct Staged {
  double loss = 0;
  std::vector<Tensor> grads;
  std::vector<TaskRecord> trace;
  StageTimes times;
};

Staged staged(BlockModel& model, const Batch& b, int64_t workers) {
  const std::vector<std::string> names = model.blockNames();
  const StageBlocks blocks = stageRanges(names, {names[2]});
  const IpuLayout layout{2, 0, 1, true};
  std::vector<std::unique_ptr<IpuRuntime>> ipus;
  for (int s = 0; s < 2; ++s) {
    ipus.push_back(std::make_unique<IpuRuntime>());
    ipus.back()->ctx.setGradientSink(&ipus.back()->sink);
  }
  const std::vector<BlockModel*> models{&model};
  const LossFn loss = l1();
  const StageTaskProgram program{layout, blocks, loss, ipus, models, true, false, true};
  std::vector<std::vector<MicroBatchRun>> mbs(1);
  MicroBatchRun m;
  m.batch = b;
  m.weight = 1;
  mbs[0].push_back(std::move(m));
  const UpdateTasks update{mbs, 0, 0, 0, 1, 1.0, 1.0, false};
  Staged out;
  out.times = StageTimes(2);
  CompileRecord record;
  std::mutex mu;
  StageTaskReports reports{record, out.times,
                           [&](const TaskRecord& t) {
                             std::lock_guard<std::mutex> lock(mu);
                             out.trace.push_back(t);
                           },
                           [] { return 0.0; }};
  StageTaskRunner tasks(program, update, reports, 1);
  const PipelineSchedule schedule = PipelineSchedule::training(2, 1, ExecutionStrategy::Pipelined);
  const std::exception_ptr error = runLanes(
      lanesOf(schedule, 0, 1), workers, [&](int64_t r, const ScheduledTask& t) { return tasks.ready(r, t); },
      [&](int64_t r, const ScheduledTask& t) { tasks.run(r, t); });
  if (error) std::rethrow_exception(error);
  out.loss = mbs[0][0].loss;
  for (const Variable& p : model.parameters()) {
    const Tensor g0 = ipus[0]->sink.grad(p), g1 = ipus[1]->sink.grad(p);
    EXPECT_FALSE(g0.defined() && g1.defined()) << "a parameter's gradient on both stages";
    out.grads.push_back(g0.defined() ? g0 : g1);
  }
  return out;
}

TEST(StageTaskRunner, TwoStagesGiveTheWholeModelsLossAndGradients) {
  auto model = gin();
  const Batch b = batchOf(0, 4);
  const auto [loss, grads] = wholeModel(*model, b);
  for (int64_t workers : {1, 2}) {
    SCOPED_TRACE("workers " + std::to_string(workers));
    const Staged s = staged(*model, b, workers);
    EXPECT_EQ(s.loss, loss);
    ASSERT_EQ(s.grads.size(), grads.size());
    int64_t compared = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
      ASSERT_EQ(s.grads[i].defined(), grads[i].defined()) << "parameter " << i;
      if (!grads[i].defined()) continue;
      EXPECT_TRUE(s.grads[i].bitEqual(grads[i])) << "parameter " << i;
      ++compared;
    }
    EXPECT_GT(compared, 4);
  }
}

TEST(StageTaskRunner, ReportsEveryTaskAndBoundaryCrossingOnItsStagesTrack) {
  auto model = gin();
  const Staged s = staged(*model, batchOf(4, 3), 2);
  std::map<std::pair<int, int64_t>, int> seen;  // (kind, track) -> count
  for (const TaskRecord& t : s.trace) {
    EXPECT_EQ(t.replica, 0);
    EXPECT_EQ(t.ipu, t.stage) << "a task off its stage's track";
    ++seen[{static_cast<int>(t.kind), t.ipu}];
  }
  const std::map<std::pair<int, int64_t>, int> want{
      {{static_cast<int>(TaskKind::Forward), 0}, 1},  {{static_cast<int>(TaskKind::Forward), 1}, 1},
      {{static_cast<int>(TaskKind::Backward), 0}, 1}, {{static_cast<int>(TaskKind::Backward), 1}, 1},
      // Activations into stage 1 (on its track), their gradients back into stage 0 (on stage 0's).
      {{static_cast<int>(TaskKind::Copy), 1}, 1},     {{static_cast<int>(TaskKind::Copy), 0}, 1}};
  EXPECT_EQ(seen, want);
}

TEST(StageTaskRunner, ATaskIsReadyOnlyOnceItsInputsArrived) {
  auto model = gin();
  const std::vector<std::string> names = model->blockNames();
  const StageBlocks blocks = stageRanges(names, {names[2]});
  const IpuLayout layout{2, 0, 1, true};
  std::vector<std::unique_ptr<IpuRuntime>> ipus;
  for (int s = 0; s < 2; ++s) ipus.push_back(std::make_unique<IpuRuntime>());
  const std::vector<BlockModel*> models{model.get()};
  const LossFn loss = l1();
  std::vector<std::vector<MicroBatchRun>> mbs(1);
  mbs[0].emplace_back().batch = batchOf(0, 2);
  mbs[0][0].weight = 1;
  const UpdateTasks update{mbs, 0, 0, 0, 1, 1.0, 1.0, false};
  CompileRecord record;
  StageTimes times(2);
  StageTaskReports reports{record, times, [](const TaskRecord&) {}, [] { return 0.0; }};
  StageTaskRunner tasks(StageTaskProgram{layout, blocks, loss, ipus, models, true, false, true}, update, reports, 1);
  const ScheduledTask f0{TaskKind::Forward, 0, 0}, f1{TaskKind::Forward, 1, 0};
  const ScheduledTask b0{TaskKind::Backward, 0, 0}, b1{TaskKind::Backward, 1, 0};
  EXPECT_TRUE(tasks.ready(0, f0));
  EXPECT_FALSE(tasks.ready(0, f1)) << "stage 1 before stage 0's activations";
  EXPECT_FALSE(tasks.ready(0, b0)) << "stage 0's backward before stage 1's gradients";
  tasks.run(0, f0);
  EXPECT_TRUE(tasks.ready(0, f1));
  tasks.run(0, f1);
  EXPECT_TRUE(tasks.ready(0, b1));
  EXPECT_FALSE(tasks.ready(0, b0));
  tasks.run(0, b1);
  EXPECT_TRUE(tasks.ready(0, b0));
  tasks.run(0, b0);
}

}  // namespace
}  // namespace gnn
