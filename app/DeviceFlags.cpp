#include "app/DeviceFlags.h"

#include "device/Plan.h"
#include "device/PlanScaling.h"
#include "gnn/system/ExecutionContext.h"
#include "loaders/FixedSizeDataLoader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace gnn::app {

void DeviceFlags::addTo(Program& prog) {
  prog.group("Device (the simulated IPU's execution model; names as in PopTorch)").add_options()(
      "device", value(&device, "cpu"),
      "cpu (the model whole, on this machine's cores) | ipu (simulated IPUs: replicas, pipeline stages, "
      "gradient accumulation, device iterations, all on CPU threads with exact numerics)")(
      "replicas", value(&replicas, int64_t{1}), "data-parallel replicas (PopTorch's replicationFactor; --device ipu)")(
      "grad-accum", value(&gradAccum, int64_t{1}),
      "micro-batches per weight update (gradientAccumulation); one update = --batch-size x --replicas x this")(
      "device-iterations", value(&deviceIterations, int64_t{1}), "weight updates per host request (deviceIterations)")(
      "output-mode", value(&outputMode, "default"),
      "which micro-batches' outputs a host request returns: all | sum | final | every:N (default: final in "
      "training); the programs log every update's loss whatever the mode")(
      "pipeline-splits", value(&pipelineSplits, ""),
      "block names that start a new pipeline stage, comma-separated in model order (e.g. layers/1,layers/3); "
      "each stage of each replica is one simulated IPU. auto: the fewest stages that fit in memory, balanced by "
      "the cost model; auto:N: N balanced stages")(
      "execution", value(&execution, "pipelined"),
      "pipelined (every stage at once, micro-batches in flight) | sharded (one stage at a time) | phased (one "
      "stage's weights resident at a time, loaded from streaming memory; every micro-batch through it first)")(
      "precision", value(&precision, "fp32"),
      "fp32 | bf16 (CPU: matrix products on bfloat16 inputs with fp32 accumulation, as torch.autocast's bf16; "
      "weights, optimizer state and every other op in fp32) | fp16 (simulated IPU: IEEE half weights, activations "
      "and gradients; fp32 master weights, optimizer state and accumulation; overflow saturates)")(
      "loss-scaling", value(&lossScaling, "auto"),
      "fp16 only: none | static:S | dynamic[:S] (skip the update on overflow and halve the scale, double it "
      "after 1000 clean updates); auto = dynamic from 65536 with fp16")(
      "stochastic-rounding", po::bool_switch(&stochasticRounding),
      "fp16: round to half stochastically (seeded by the run's seed, the step and the micro-batch)")(
      "offload-optimizer", po::bool_switch(&offloadOptimizer),
      "keep the optimizer state (and fp16's fp32 master weights) in streaming memory, streamed in for the update")(
      "recompute", po::bool_switch(&recompute),
      "keep only each block's input for the backward (a recomputation checkpoint at every block boundary) and "
      "recompute the blocks there, one at a time from the last; the same bits as without. Default: on when "
      "training is pipelined over more than one stage, off otherwise, as in PopTorch (its "
      "popart_compiler/source/Compiler.cpp sets autoRecomputation to Pipeline when pipelining over more than one "
      "IPU)")(
      "no-recompute", po::bool_switch(&noRecompute),
      "stash every activation instead, also when pipelined (PopTorch: autoRecomputation NoRecompute)")(
      "replicated-tensor-sharding", po::bool_switch(&rts),
      "shard the optimizer state over the replicas: each updates its shard, then the shards are all-gathered")(
      "eight-bit-io", po::bool_switch(&eightBitIo),
      "send integer features over the host link as uint8 (widened on the device; values above 255 are an error)")(
      "ipu", value(&ipuSpec, "mk2"),
      "hardware the memory and cost models describe: mk2 (GC200, 1.33 GHz) | bow (1.85 GHz)")(
      "tile-memory", value(&tileMemory, int64_t{0}),
      "bytes of memory per tile to plan for instead of the --ipu's 638,976 (a smaller part, or a model's "
      "out-of-memory report on a small graph); 0: the --ipu's")(
      "available-memory-proportion", value(&availableMemoryProportion, 0.6),
      "share of each tile's memory that matmul temporaries may use, in (0, 1] (PopTorch's "
      "availableMemoryProportion)")(
      "plan-only", po::bool_switch(&planOnly),
      "compile, print the memory and cost report and exit: 0 when the plan fits, 3 with the out-of-memory "
      "report when it does not; with --json the report is one JSON object on stdout (as --report writes it)")(
      "plan-inference", po::bool_switch(&planInference),
      "as --plan-only, for the inference program instead (forward only, no optimizer state: PopTorch's "
      "inferenceModel); its pipeline depth is --device-iterations, and --grad-accum must be 1")(
      "plan-scaling", po::bool_switch(&planScaling),
      "as --plan-only (or --plan-inference), and the plan again at 1, 2, 4, ..., 64 replicas: IPUs, hosts, each "
      "part of the step (compute, exchange, all-reduce over IPU-Links and between PODs, host I/O, host "
      "preparation) and samples/s, with --json as the report's 'scaling'")(
      "host-cores", value(&hostCores, gnn::hostCores()),
      "planning: cores per host preparing micro-batches (an assumption; default: this machine's); the plan "
      "commands time the loader on one core and scale by this")(
      "host-prep-ms", value(&hostPrepMs, 0.0),
      "planning: ms one core takes to prepare a micro-batch (collation, packing, host-side encodings), e.g. "
      "measured on the target host; 0: timed on this machine's loader by the plan commands")(
      "ipus-per-host", value(&ipusPerHost, int64_t{4}),
      "planning: IPUs per host in the --plan-scaling table (4: an IPU-M2000 or Bow-2000); the hosts' cores "
      "prepare the micro-batches")(
      "ipus-per-pod", value(&ipusPerPod, int64_t{64}),
      "planning: IPUs joined by IPU-Links (64: an IPU-POD64's torus); replicas beyond them reach the others over "
      "GW-Links (2 x 100 Gb/s per IPU-Machine), in GCL's three-phase all-reduce")(
      "synthetic-data", po::bool_switch(&syntheticData),
      "planning: the device makes its own inputs, as PopTorch's enableSyntheticData and Graphcore's device-bound "
      "benchmarks: no host transfers and no host preparation in the plan (each host request still costs its call)")(
      "report", po::value(&report)->value_name("FILE.json"), "write the memory and cost report as JSON")(
      "auto-round-num-ipus", po::bool_switch(&autoRound),
      "round replicas x stages up to a power of two, as real IPU systems require")(
      "loader-mode", value(&loaderMode, "sync"),
      "planning: how the host feeds the IPUs, as PopTorch's DataLoader mode: sync (its default, DataLoaderMode.Sync: "
      "each host request prepared between calls, so the step is the device's plus the preparation) | async "
      "(AsynchronousDataAccessor or DataLoaderMode.Async: prepared while the IPUs run; min(device, host))")(
      "merge-all-reduce", po::bool_switch(&mergeAllReduce),
      "planning: one all-reduce of every stage's gradients per update (PopART's replicatedCollectivesSettings."
      "mergeAllReduceCollectives); default, as PopART's: one all-reduce per weight tensor, each paying the ring's "
      "latency")(
      "partial-request", value(&partialRequest, "pad"),
      "the epoch's last host request when it has too few micro-batches for a weight update: pad (with weight-0 "
      "micro-batches) | drop (counted in the report)")(
      "trace", po::value(&trace)->value_name("FILE.json"),
      "write the execution trace of the first --trace-requests host requests (Chrome trace-event JSON: open it in "
      "https://ui.perfetto.dev or chrome://tracing)")(
      "trace-svg", po::value(&traceSvg)->value_name("FILE.svg"),
      "draw the last traced host request's schedule as an SVG timeline (open it in a browser)")(
      "trace-requests", value(&traceRequests, int64_t{2}), "host requests recorded for --trace");
  prog.group("Processes (mpirun: the replicas spread over MPI ranks)").add_options()(
      "mpi-timeout", value(&mpiTimeout, 30.0),
      "seconds a rank waits for the others at a gradient exchange before it names the ranks that did not answer "
      "and ends the job (a rank that died or hangs)")(
      "hosts", value(&hosts, int64_t{1}),
      "planning: hosts the replicas are spread over (the all-reduce crosses the network between them; "
      "--plan-only reports its share)")(
      "network-gbps", value(&networkGbps, 100.0),
      "planning: bandwidth of the network between hosts (--hosts: replicas over MPI), Gbit/s per host "
      "(default 100 Gb/s Ethernet, an assumption; an IPU-M2000's gateway has 2 x 100 GbE)")(
      "network-latency-us", value(&networkLatencyUs, 10.0), "planning: latency of one message between hosts, us");
}

namespace {
// --pipeline-splits: block names "layers/4,layers/8", or auto (the fewest stages that fit) / auto:N (N stages).
void setPipelineSplits(const std::string& flag, IpuOptions& o) {
  o.pipelineSplits.clear();
  if (flag != "auto" && flag.rfind("auto:", 0) != 0) {
    o.pipelineSplits = splitCommaList(flag);
    return;
  }
  o.autoPipelineSplits = true;
  if (flag.size() <= 5) return;
  const std::string n = flag.substr(5);
  char* end = nullptr;
  const long long v = std::strtoll(n.c_str(), &end, 10);
  if (n.empty() || *end != '\0' || v < 1 || v > 64)
    throw UsageError("--pipeline-splits auto:N needs a number of stages N in 1..64, got '" + n + "'");
  o.autoStages = v;
}
}  // namespace

void DeviceFlags::apply(const Program& prog) {
  requireOneOf("--device", device, {"cpu", "ipu"});
  requireAtLeast("--replicas", static_cast<double>(replicas), 1);
  requireAtLeast("--grad-accum", static_cast<double>(gradAccum), 1);
  requireAtLeast("--device-iterations", static_cast<double>(deviceIterations), 1);
  requireAtLeast("--trace-requests", static_cast<double>(traceRequests), 1);
  requireOneOf("--execution", execution, {"pipelined", "sharded", "phased"});
  requireOneOf("--precision", precision, {"fp32", "bf16", "fp16"});
  requireOneOf("--ipu", ipuSpec, {"mk2", "bow"});
  if (!(availableMemoryProportion > 0 && availableMemoryProportion <= 1))
    throw UsageError("--available-memory-proportion must be in (0, 1], got " + std::to_string(availableMemoryProportion));
  if (!report.empty()) checkWritable("--report", report);
  requireOneOf("--partial-request", partialRequest, {"pad", "drop"});
  requireOneOf("--loader-mode", loaderMode, {"sync", "async"});
  if (!trace.empty()) checkWritable("--trace", trace);
  if (!traceSvg.empty()) checkWritable("--trace-svg", traceSvg);
  options = IpuOptions{};
  options.replicationFactor = replicas;
  options.gradientAccumulation = gradAccum;
  options.deviceIterations = deviceIterations;
  try {
    options.outputMode = parseOutputMode(outputMode, &options.outputPeriod);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--output-mode: ") + e.what());
  }
  options.executionStrategy = parseExecutionStrategy(execution);
  options.partialRequest = parsePartialRequest(partialRequest);
  options.asyncLoading = loaderMode == "async";
  options.mergeAllReduce = mergeAllReduce;
  options.autoRoundNumIpus = autoRound;
  setPipelineSplits(pipelineSplits, options);
  options.precision = parsePrecision(precision);
  if (options.precision == Precision::BF16 && device != "cpu")
    throw UsageError("--precision bf16 is the CPU's bfloat16 matrix products; the simulated IPU computes in fp32 or "
                     "fp16 (--precision fp16)");
  // The device program runs its stages under it (IpuOptions::precision); this thread's context, the program's
  // (Program::run), evaluates under it.
  ExecutionContext::current().setMatmulPrecision(matmulPrecisionOf(options.precision));
  try {
    if (lossScaling != "auto") options.lossScaling = LossScaling::parse(lossScaling);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--loss-scaling: ") + e.what());
  }
  if (options.precision != Precision::FP16 && options.lossScaling.mode != LossScaling::Mode::None)
    throw UsageError("--loss-scaling " + lossScaling + " needs --precision fp16");
  if (options.precision != Precision::FP16 && stochasticRounding)
    throw UsageError("--stochastic-rounding needs --precision fp16");
  options.stochasticRounding = stochasticRounding;
  options.offloadOptimizer = offloadOptimizer;
  if (recompute && noRecompute) throw UsageError("--recompute and --no-recompute contradict each other: give one");
  options.recompute = recompute;
  options.recomputeWhenPipelined = !noRecompute;
  options.replicatedTensorSharding = rts;
  options.eightBitIo = eightBitIo;
  options.ipuSpec = ipuSpec;
  options.availableMemoryProportion = availableMemoryProportion;
  requireAtLeast("--tile-memory", static_cast<double>(tileMemory), 0);
  options.bytesPerTile = tileMemory;
  if (device == "cpu") {
    if (replicas != 1) throw UsageError("--replicas " + std::to_string(replicas) + " needs --device ipu");
    if (!options.pipelineSplits.empty() || options.autoPipelineSplits)
      throw UsageError("--pipeline-splits needs --device ipu");
    for (const auto& [on, flag] : std::vector<std::pair<bool, std::string>>{
             {options.precision == Precision::FP16, "--precision fp16"},
             {offloadOptimizer, "--offload-optimizer"},
             {recompute, "--recompute"},
             {noRecompute, "--no-recompute"},
             {rts, "--replicated-tensor-sharding"},
             {eightBitIo, "--eight-bit-io"},
             {tileMemory > 0, "--tile-memory"},
             {mergeAllReduce, "--merge-all-reduce"},
             {syntheticData, "--synthetic-data"},
             {loaderMode != "sync", "--loader-mode " + loaderMode},
             {execution != "pipelined", "--execution " + execution},
             {planOnly, "--plan-only"},
             {planInference, "--plan-inference"},
             {planScaling, "--plan-scaling"},
             {!report.empty(), "--report"}})
      if (on) throw UsageError(flag + " is an option of the simulated IPU: add --device ipu");
  }
  if (rts && replicas < 2) throw UsageError("--replicated-tensor-sharding needs --replicas 2 or more");
  if (!(mpiTimeout > 0 && std::isfinite(mpiTimeout))) throw UsageError("--mpi-timeout must be a number of seconds > 0");
  requireAtLeast("--hosts", static_cast<double>(hosts), 1);
  requirePositive("--network-gbps", networkGbps);
  if (!(networkLatencyUs >= 0 && std::isfinite(networkLatencyUs))) throw UsageError("--network-latency-us must be >= 0");
  requireAtLeast("--host-cores", static_cast<double>(hostCores), 1);
  requireAtLeast("--ipus-per-host", static_cast<double>(ipusPerHost), 1);
  requireAtLeast("--ipus-per-pod", static_cast<double>(ipusPerPod), 1);
  if (syntheticData && !(planOnly || planInference || planScaling))
    throw UsageError("--synthetic-data plans what PopTorch's enableSyntheticData runs (inputs made on the device, "
                     "no host I/O); it computes nothing here: add --plan-only, --plan-inference or --plan-scaling");
  if (syntheticData && hostPrepMs > 0)
    throw UsageError("--synthetic-data leaves the host nothing to prepare: drop --host-prep-ms");
  options.ipusPerPod = ipusPerPod;
  options.syntheticData = syntheticData;
  if (!(hostPrepMs >= 0 && std::isfinite(hostPrepMs))) throw UsageError("--host-prep-ms must be >= 0 (0: timed)");
  options.hosts = hosts;
  options.networkBytesPerSecond = networkGbps * 1e9 / 8;
  options.networkLatencySeconds = networkLatencyUs * 1e-6;
  if (const auto& g = prog.processes(); isDistributed(g.get())) {
    // Under mpirun the replicas are spread over the ranks: each runs its share, the weights stay the same bits
    // as in one process (device/MpiReplicas.h).
    const int n = g->size();
    if (device != "ipu" || replicas < n)
      throw UsageError("under mpirun with " + std::to_string(n) + " processes: give --device ipu --replicas N with N >= " +
                       std::to_string(n) + " (the job's replicas, spread over the processes)");
    if (rts) throw UsageError("--replicated-tensor-sharding runs in one process: not under mpirun");
    g->setTimeoutSeconds(mpiTimeout);
    options.processes = g;
    if (!prog.given("hosts")) {
      // The plan's hosts: as many as the job really spans (ranks / ranks per host).
      options.hosts = std::max<int64_t>(1, n / std::max(1, g->localSize()));
    }
  }
  try {
    options.validate(!planInference, options.autoPipelineSplits ? 1 : static_cast<int64_t>(options.pipelineSplits.size()) + 1);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

namespace {
// Bytes per process per weight update summing the replicas' gradients across processes, beside the bound of
// an order-preserving reduce-scatter + all-gather: 2 (n - 1) / n of one gradient (n processes).
nlohmann::json exchangeJson(const DeviceProgram::ExchangeBytes& b, int processes) {
  const double updates = static_cast<double>(std::max<int64_t>(b.updates, 1));
  const double bound = 2.0 * (processes - 1) / processes * static_cast<double>(b.gradient);
  return {{"updates", b.updates},
          {"gradient_bytes", b.gradient},
          {"bytes_sent_per_update", static_cast<double>(b.sent) / updates},
          {"bytes_received_per_update", static_cast<double>(b.received) / updates},
          {"received_over_reduce_scatter_bound", bound > 0 ? static_cast<double>(b.received) / updates / bound : 0.0}};
}
}  // namespace

nlohmann::json DeviceFlags::toJson(const DeviceProgram& program) const {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : program.stageNames()) stages.push_back(s);
  return {{"device", device},
          {"ipus", program.numIpus()},
          {"replicas", replicas},
          {"grad_accum", gradAccum},
          {"device_iterations", deviceIterations},
          {"execution", execution},
          {"output_mode", outputModeName(options.resolvedOutputMode(true))},
          {"stages", stages},
          {"host_requests", program.hostRequests()},
          {"recompute", program.options().recompute},
          {"precision", precision},
          {"loss_scale", program.lossScale()},
          {"skipped_updates", program.skippedUpdates()},
          {"processes", options.processes ? options.processes->size() : 1},
          {"all_reduce_seconds", program.allReduceSeconds()},
          {"exchange", exchangeJson(program.exchangeBytes(), options.processes ? options.processes->size() : 1)}};
}

void DeviceFlags::writeTraces(const DeviceProgram& program, const std::string& title) const {
  if (trace.empty() && traceSvg.empty()) return;
  Trace t;
  ProcessGroup* g = options.processes.get();
  if (!isDistributed(g)) {
    t.setTracks(program.trace().tracks());
    for (const TaskRecord& r : program.trace().records()) t.add(r);
  } else {
    // Every rank's tracks and tasks to rank 0, each rank's tracks one group, in rank order.
    nlohmann::json mine = {{"tracks", program.trace().tracks()}, {"records", nlohmann::json::array()}};
    for (const TaskRecord& r : program.trace().records())
      mine["records"].push_back({static_cast<int>(r.kind), r.ipu, r.replica, r.stage, r.request, r.iteration,
                                 r.microBatch, static_cast<int>(r.phase), r.flops, r.bytes, r.cpu.start, r.cpu.duration});
    const std::vector<std::string> all = g->allGather(mine.dump(), "the execution traces");
    if (g->rank() != 0) return;
    std::vector<std::string> tracks;
    std::vector<TaskRecord> records;
    for (size_t k = 0; k < all.size(); ++k) {
      const nlohmann::json j = nlohmann::json::parse(all[k]);
      const auto offset = static_cast<int64_t>(tracks.size());
      for (const auto& name : j["tracks"]) tracks.push_back("rank " + std::to_string(k) + ": " + name.get<std::string>());
      for (const auto& v : j["records"]) {
        TaskRecord r;
        r.kind = static_cast<TaskKind>(v[0].get<int>());
        r.ipu = v[1].get<int64_t>() + offset;
        r.replica = v[2];
        r.stage = v[3];
        r.request = v[4];
        r.iteration = v[5];
        r.microBatch = v[6];
        r.phase = static_cast<PipelinePhase>(v[7].get<int>());
        r.flops = v[8];
        r.bytes = v[9];
        r.cpu = {v[10].is_number() ? v[10].get<double>() : NAN, v[11].is_number() ? v[11].get<double>() : NAN};
        records.push_back(r);
      }
    }
    t.setTracks(tracks);
    for (const TaskRecord& r : records) t.add(r);
  }
  if (program.plan()) attachIpuClock(t, *program.plan());
  if (!trace.empty()) t.writeChromeJson(trace, title);
  if (!traceSvg.empty()) t.writeSvg(traceSvg, title);
}

namespace {
void writeReportFile(const std::string& path, const nlohmann::json& j) {
  if (path.empty()) return;
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) throw std::runtime_error("cannot write the report to " + path);
}
}  // namespace

std::unique_ptr<DeviceProgram> DeviceFlags::compile(const Program& prog, BlockModel& model, LossFn lossFn,
                                                    Optimizer* optimizer, const Batch& shapes,
                                                    double samplesPerMicroBatch, bool quiet) const {
  PlanInputs in;
  in.samplesPerMicroBatch = samplesPerMicroBatch;
  return compile(prog, model, std::move(lossFn), optimizer, shapes, in, quiet);
}

std::unique_ptr<DeviceProgram> DeviceFlags::compile(const Program& prog, BlockModel& model, LossFn lossFn,
                                                    Optimizer* optimizer, const Batch& shapes,
                                                    FixedSizeDataLoader& loader, bool quiet) const {
  PlanInputs in;
  in.packing = PackingProfile::of(loader);
  if (in.packing.packs == 0) in.packing = {};  // an empty epoch: the device counts the compile batch's graphs
  in.samplesPerMicroBatch = in.packing.realGraphsPerMicroBatch();
  in.loader = &loader;
  return compile(prog, model, std::move(lossFn), optimizer, shapes, in, quiet);
}

namespace {
// The plan as --report writes it, with what the caller adds (PlanInputs::extendReport).
nlohmann::json reportJson(const Plan& p, const PlanInputs& in) {
  nlohmann::json j = p.toJson();
  if (in.extendReport) in.extendReport(p, j);
  return j;
}

// The host's preparation of a micro-batch for the plan commands: stated (--host-prep-ms), timed on the loader, or
// unknown (no loader).
HostSample hostSampleFor(const DeviceFlags& df, const PlanInputs& in) {
  if (df.hostPrepMs > 0) return HostSample::given(df.hostPrepMs / 1e3, "--host-prep-ms " + std::to_string(df.hostPrepMs));
  if (in.loader) return timeLoader(*in.loader, HostTiming{}, in.loaderEpoch);
  return {};
}
}  // namespace

std::unique_ptr<DeviceProgram> DeviceFlags::compile(const Program& prog, BlockModel& model, LossFn lossFn,
                                                    Optimizer* optimizer, const Batch& shapes,
                                                    const PlanInputs& in, bool quiet) const {
  IpuOptions o = options;
  o.samplesPerMicroBatch = in.samplesPerMicroBatch;
  try {
    if (planOnly || planInference || planScaling) {
      // The host first, while nothing else runs; then the plan, which runs the model once.
      const HostSample host = syntheticData ? HostSample{} : hostSampleFor(*this, in);
      Plan p = planProgram(model, lossFn, planInference ? nullptr : optimizer, shapes, o);
      if (in.packing.known) p.packing = in.packing;
      if (host.known) p.setHost(host, hostCores, prog.given("host-cores") ? "--host-cores" : "this machine's");
      nlohmann::json j = reportJson(p, in);
      std::string text = p.report();
      if (planScaling) {
        const PlanScaling t = gnn::planScaling(p, ScalingOptions{64, ipusPerHost, ipusPerPod});
        j["scaling"] = t.toJson();
        text += t.table();
      }
      const auto json = prog.values().find("json");
      if (json != prog.values().end() && json->second.as<bool>()) {
        // --json: stdout holds the one JSON object, the --report's content; the out-of-memory report goes to stderr.
        std::cout << j.dump(2) << "\n" << std::flush;
        if (!p.fits() && prog.primary()) std::cerr << prog.name() << ": " << p.outOfMemoryReport();
      } else {
        std::cout << text << std::flush;
      }
      writeReportFile(report, j);
      throw EarlyExit(p.fits() ? 0 : 3);
    }
    std::unique_ptr<DeviceProgram> program;
    try {
      program = makeDevice(device)->compile(model, std::move(lossFn), optimizer, shapes, o);
    } catch (const OutOfMemory& e) {
      writeReportFile(report, reportJson(e.plan(), in));
      throw;
    }
    if (const Plan* p = program->plan()) {
      writeReportFile(report, reportJson(*p, in));
      if (!quiet) {
        const IpuMemory& full = p->memory.ipus[p->memory.fullest];
        std::cerr << prog.name() << ": plan: " << formatMB(full.total) << " of " << formatMB(full.budget)
                  << " on the fullest IPU (" << full.stageName << "), estimated "
                  << static_cast<int64_t>(p->cost.samplesPerSecond) << " samples/s on " << p->spec.description
                  << " (--plan-only for the report)\n";
        if (!p->splitReason.empty()) std::cerr << prog.name() << ": --pipeline-splits auto: " << p->splitReason << "\n";
      }
    }
    return program;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

nlohmann::json DeviceFlags::planJson(const DeviceProgram& program) const {
  const Plan* p = program.plan();
  if (!p) return nlohmann::json::object();
  const nlohmann::json j = p->toJson();
  return {{"memory_per_ipu_mb", j["memory_per_ipu_mb"]},
          {"memory_budget_mb", j["memory_budget_mb"]},
          {"estimated_samples_per_s", j["estimated_samples_per_s"]},
          {"pipeline_utilisation", j["pipeline_utilisation"]},
          {"bottleneck_stage", j["bottleneck_stage"]},
          {"pipeline_splits", j["splits"]}};
}

}  // namespace gnn::app
