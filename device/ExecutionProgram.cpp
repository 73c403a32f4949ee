#include "device/ExecutionProgram.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <type_traits>

#include "gnn/Block.h"
#include "gnn/Check.h"
#include "gnn/HalfPrecision.h"
#include "gnn/Parallel.h"
#include "loaders/BatchFields.h"

namespace gnn {

// One simulated IPU: the context its tasks run under and the sink its parameters' gradients go to.
struct ExecutionProgram::Ipu {
  ExecutionContext ctx;
  GradientSink sink;
  std::shared_ptr<MemoryAccount> memory;
};

// A micro-batch of the request as one replica runs it.
struct ExecutionProgram::MicroBatchRun {
  Batch batch;
  int64_t index = 0;  // position in the host request
  double weight = 0;
  bool padding = false;
  double loss = NAN;
  Tensor output;
  int64_t samples = 0;  // real graphs (known for every process's micro-batches)
};

// What crosses the stage boundaries of one update, and what each stage keeps for its backward.
struct ExecutionProgram::Slots {
  struct Payload {
    std::vector<std::string> names;
    std::vector<Tensor> values;
    std::vector<bool> requiresGrad;
    uint64_t randomOps = 0;
    int64_t bytes = 0;
  };
  // --recompute: what a block's recomputation starts from (its input state, values only) and the random-op
  // and rounding counts at its start, so dropout masks and stochastic rounding redraw identically.
  struct Checkpoint {
    std::vector<std::string> names;
    std::vector<Tensor> values;
    std::vector<bool> requiresGrad;
    uint64_t randomOps = 0, roundingOps = 0;
  };
  struct Stash {
    std::vector<Variable> leaves;  // received activations that need a gradient, in payload order
    BlockState out;                // the stage's output (the tape hangs from it)
    Variable loss;                 // last stage
    // --recompute instead: one checkpoint per block of the stage, and the names of the stage's outputs that
    // need a gradient (in payload order); no tape.
    std::vector<Checkpoint> checkpoints;
    std::vector<std::string> outGrad;
  };
  std::mutex mu;
  int64_t P = 1, G = 1;
  // [replica][stage][micro-batch]
  std::vector<std::optional<Payload>> act;             // stage s -> s+1, stored at s
  std::vector<std::optional<std::vector<Tensor>>> grad;  // stage s+1 -> s, stored at s
  std::vector<std::optional<Stash>> stash;

  Slots(int64_t R, int64_t P_, int64_t G_) : P(P_), G(G_) {
    const size_t n = static_cast<size_t>(R * P * G);
    act.resize(n);
    grad.resize(n);
    stash.resize(n);
  }
  size_t at(int64_t r, int64_t s, int64_t k) const { return static_cast<size_t>((r * P + s) * G + k); }
};

namespace {
// Stochastic rounding's op count at the start of a task: distinct per stage and pass, so no two tasks of a
// micro-batch draw the same rounding stream.
uint64_t roundingBase(int64_t stage, bool backward) {
  return (static_cast<uint64_t>(stage) << 40) | (backward ? uint64_t{1} << 39 : 0);
}

bool allFinite(const Tensor& t) {
  bool ok = true;
  dispatchFloat(t.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    ok = t.flat<T>().allFinite();
  });
  return ok;
}

Tensor sumInto(const Tensor& acc, const Tensor& g) {
  if (!acc.defined()) return g;
  Tensor out = Tensor::empty(acc.shape(), acc.dtype());
  dispatchFloat(acc.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    out.flat<T>() = acc.flat<T>() + g.flat<T>();
  });
  return out;
}

// Bytes of a batch on the host link, as PopTorch streams them (streamedBytes: 64-bit values as 32-bit).
int64_t bytesOf(const Batch& b) {
  int64_t n = 0;
  for (const BatchField& f : batchFields())
    if ((b.*f.inBatch).defined()) n += streamedBytes(b.*f.inBatch);
  for (const CollatorField& f : collatorFields())
    if ((b.*f.inBatch).defined()) n += streamedBytes(b.*f.inBatch);
  return n;
}

// The caller's observer (a profiler) seeing the ops of tasks that run on several workers at once.
struct SharedObserver : OpObserver {
  OpObserver* target = nullptr;
  std::mutex mu;
  void onOp(const OpEvent& e) override {
    std::lock_guard<std::mutex> lock(mu);
    target->onOp(e);
  }
};

// The ops of one task, captured for the compile record.
struct Recorder : OpObserver {
  std::vector<OpRecord> ops;
  int64_t stage = 0;
  OpObserver* next = nullptr;  // the observer the task ran under before (a profiler), still told
  void onOp(const OpEvent& e) override {
    if (next) next->onOp(e);
    OpRecord r;
    r.name = e.info->name;
    r.block = e.block;
    r.stage = stage;
    r.pass = e.pass;
    if (e.output) {
      r.shape = e.output->shape();
      r.dtype = e.output->dtype();
    }
    r.flops = e.flops;
    if (e.pass == Pass::Forward) {
      r.bytesRead = e.info->bytesRead;
      r.bytesWritten = e.info->bytesWritten;
    } else {
      r.bytesRead = e.bytes;
    }
    r.savedBytes = e.savedBytes;
    r.seconds = e.seconds;
    ops.push_back(std::move(r));
  }
};

// Bytes one process sends another in the exchanges of a distributed program (both ends run this code).
class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void putString(const std::string& v) {
    put<int64_t>(static_cast<int64_t>(v.size()));
    out_ += v;
  }
  void putTensor(const Tensor& t) {
    put<uint8_t>(t.defined() ? 1 : 0);
    if (!t.defined()) return;
    put<uint8_t>(static_cast<uint8_t>(t.dtype()));
    put<int64_t>(static_cast<int64_t>(t.shape().size()));
    for (int64_t d : t.shape()) put<int64_t>(d);
    out_.append(static_cast<const char*>(t.raw()), t.nbytes());
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  ByteReader(const std::string& in, std::string what, size_t at = 0) : in_(in), what_(std::move(what)), at_(at) {}
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string getString() {
    const auto n = get<int64_t>();
    need(static_cast<size_t>(n));
    std::string v = in_.substr(at_, static_cast<size_t>(n));
    at_ += static_cast<size_t>(n);
    return v;
  }
  Tensor getTensor() {
    if (get<uint8_t>() == 0) return Tensor();
    const auto dtype = static_cast<DType>(get<uint8_t>());
    Shape shape(static_cast<size_t>(get<int64_t>()));
    for (int64_t& d : shape) d = get<int64_t>();
    Tensor t = Tensor::empty(shape, dtype);
    need(t.nbytes());
    std::memcpy(t.raw(), in_.data() + at_, t.nbytes());
    at_ += t.nbytes();
    return t;
  }
  void expectEnd() const {
    if (at_ != in_.size()) throw ProcessGroupError(what_ + ": " + std::to_string(in_.size() - at_) + " bytes left over");
  }

 private:
  void need(size_t n) const {
    if (in_.size() - at_ < n) throw ProcessGroupError(what_ + ": the message ended early (processes of different builds?)");
  }
  const std::string& in_;
  std::string what_;
  size_t at_ = 0;
};

// An error one process hit, as the others rethrow it: NonFiniteLoss keeps its kind (the training loop saves the
// last good state for it), anything else becomes a runtime_error naming the rank.
void putError(ByteWriter& w, std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const NonFiniteLoss& x) {
    w.put<uint8_t>(1);
    w.put<double>(x.value());
    w.put<int64_t>(x.microBatch());
    w.putString(x.where());
  } catch (const std::exception& x) {
    w.put<uint8_t>(2);
    w.putString(x.what());
  } catch (...) {
    w.put<uint8_t>(2);
    w.putString("an unknown exception");
  }
}
[[noreturn]] void throwError(ByteReader& r, int rank) {
  const auto kind = r.get<uint8_t>();
  if (kind == 1) {
    const double value = r.get<double>();
    const int64_t mb = r.get<int64_t>();
    throw NonFiniteLoss(value, mb, r.getString() + " on MPI rank " + std::to_string(rank));
  }
  throw std::runtime_error("MPI rank " + std::to_string(rank) + ": " + r.getString());
}

// One exchange between the processes of a distributed program: a status byte, then this process's `payload`
// (ok) or its error. Returns every process's message (its payload starts at kPayload); when any process failed,
// raises the lowest failing rank's error on every process instead (as itself on that rank).
constexpr size_t kPayload = 1;
std::vector<std::string> gatherOrRaise(ProcessGroup& g, const std::string& what, std::exception_ptr error,
                                       std::string payload) {
  ByteWriter w;
  w.put<uint8_t>(error ? 1 : 0);
  if (error) putError(w, error);
  else w.bytes() += payload;
  payload.clear();
  std::vector<std::string> got = g.allGather(w.bytes(), what);
  for (int p = 0; p < g.size(); ++p) {
    ByteReader r(got[static_cast<size_t>(p)], what);
    if (r.get<uint8_t>() == 0) continue;
    if (p == g.rank()) std::rethrow_exception(error);
    throwError(r, p);
  }
  return got;
}
}  // namespace

double labelCount(const Tensor& mask, double fallback) {
  if (!mask.defined()) return fallback;
  GNN_CHECK_ARG(mask.dtype() == DType::U8, "labelCount: mask must be uint8");
  const uint8_t* m = mask.data<uint8_t>();
  int64_t n = 0;
  for (int64_t i = 0; i < mask.numel(); ++i) n += m[i] != 0;
  return static_cast<double>(n);
}

ExecutionProgram::ExecutionProgram(std::string deviceName, BlockModel& model, LossFn lossFn, Optimizer* optimizer,
                                   const Batch& shapes, const IpuOptions& options, bool simulated)
    : deviceName_(std::move(deviceName)),
      master_(model),
      loss_(std::move(lossFn)),
      opt_(optimizer),
      o_(options),
      training_(optimizer != nullptr),
      simulated_(simulated) {
  GNN_CHECK_ARG(model.numBlocks() >= 1, "compile: the model has no blocks");
  if (training_) GNN_CHECK_ARG(static_cast<bool>(loss_.loss), "compile: a training program needs a loss function");
  if (!simulated_) {
    GNN_CHECK_ARG(o_.replicationFactor == 1, "the CPU device runs one replica (got replicationFactor ",
                  o_.replicationFactor, "): use --device ipu for replicas, or a larger --batch-size");
    GNN_CHECK_ARG(o_.pipelineSplits.empty(), "the CPU device runs the model whole: --pipeline-splits needs --device ipu");
  }
  // Stages from block names: each split starts a new stage at that block.
  std::vector<size_t> starts{0};
  for (const std::string& name : o_.pipelineSplits) {
    const size_t b = model.blockIndex(name);  // throws, listing the blocks
    std::string names;
    for (const auto& n : model.blockNames()) names += (names.empty() ? "" : ", ") + n;
    GNN_CHECK_ARG(b > 0, "pipeline split '", name, "' is the model's first block, which would leave an empty first "
                  "stage; split at a later block (blocks in order: ", names, ")");
    GNN_CHECK_ARG(b > starts.back(), "pipeline split '", name, "' is out of order or repeated: splits must name "
                  "blocks in model order (blocks in order: ", names, ")");
    starts.push_back(b);
  }
  P_ = static_cast<int64_t>(starts.size());
  for (size_t i = 0; i < starts.size(); ++i)
    stageBlocks_.push_back({starts[i], i + 1 < starts.size() ? starts[i + 1] : model.numBlocks()});
  o_.validate(training_, P_);
  GNN_CHECK_ARG(simulated_ || o_.describeMemoryOptions().empty(), "compile: ", o_.describeMemoryOptions(),
                ": options of the simulated IPU (--device ipu)");
  R_ = o_.replicationFactor;
  G_ = training_ ? o_.gradientAccumulation : o_.deviceIterations;
  shard_ = o_.shard(training_);
  rLo_ = shard_.first;
  Rl_ = shard_.count;
  shapes_ = shapes;
  GNN_CHECK_ARG(!distributed() || !o_.replicatedTensorSharding,
                "--replicated-tensor-sharding runs its replicas in one process: across MPI processes each would own "
                "optimizer state the others update (run it without mpirun, or without the option)");
  schedule_ = training_ ? PipelineSchedule::training(P_, G_, o_.executionStrategy)
                        : PipelineSchedule::inference(P_, G_, o_.executionStrategy);
  numIpus_ = simulated_ ? o_.numIpus(P_) : 1;

  fp16_ = o_.precision == Precision::FP16;
  scaling_ = training_ ? o_.resolvedLossScaling() : LossScaling{};
  lossScale_ = scaling_.mode == LossScaling::Mode::None ? 1.0 : scaling_.scale;
  streaming_ = std::make_shared<MemoryAccount>("streaming");
  // fp16: every replica, the first too, is a copy holding the master's weights rounded to half; the model the
  // program was compiled with keeps the fp32 master weights the optimizer updates.
  if (!fp16_) replicas_.push_back(&master_);
  for (int64_t r = fp16_ ? 0 : 1; r < Rl_; ++r) {
    std::unique_ptr<Module> c = master_.clone();
    auto* bm = dynamic_cast<BlockModel*>(c.get());
    GNN_ASSERT(bm, "clone() of a BlockModel returned another kind of module");
    replicas_.push_back(bm);
    clones_.push_back(std::move(c));
  }
  // Parameters in the optimizer's order, matched to each replica's copy by position in parameters().
  const std::vector<Variable> mp = master_.parameters();
  const std::vector<Variable> order = opt_ ? opt_->parameters() : mp;
  std::vector<size_t> pos;
  for (const Variable& p : order) {
    size_t i = 0;
    while (i < mp.size() && &mp[i].value() != &p.value()) ++i;
    GNN_CHECK_ARG(i < mp.size(), "compile: the optimizer updates a tensor that is not a parameter of the model");
    pos.push_back(i);
  }
  for (int64_t r = 0; r < Rl_; ++r) {
    const std::vector<Variable> rp = replicas_[static_cast<size_t>(r)]->parameters();
    std::vector<Variable> v;
    for (size_t i : pos) v.push_back(rp[i]);
    params_.push_back(std::move(v));
  }
  for (size_t i : pos) masterParams_.push_back(mp[i]);
  ownerStage_ = std::make_shared<std::vector<int64_t>>(masterParams_.size(), -1);
  for (int64_t r = rLo_; r < rLo_ + Rl_; ++r)
    for (int64_t s = 0; s < P_; ++s) {
      auto ip = std::make_unique<Ipu>();
      const int64_t id = r * P_ + s;
      ip->memory = std::make_shared<MemoryAccount>(simulated_ ? "ipu" + std::to_string(id) : "cpu");
      ip->ctx.setMemoryAccount(ip->memory);
      ip->ctx.setGradientSink(&ip->sink);
      if (fp16_) ip->ctx.setRounding(o_.stochasticRounding ? Rounding::StochasticHalf : Rounding::Half);
      ipus_.push_back(std::move(ip));
    }
  if (training_) {
    // Where the optimizer's state lives: on the IPU whose stage owns the parameter (replica 0's; with replicated
    // tensor sharding, replica r's for shard r), or in streaming memory when offloaded.
    std::vector<std::shared_ptr<MemoryAccount>> accounts;
    for (const auto& ip : ipus_) accounts.push_back(ip->memory);
    const auto owners = ownerStage_;
    const int64_t P = P_;
    auto onIpu = [accounts, owners, P](size_t replica, size_t i) {
      const int64_t s = i < owners->size() && (*owners)[i] >= 0 ? (*owners)[i] : 0;
      return accounts[static_cast<size_t>(static_cast<int64_t>(replica) * P + s)];
    };
    const auto streaming = streaming_;
    if (o_.offloadOptimizer) {
      opt_->setStateAccounts([streaming](size_t) { return streaming; });
      if (fp16_) {
        // The fp32 master weights are the optimizer's too: they move to streaming memory.
        ExecutionContext off;
        off.setMemoryAccount(streaming_);
        ContextScope use(off);
        for (Variable& p : masterParams_) p.value() = p.value().clone();
      }
    } else {
      opt_->setStateAccounts([onIpu](size_t i) { return onIpu(0, i); });
    }
    if (o_.replicatedTensorSharding) {
      std::function<std::shared_ptr<MemoryAccount>(size_t, size_t)> where = onIpu;
      if (o_.offloadOptimizer) where = [streaming](size_t, size_t) { return streaming; };
      opt_->setShards(Optimizer::balancedRanges(opt_->numElements(), R_), where);
    } else if (opt_->numShards() > 0) {
      opt_->setShards({}, nullptr);
    }
  }
  const int64_t lanes = Rl_ * static_cast<int64_t>(schedule_.lanes.size());
  // The cores this process may use (setCoreSlots: shared with the other processes of the job on this host).
  workers_ = o_.workers > 0 ? o_.workers : std::min<int64_t>(coreSlots(), lanes);
  workers_ = std::max<int64_t>(1, std::min(workers_, lanes));
  if (!simulated_) workers_ = 1;

  record_.fields = CompileRecord::shapesOf(shapes);
  record_.numNodes = shapes.numNodes;
  record_.numEdges = shapes.numEdges;
  record_.numGraphs = shapes.numGraphs;
  record_.maxNodesPerGraph = shapes.maxNodesPerGraph;
  GNN_CHECK_ARG(shapes.numGraphs >= 1, "compile: the example micro-batch has no graphs");
  record_.inputBytes = bytesOf(shapes);
  const auto names = master_.blockNames();
  for (const std::string& n : names) record_.blocks.push_back(BlockRecord{n});
  for (int64_t s = 0; s < P_; ++s) {
    StageRecord st;
    st.firstBlock = static_cast<int64_t>(stageBlocks_[static_cast<size_t>(s)].first);
    st.lastBlock = static_cast<int64_t>(stageBlocks_[static_cast<size_t>(s)].second);
    st.name = names[static_cast<size_t>(st.firstBlock)];
    if (st.lastBlock - st.firstBlock > 1) st.name += ".." + names[static_cast<size_t>(st.lastBlock - 1)];
    st.maxStashed = schedule_.maxStashed(s);
    record_.stages.push_back(st);
  }
  fwdSeconds_.assign(static_cast<size_t>(P_), 0);
  bwdSeconds_.assign(static_cast<size_t>(P_), 0);
  fwdCount_.assign(static_cast<size_t>(P_), 0);
  bwdCount_.assign(static_cast<size_t>(P_), 0);
  std::vector<std::string> tracks;
  for (int64_t r = rLo_; r < rLo_ + Rl_; ++r)
    for (int64_t s = 0; s < P_; ++s)
      tracks.push_back(simulated_ ? "IPU " + std::to_string(r * P_ + s) + " (replica " + std::to_string(r) + ", stage " +
                                        std::to_string(s) + ": " + record_.stages[static_cast<size_t>(s)].name + ")"
                                  : "CPU");
  tracks.push_back("host");
  trace_.setTracks(tracks);
}

ExecutionProgram::~ExecutionProgram() = default;

const MemoryAccount& ExecutionProgram::ipuMemory(int64_t id) const { return *ipus_.at(static_cast<size_t>(id))->memory; }

void ExecutionProgram::setLossScaleState(const LossScaleState& st) {
  if (!st.valid())
    throw std::invalid_argument("loss scaling state out of range (scale " + std::to_string(st.scale) + ", counts " +
                                std::to_string(st.cleanUpdates) + "/" + std::to_string(st.skipped) + "/" +
                                std::to_string(st.overflows) + ")");
  // Only a dynamic scale is state: a static one is the --loss-scale given, and without scaling it stays 1. The
  // counts are kept either way (they describe the run so far).
  if (scaling_.mode == LossScaling::Mode::Dynamic) lossScale_ = st.scale;
  cleanUpdates_ = st.cleanUpdates;
  skippedTotal_ = st.skipped;
  overflowTotal_ = st.overflows;
}

double ExecutionProgram::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void ExecutionProgram::recordTask(const TaskRecord& r) {
  if (requests_ < traceRequests_) trace_.add(r);
}

std::vector<std::string> ExecutionProgram::stageNames() const {
  std::vector<std::string> out;
  for (const auto& s : record_.stages) out.push_back(s.name);
  return out;
}

void ExecutionProgram::runTask(int64_t r, const ScheduledTask& t, Slots& slots,
                               std::vector<std::vector<MicroBatchRun>>& mbs, int64_t iteration, int64_t step,
                               uint64_t seed, double totalWeight) {
  const int64_t s = t.stage, k = t.microBatch;
  Ipu& ip = ipu(r, s);
  ContextScope use(ip.ctx);
  MicroBatchRun& m = mbs[static_cast<size_t>(r)][static_cast<size_t>(k)];
  const bool capture = capturing_ && r == rLo_ && k == 0 && iteration == 0;
  Recorder rec;
  rec.stage = s;
  rec.next = ip.ctx.observer();
  std::optional<ObserverScope> watch;
  TaskRecord tr;
  tr.ipu = simulated_ ? (r - rLo_) * P_ + s : 0;
  tr.replica = r;
  tr.stage = s;
  tr.request = requests_;
  tr.iteration = iteration;
  tr.microBatch = k;
  tr.phase = t.phase;
  const double start = now();
  if (t.kind == TaskKind::Forward) {
    std::optional<NoGradGuard> noGrad;
    if (!training_) noGrad.emplace();
    BlockState in;
    std::vector<Variable> leaves;
    uint64_t drawn = 0;
    if (s > 0) {
      Slots::Payload p;
      {
        std::lock_guard<std::mutex> lock(slots.mu);
        auto& slot = slots.act[slots.at(r, s - 1, k)];
        GNN_ASSERT(slot.has_value(), "stage input missing");
        p = std::move(*slot);
        slot.reset();
      }
      drawn = p.randomOps;
      for (size_t i = 0; i < p.names.size(); ++i) {
        Variable v(p.values[i], p.requiresGrad[i] && training_);
        if (v.requiresGrad()) leaves.push_back(v);
        in.set(p.names[i], v);
      }
      TaskRecord copy = tr;
      copy.kind = TaskKind::Copy;
      copy.bytes = p.bytes;
      copy.cpu = {start, now() - start};
      recordTask(copy);
    }
    ip.ctx.setRandomKey({seed, static_cast<uint64_t>(step), static_cast<uint64_t>(m.index)}, drawn);
    ip.ctx.setRoundingOps(roundingBase(s, false));
    if (capture) watch.emplace(rec);
    ObserverScope::mark();
    const auto [first, last] = stageBlocks_[static_cast<size_t>(s)];
    BlockState out;
    const bool recompute = o_.recompute && training_;
    std::vector<Slots::Checkpoint> checkpoints;
    if (recompute) {
      // Recomputation checkpoints at every block boundary (PopTorch's recomputationCheckpoint after each block):
      // each block runs on its checkpointed input and its tape is dropped at its end, keeping only the values
      // the next block starts from (and which of them need a gradient). The last block's tape goes once the
      // loss is read.
      BlockState cur = std::move(in);
      for (size_t b = first; b < last; ++b) {
        Slots::Checkpoint ck;
        for (const auto& [name, v] : cur.entries()) {
          ck.names.push_back(name);
          ck.values.push_back(v.value());
          ck.requiresGrad.push_back(v.requiresGrad());
        }
        ck.randomOps = ip.ctx.randomOps();
        ck.roundingOps = ip.ctx.roundingOps();
        checkpoints.push_back(std::move(ck));
        BlockState o = replica(r).runBlocks(std::move(cur), m.batch, b, b + 1);
        if (capture) {
          int64_t bytes = 0;
          for (const auto& [name, v] : o.entries()) bytes += static_cast<int64_t>(v.value().nbytes());
          record_.blocks[b].outputBytes = bytes;
        }
        if (b + 1 == last) {
          out = std::move(o);
        } else {
          cur = BlockState();
          for (const auto& [name, v] : o.entries()) cur.set(name, Variable(v.value(), v.requiresGrad()));
        }
      }
    } else if (capture) {
      // Block by block (the same ops in the same order), to record the state each block hands on.
      out = std::move(in);
      for (size_t b = first; b < last; ++b) {
        out = replica(r).runBlocks(std::move(out), m.batch, b, b + 1);
        int64_t bytes = 0;
        for (const auto& [name, v] : out.entries()) bytes += static_cast<int64_t>(v.value().nbytes());
        record_.blocks[b].outputBytes = bytes;
      }
    } else {
      out = replica(r).runBlocks(std::move(in), m.batch, first, last);
    }
    Slots::Stash st;
    st.leaves = std::move(leaves);
    if (s == P_ - 1) {
      const Variable& y = out.get("out");
      m.output = y.value();
      if (training_) {
        Variable l = loss_.loss(y, m.batch);
        GNN_CHECK_ARG(l.value().numel() == 1, "the loss function returned shape ", shapeString(l.shape()),
                      ", not a scalar");
        m.loss = l.value().item();
        if (!std::isfinite(m.loss) && !m.padding && checkLossFinite_)
          throw NonFiniteLoss(m.loss, m.index,
                              "micro-batch " + std::to_string(m.index) + " of the host request (replica " +
                                  std::to_string(r) + ", device iteration " + std::to_string(iteration) + ")");
        st.loss = l;
      }
    } else {
      Slots::Payload p;
      for (const auto& [name, v] : out.entries()) {
        p.names.push_back(name);
        p.values.push_back(v.value());
        p.requiresGrad.push_back(v.requiresGrad());
        p.bytes += static_cast<int64_t>(v.value().nbytes());
      }
      p.randomOps = ip.ctx.randomOps();
      if (capture) record_.stages[static_cast<size_t>(s)].activationBytes = p.bytes;
      std::lock_guard<std::mutex> lock(slots.mu);
      slots.act[slots.at(r, s, k)] = std::move(p);
    }
    if (training_) {
      if (recompute) {
        for (const auto& [name, v] : out.entries())
          if (v.requiresGrad()) st.outGrad.push_back(name);
        st.checkpoints = std::move(checkpoints);
        st.leaves.clear();
        st.loss = Variable();
        out = BlockState();  // the tape of the last block goes here
      } else {
        st.out = std::move(out);
      }
      std::lock_guard<std::mutex> lock(slots.mu);
      slots.stash[slots.at(r, s, k)] = std::move(st);
    }
  } else {
    Slots::Stash st;
    std::vector<Tensor> seeds;
    {
      std::lock_guard<std::mutex> lock(slots.mu);
      auto& slot = slots.stash[slots.at(r, s, k)];
      GNN_ASSERT(slot.has_value(), "stash missing");
      st = std::move(*slot);
      slot.reset();
      if (s < P_ - 1) {
        auto& g = slots.grad[slots.at(r, s, k)];
        GNN_ASSERT(g.has_value(), "stage gradient missing");
        seeds = std::move(*g);
        g.reset();
      }
    }
    if (capture) watch.emplace(rec);
    ip.ctx.setRandomKey({seed, static_cast<uint64_t>(step), static_cast<uint64_t>(m.index)});
    ip.ctx.setRoundingOps(roundingBase(s, true));
    const double lossSeed = (totalWeight > 0 ? m.weight / totalWeight : 0.0) * lossScale_;
    std::vector<Tensor> recomputedBack;
    if (o_.recompute) {
      // Block by block from the last: re-run block b's forward from its checkpoint with the tape on (the
      // entries that needed a gradient become leaves), run its backward from the gradients of its outputs (the
      // next block's input gradients, the next stage's, or the loss), take the leaves' gradients, free the block.
      const auto [first, last] = stageBlocks_[static_cast<size_t>(s)];
      std::vector<std::pair<std::string, Tensor>> seedOf;  // gradients of the outputs of the block being recomputed
      if (s < P_ - 1)
        for (size_t i = 0; i < st.outGrad.size(); ++i)
          if (i < seeds.size() && seeds[i].defined()) seedOf.push_back({st.outGrad[i], seeds[i]});
      uint64_t backwardOps = roundingBase(s, true);
      for (size_t b = last; b-- > first;) {
        Slots::Checkpoint ck = std::move(st.checkpoints[b - first]);
        st.checkpoints[b - first] = Slots::Checkpoint();
        ip.ctx.setRandomKey({seed, static_cast<uint64_t>(step), static_cast<uint64_t>(m.index)}, ck.randomOps);
        ip.ctx.setRoundingOps(ck.roundingOps);
        // The re-run forward is not part of the compile record (the forward ran once already).
        OpObserver* watching = ip.ctx.observer();
        if (capture) ip.ctx.setObserver(rec.next);
        BlockState in;
        std::vector<std::pair<std::string, Variable>> leaves;
        for (size_t i = 0; i < ck.names.size(); ++i) {
          Variable v(ck.values[i], ck.requiresGrad[i]);
          if (v.requiresGrad()) leaves.push_back({ck.names[i], v});
          in.set(ck.names[i], v);
        }
        ck.values.clear();
        BlockState out = replica(r).runBlocks(std::move(in), m.batch, b, b + 1);
        std::vector<Variable> roots;
        std::vector<Tensor> rootSeeds;
        if (s == P_ - 1 && b + 1 == last) {
          Variable l = loss_.loss(out.get("out"), m.batch);
          if (l.requiresGrad()) {
            roots.push_back(l);
            rootSeeds.push_back(Tensor::full(l.shape(), lossSeed, l.dtype()));
          }
        } else {
          for (const auto& [name, v] : out.entries()) {
            if (!v.requiresGrad()) continue;
            for (const auto& [n, g] : seedOf)
              if (n == name) {
                roots.push_back(v);
                rootSeeds.push_back(g);
              }
          }
        }
        ip.ctx.setObserver(watching);
        ip.ctx.setRoundingOps(backwardOps);
        if (!roots.empty()) Variable::backward(roots, rootSeeds);
        backwardOps = ip.ctx.roundingOps();
        roots.clear();
        out = BlockState();
        seedOf.clear();
        for (const auto& [name, leaf] : leaves) {
          Tensor g = ip.sink.take(leaf);
          if (b == first) recomputedBack.push_back(g);
          if (g.defined()) seedOf.push_back({name, std::move(g)});
        }
      }
    } else if (s == P_ - 1) {
      if (st.loss.requiresGrad()) {
        // fp16: the seed carries the loss scale; the reduced gradients are divided by it before the update.
        st.loss.backward(Tensor::full(st.loss.shape(), lossSeed, st.loss.dtype()));
      }
    } else {
      std::vector<Variable> roots;
      std::vector<Tensor> rootSeeds;
      size_t i = 0;
      for (const auto& [name, v] : st.out.entries()) {
        if (!v.requiresGrad()) continue;
        GNN_ASSERT(i < seeds.size(), "stage gradients do not match the stage's outputs");
        if (seeds[i].defined()) {
          roots.push_back(v);
          rootSeeds.push_back(seeds[i]);
        }
        ++i;
      }
      if (!roots.empty()) Variable::backward(roots, rootSeeds);
    }
    if (s > 0) {
      std::vector<Tensor> back;
      int64_t bytes = 0;
      if (o_.recompute) back = std::move(recomputedBack);
      for (const Variable& leaf : st.leaves) back.push_back(ip.sink.take(leaf));
      for (const Tensor& g : back)
        if (g.defined()) bytes += static_cast<int64_t>(g.nbytes());
      {
        std::lock_guard<std::mutex> lock(slots.mu);
        slots.grad[slots.at(r, s - 1, k)] = std::move(back);
      }
      TaskRecord copy = tr;
      copy.kind = TaskKind::Copy;
      copy.ipu = simulated_ ? r * P_ + s - 1 : 0;
      copy.stage = s - 1;
      copy.bytes = bytes;
      const double t1 = now();
      copy.cpu = {t1, 0};
      recordTask(copy);
    }
  }
  const double end = now();
  tr.kind = t.kind;
  watch.reset();
  if (capture) {
    int64_t flops = 0;
    for (const auto& op : rec.ops) flops += op.flops;
    tr.flops = flops;
    StageRecord& sr = record_.stages[static_cast<size_t>(s)];
    for (const auto& op : rec.ops) {
      if (op.pass == Pass::Forward) {
        ++sr.forwardOps;
        sr.forwardFlops += op.flops;
        sr.savedBytes += op.savedBytes;
      } else {
        ++sr.backwardOps;
        sr.backwardFlops += op.flops;
      }
    }
    std::lock_guard<std::mutex> lock(slots.mu);
    record_.ops.insert(record_.ops.end(), rec.ops.begin(), rec.ops.end());
  }
  tr.cpu = {start, end - start};
  recordTask(tr);
  std::lock_guard<std::mutex> lock(slots.mu);
  if (t.kind == TaskKind::Forward) {
    fwdSeconds_[static_cast<size_t>(s)] += end - start;
    ++fwdCount_[static_cast<size_t>(s)];
  } else {
    bwdSeconds_[static_cast<size_t>(s)] += end - start;
    ++bwdCount_[static_cast<size_t>(s)];
  }
}

void ExecutionProgram::runUpdate(std::vector<std::vector<MicroBatchRun>>& mbs, int64_t iteration, int64_t step,
                                 uint64_t seed, RunResult& result) {
  const int64_t G = static_cast<int64_t>(mbs.front().size());
  const PipelineSchedule schedule = G == G_ ? schedule_
                                    : training_ ? PipelineSchedule::training(P_, G, o_.executionStrategy)
                                                : PipelineSchedule::inference(P_, G, o_.executionStrategy);
  double totalWeight = 0;
  for (const auto& rep : mbs)
    for (const auto& m : rep) totalWeight += m.padding ? 0.0 : m.weight;
  for (auto& ip : ipus_) {
    ip->sink.clear();
    ip->ctx.resetGradientOverflows();
  }
  syncReplicas();
  Slots slots(R_, P_, G);

  // Lanes of every replica; a worker takes any lane whose next task has its inputs.
  struct Lane {
    int64_t replica;
    const std::vector<ScheduledTask>* tasks;
    size_t next = 0;
    bool busy = false;
  };
  std::vector<Lane> lanes;
  size_t remaining = 0;
  for (int64_t r = rLo_; r < rLo_ + Rl_; ++r)
    for (const auto& l : schedule.lanes) {
      lanes.push_back({r, &l});
      remaining += l.size();
    }
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  auto ready = [&](const Lane& L) {
    if (L.busy || L.next >= L.tasks->size()) return false;
    const ScheduledTask& t = (*L.tasks)[L.next];
    std::lock_guard<std::mutex> lock(slots.mu);
    if (t.kind == TaskKind::Forward) return t.stage == 0 || slots.act[slots.at(L.replica, t.stage - 1, t.microBatch)].has_value();
    return t.stage == P_ - 1 || slots.grad[slots.at(L.replica, t.stage, t.microBatch)].has_value();
  };
  auto worker = [&] {
    std::unique_lock<std::mutex> lock(mu);
    while (!error && remaining > 0) {
      Lane* pick = nullptr;
      for (Lane& L : lanes)
        if (ready(L)) {
          pick = &L;
          break;
        }
      if (!pick) {
        bool anyBusy = false;
        for (const Lane& L : lanes) anyBusy = anyBusy || L.busy;
        if (!anyBusy) {
          error = std::make_exception_ptr(std::logic_error("device schedule stalled: no task can run"));
          cv.notify_all();
          break;
        }
        cv.wait(lock);
        continue;
      }
      pick->busy = true;
      const ScheduledTask task = (*pick->tasks)[pick->next];
      lock.unlock();
      std::exception_ptr failed;
      try {
        runTask(pick->replica, task, slots, mbs, iteration, step, seed, totalWeight);
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      pick->busy = false;
      ++pick->next;
      --remaining;
      if (failed && !error) error = failed;
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (int64_t w = 1; w < workers_; ++w) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  const double reduceStart = now();
  int64_t overflows = 0;
  // [replica][stage][parameter]: the other processes' replicas' gradients (empty for this process's own).
  std::vector<std::vector<std::vector<Tensor>>> remote;
  if (distributed()) {
    for (auto& ip : ipus_) overflows += ip->ctx.gradientOverflows();
    try {
      exchangeUpdate(mbs, error, overflows, remote);
    } catch (...) {
      for (auto& ip : ipus_) ip->sink.clear();
      throw;
    }
  }
  if (error) {
    for (auto& ip : ipus_) ip->sink.clear();
    std::rethrow_exception(error);
  }
  if (!training_) return;

  // Gradients: replicas in order, each replica's stages in order (a parameter two stages use gets both). The
  // other processes' replicas' gradients came in the exchange: the sum is the same, bit for bit, wherever each
  // replica ran.
  std::vector<Tensor> grads(params_.front().size());
  for (size_t i = 0; i < grads.size(); ++i)
    for (int64_t r = 0; r < R_; ++r)
      for (int64_t s = 0; s < P_; ++s) {
        Tensor g = local(r) ? ipu(r, s).sink.grad(replicaParams(r)[i])
                            : remote[static_cast<size_t>(r)][static_cast<size_t>(s)][i];
        if (g.defined()) grads[i] = sumInto(grads[i], g);
      }
  for (size_t i = 0; i < grads.size(); ++i)
    for (int64_t s = 0; s < P_ && (*ownerStage_)[i] < 0; ++s)
      if (ipu(rLo_, s).sink.grad(params_.front()[i]).defined()) (*ownerStage_)[i] = s;
  if (capturing_ && iteration == 0)
    for (int64_t s = 0; s < P_; ++s) {
      StageRecord& sr = record_.stages[static_cast<size_t>(s)];
      for (const Variable& p : params_.front())
        if (ipu(rLo_, s).sink.grad(p).defined()) {
          ++sr.parameterTensors;
          sr.parameters += p.value().numel();
          // The block whose backward reached it first; a parameter no block claims goes to the stage's first.
          int64_t b = record_.blockIndex(ipu(rLo_, s).sink.blockOf(p));
          if (b < sr.firstBlock || b >= sr.lastBlock) b = sr.firstBlock;
          ++record_.blocks[static_cast<size_t>(b)].parameterTensors;
          record_.blocks[static_cast<size_t>(b)].parameters += p.value().numel();
        }
    }
  // fp16 overflow: a gradient value that saturated (or was NaN) when rounded to half on any IPU (of any process:
  // the exchange summed them), or a reduced gradient that is not finite, before unscaling.
  for (auto& ip : ipus_) {
    if (!distributed()) overflows += ip->ctx.gradientOverflows();
    ip->ctx.resetGradientOverflows();
    ip->sink.clear();
  }
  if (scaling_.mode != LossScaling::Mode::None)
    for (const Tensor& g : grads)
      if (g.defined() && !allFinite(g)) ++overflows;
  const double reduceEnd = now();
  allReduceSeconds_ += reduceEnd - reduceStart;
  if (R_ > 1) recordOnEveryIpu(TaskKind::AllReduce, iteration, reduceStart, reduceEnd);
  if (scaling_.mode != LossScaling::Mode::None) {
    if (overflows > 0) ++overflowTotal_;
    // Dynamic loss scaling, PyTorch GradScaler's policy: an update whose gradients overflowed is skipped (the
    // optimizer's state, step count and so the learning-rate schedule stay as they were) and the scale halved;
    // after growthInterval clean updates in a row the scale doubles. PopTorch's automatic loss scaling decides
    // from a histogram of the gradients instead: it halves the scale when too large a share of them sits in the
    // histogram's top bin (near the fp16 maximum) and doubles it otherwise. Static: the update is applied as is
    // and the overflow only counted.
    if (overflows > 0 && scaling_.mode == LossScaling::Mode::Dynamic) {
      ++result.skippedUpdates;
      ++skippedTotal_;
      lossScale_ /= 2;
      cleanUpdates_ = 0;
      return;
    }
    const double inv = 1.0 / lossScale_;
    for (Tensor& g : grads) {
      if (!g.defined()) continue;
      Tensor u = Tensor::empty(g.shape(), g.dtype());
      dispatchFloat(g.dtype(), [&](auto* tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        u.flat<T>() = g.flat<T>() * static_cast<T>(inv);
      });
      g = std::move(u);
    }
  }
  if (hooks_.onGradients) hooks_.onGradients(grads);
  const double optStart = now();
  if (opt_->numShards() > 0) {
    // Replicated tensor sharding: replica r updates its range of the flattened parameters from its shard of
    // the state, into its own weights (fp16: into the fp32 master, then rounded to every replica); then every
    // range is all-gathered into every replica's weights.
    std::vector<std::vector<Variable>> owners;
    for (int64_t r = 0; r < R_; ++r) owners.push_back(fp16_ ? masterParams_ : replicaParams(r));
    opt_->stepSharded(grads, owners);
    if (!fp16_) {
      const auto ranges = Optimizer::balancedRanges(opt_->numElements(), R_);
      int64_t begin = 0;
      for (size_t i = 0; i < grads.size(); ++i) {
        const int64_t n = masterParams_[i].value().numel();
        const size_t bytes = dtypeSize(masterParams_[i].dtype());
        for (int64_t r = 0; r < R_; ++r) {
          const int64_t lo = std::max(begin, ranges[static_cast<size_t>(r)].first) - begin;
          const int64_t hi = std::min(begin + n, ranges[static_cast<size_t>(r)].second) - begin;
          if (lo >= hi) continue;
          const char* src = static_cast<const char*>(std::as_const(params_[static_cast<size_t>(r)][i].value()).raw());
          for (int64_t q = 0; q < R_; ++q)
            if (q != r)
              std::memcpy(static_cast<char*>(params_[static_cast<size_t>(q)][i].value().raw()) + lo * static_cast<int64_t>(bytes),
                          src + lo * static_cast<int64_t>(bytes), static_cast<size_t>(hi - lo) * bytes);
        }
        begin += n;
      }
    }
  } else {
    opt_->step(grads);
  }
  if (scaling_.mode == LossScaling::Mode::Dynamic && ++cleanUpdates_ >= scaling_.growthInterval) {
    lossScale_ *= 2;
    cleanUpdates_ = 0;
  }
  // Every replica applies the same update: the master's new weights are copied to the others.
  syncReplicas();
  const double optEnd = now();
  recordOnEveryIpu(TaskKind::Optimizer, iteration, optStart, optEnd);
  ++result.updates;
}

int64_t ExecutionProgram::narrowIntegerFeatures(Batch& b, int64_t microBatch) const {
  int64_t bytes = 0;
  for (const BatchField& f : batchFields()) {
    Tensor& t = b.*f.inBatch;
    if (!t.defined()) continue;
    // Integer features only: node ids (edge_index) and targets keep their width.
    const bool integer = t.dtype() == DType::I64 || t.dtype() == DType::I32;
    if (!integer || f.nodeIds || f.target) {
      bytes += streamedBytes(t);
      continue;
    }
    // Node-pair fields (spatial_pos, edge_input) mark padding and unreachable pairs with -1: they cross biased
    // by one (-1..254); every other integer feature as is (0..255). A field's column offsets (edge_input's 512
    // per bond feature) stay on the device, and its sentinel (spatial_pos: 510, unreachable) crosses as 255.
    const int64_t bias = f.level == FieldLevel::NodePair ? 1 : 0;
    const bool sentinel = f.wireSentinel != BatchField::kNoSentinel;
    const int64_t top = (sentinel ? 254 : 255) - bias;
    const int64_t cols = t.rank() > 1 && f.columnOffset != 0 ? t.dim(t.rank() - 1) : 1;
    Tensor narrow(t.shape(), DType::U8);
    uint8_t* out = narrow.data<uint8_t>();
    auto check = [&](int64_t v, int64_t i) -> uint8_t {
      if (sentinel && v == f.wireSentinel) return 255;
      const int64_t offset = v >= 0 ? f.columnOffset * (i % cols) : 0;
      const int64_t w = v - offset;
      GNN_CHECK_ARG((v < 0 || w >= 0) && w + bias >= 0 && w <= top, "--eight-bit-io: field '", f.name,
                    "' of micro-batch ", microBatch, " of the host request holds ", v, " (element ", i, "), outside ",
                    -bias, "..", top, offset ? " after its column offset " + std::to_string(offset) : std::string(),
                    sentinel ? " or " + std::to_string(f.wireSentinel) : std::string(),
                    "; run without --eight-bit-io or remap that feature");
      return static_cast<uint8_t>(w + bias);
    };
    if (t.dtype() == DType::I64) {
      const int64_t* in = std::as_const(t).data<int64_t>();
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = check(in[i], i);
    } else {
      const int32_t* in = std::as_const(t).data<int32_t>();
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = check(in[i], i);
    }
    bytes += static_cast<int64_t>(narrow.nbytes());
    // On the device: widened back to the field's own type, offsets and sentinel restored.
    auto widen = [&](uint8_t n, int64_t i) -> int64_t {
      if (sentinel && n == 255) return f.wireSentinel;
      const int64_t v = static_cast<int64_t>(n) - bias;
      return v >= 0 ? v + f.columnOffset * (i % cols) : v;
    };
    Tensor wide(t.shape(), t.dtype());
    const uint8_t* nv = std::as_const(narrow).data<uint8_t>();
    if (t.dtype() == DType::I64) {
      int64_t* w = wide.data<int64_t>();
      for (int64_t i = 0; i < t.numel(); ++i) w[i] = widen(nv[i], i);
    } else {
      int32_t* w = wide.data<int32_t>();
      for (int64_t i = 0; i < t.numel(); ++i) w[i] = static_cast<int32_t>(widen(nv[i], i));
    }
    t = std::move(wide);
  }
  for (const CollatorField& f : collatorFields())
    if ((b.*f.inBatch).defined()) bytes += streamedBytes(b.*f.inBatch);
  return bytes;
}

void ExecutionProgram::exchangeRequest(std::vector<MicroBatchRun>& mine, std::exception_ptr error,
                                       std::vector<MicroBatchRun>& all) {
  ProcessGroup& g = *o_.processes;
  ByteWriter w;
  w.put<int64_t>(static_cast<int64_t>(mine.size()));
  for (const MicroBatchRun& m : mine) {
    w.put<double>(m.weight);
    w.put<int64_t>(m.samples);
  }
  const std::string what = "the micro-batch weights of host request " + std::to_string(requests_ + 1);
  const std::vector<std::string> got = gatherOrRaise(g, what, error, std::move(w.bytes()));
  // Every process's (weight, samples) in its own order; the request's micro-batches in the device's order.
  std::vector<std::vector<std::pair<double, int64_t>>> per(static_cast<size_t>(g.size()));
  int64_t total = 0;
  for (int p = 0; p < g.size(); ++p) {
    ByteReader r(got[static_cast<size_t>(p)], what, kPayload);
    const auto n = r.get<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      const double wgt = r.get<double>();
      per[static_cast<size_t>(p)].push_back({wgt, r.get<int64_t>()});
    }
    r.expectEnd();
    total += n;
  }
  std::vector<int> rankOf(static_cast<size_t>(R_));
  for (int p = 0; p < g.size(); ++p) {
    const RequestShard sh = RequestShard::of(p, g.size(), R_, shard_.perReplica, shard_.perRequest);
    for (int64_t r = sh.first; r < sh.first + sh.count; ++r) rankOf[static_cast<size_t>(r)] = p;
  }
  all.assign(static_cast<size_t>(total), MicroBatchRun());
  std::vector<size_t> next(static_cast<size_t>(g.size()), 0);
  for (int64_t m = 0; m < total; ++m) {
    const int p = rankOf[static_cast<size_t>(shard_.replicaOf(m))];
    size_t& j = next[static_cast<size_t>(p)];
    GNN_CHECK_ARG(j < per[static_cast<size_t>(p)].size(), "host request ", requests_ + 1, ": micro-batch ", m,
                  " of the job's ", total, " belongs to MPI rank ", p, ", which sent only ", per[static_cast<size_t>(p)].size(),
                  ": every process's loader must be sharded as the device program is (IpuOptions::shard())");
    MicroBatchRun& mb = all[static_cast<size_t>(m)];
    if (p == g.rank()) mb = std::move(mine[j]);
    mb.index = m;
    mb.weight = per[static_cast<size_t>(p)][j].first;
    mb.samples = per[static_cast<size_t>(p)][j].second;
    ++j;
  }
  for (int p = 0; p < g.size(); ++p)
    GNN_CHECK_ARG(next[static_cast<size_t>(p)] == per[static_cast<size_t>(p)].size(), "host request ", requests_ + 1,
                  ": MPI rank ", p, " sent ", per[static_cast<size_t>(p)].size(), " micro-batches but its replicas own ",
                  next[static_cast<size_t>(p)], " of the job's ", total,
                  ": every process's loader must be sharded as the device program is (IpuOptions::shard())");
}

void ExecutionProgram::exchangeUpdate(std::vector<std::vector<MicroBatchRun>>& mbs, std::exception_ptr error,
                                      int64_t& overflows, std::vector<std::vector<std::vector<Tensor>>>& remote) {
  ProcessGroup& g = *o_.processes;
  ByteWriter w;
  if (!error) {
    for (int64_t r = rLo_; r < rLo_ + Rl_; ++r)
      for (const MicroBatchRun& m : mbs[static_cast<size_t>(r)]) {
        w.put<double>(m.loss);
        w.putTensor(m.output);
      }
    if (training_) {
      w.put<int64_t>(overflows);
      for (int64_t r = rLo_; r < rLo_ + Rl_; ++r)
        for (int64_t s = 0; s < P_; ++s)
          for (const Variable& p : replicaParams(r)) w.putTensor(ipu(r, s).sink.grad(p));
    }
  }
  const std::string what = std::string(training_ ? "the gradients of update " : "the outputs of inference request ") +
                           std::to_string(exchanges_++);
  const std::vector<std::string> got = gatherOrRaise(g, what, error, std::move(w.bytes()));
  remote.assign(static_cast<size_t>(R_), {});
  int64_t total = overflows;
  for (int p = 0; p < g.size(); ++p) {
    if (p == g.rank()) continue;
    const RequestShard sh = RequestShard::of(p, g.size(), R_, shard_.perReplica, shard_.perRequest);
    ByteReader r(got[static_cast<size_t>(p)], what, kPayload);
    for (int64_t q = sh.first; q < sh.first + sh.count; ++q)
      for (MicroBatchRun& m : mbs[static_cast<size_t>(q)]) {
        m.loss = r.get<double>();
        m.output = r.getTensor();
      }
    if (training_) {
      total += r.get<int64_t>();
      for (int64_t q = sh.first; q < sh.first + sh.count; ++q) {
        auto& stages = remote[static_cast<size_t>(q)];
        stages.assign(static_cast<size_t>(P_), std::vector<Tensor>(params_.front().size()));
        for (int64_t s = 0; s < P_; ++s)
          for (size_t i = 0; i < params_.front().size(); ++i) stages[static_cast<size_t>(s)][i] = r.getTensor();
      }
    }
    r.expectEnd();
  }
  overflows = total;
}

void ExecutionProgram::syncReplicas() {
  for (int64_t r = 0; r < Rl_; ++r)
    for (size_t i = 0; i < masterParams_.size(); ++i) {
      const Tensor& src = std::as_const(masterParams_[i]).value();
      Tensor& dst = params_[static_cast<size_t>(r)][i].value();
      if (dst.storageId() == src.storageId()) continue;  // replica 0 in fp32 is the master
      std::memcpy(dst.raw(), src.raw(), src.nbytes());
      if (fp16_) roundTensorToHalf(dst, Rounding::Half);
    }
}

void ExecutionProgram::recordOnEveryIpu(TaskKind kind, int64_t iteration, double start, double end) {
  for (int64_t r = rLo_; r < rLo_ + Rl_; ++r)
    for (int64_t s = 0; s < P_; ++s) {
      TaskRecord t;
      t.kind = kind;
      t.ipu = simulated_ ? (r - rLo_) * P_ + s : 0;
      t.replica = r;
      t.stage = s;
      t.request = requests_;
      t.iteration = iteration;
      t.cpu = {start, end - start};
      recordTask(t);
      if (!simulated_) return;  // the CPU device has one track
    }
}

int64_t ExecutionProgram::microBatchesToRun(int64_t microBatches) const {
  const int64_t unit = training_ ? R_ * G_ : R_;  // micro-batches per update / per inference iteration
  if (microBatches % unit == 0) return microBatches;
  return o_.partialRequest == PartialRequest::Drop ? microBatches / unit * unit : (microBatches + unit - 1) / unit * unit;
}

int64_t ExecutionProgram::updatesFor(int64_t microBatches) const {
  return training_ ? microBatchesToRun(microBatches) / (R_ * G_) : 0;
}

RunResult ExecutionProgram::run(const Batch& request, const UpdateHooks& hooks) {
  try {
    return runRequest(request, hooks);
  } catch (...) {
    if (!record_.captured && capturing_) {
      // A first request that failed leaves no half-captured record: the next one captures afresh.
      record_.ops.clear();
      for (StageRecord& st : record_.stages) {
        st.parameters = st.parameterTensors = st.forwardOps = st.backwardOps = 0;
        st.forwardFlops = st.backwardFlops = st.savedBytes = st.activationBytes = 0;
      }
      for (BlockRecord& b : record_.blocks) b.parameters = b.parameterTensors = b.outputBytes = 0;
    }
    capturing_ = false;
    throw;
  }
}

RunResult ExecutionProgram::runRequest(const Batch& request, const UpdateHooks& hooks) {
  if (!started_) {
    t0_ = std::chrono::steady_clock::now();
    started_ = true;
  }
  hooks_ = hooks;
  RunResult result;
  const double start = now();
  const std::string req = "host request " + std::to_string(requests_ + 1);
  // This process's micro-batches (every one of the request without processes; with them, its replicas' share,
  // possibly none).
  std::vector<MicroBatchRun> mine;
  std::exception_ptr prepError;
  try {
    const bool none = distributed() && request.numGraphs == 0;
    GNN_CHECK_ARG(none || (request.numGraphs > 0 && request.numGraphs % record_.numGraphs == 0 &&
                           request.numNodes == request.numGraphs / record_.numGraphs * record_.numNodes),
                  req, ": ", request.numNodes, " nodes in ", request.numGraphs,
                  " graph slots is not a whole number of the compiled micro-batch (", record_.numNodes, " nodes, ",
                  record_.numGraphs, " graph slots)");
    const int64_t localK = none ? 0 : request.numGraphs / record_.numGraphs;
    for (int64_t j = 0; j < localK; ++j) {
      MicroBatchRun mb;
      mb.index = j;
      mb.batch = localK == 1 ? request : microBatch(request, j, localK);
      record_.checkShapes(mb.batch, "micro-batch " + std::to_string(j) + " of " + req);
      mb.weight = loss_.weight ? loss_.weight(mb.batch) : labelCount(mb.batch.yMask, static_cast<double>(mb.batch.numRealGraphs));
      GNN_CHECK_ARG(std::isfinite(mb.weight) && mb.weight >= 0, "loss weight of micro-batch ", j, " is ", mb.weight);
      mb.samples = mb.batch.numRealGraphs;
      mine.push_back(std::move(mb));
    }
  } catch (...) {
    if (!distributed()) throw;
    prepError = std::current_exception();
  }
  // Micro-batch m of the request: device iteration m / (R·G), replica (m / G) % R, micro-batch m % G.
  std::vector<MicroBatchRun> all;
  if (distributed()) {
    exchangeRequest(mine, prepError, all);  // every process's weights; this process's batches in place
  } else {
    all = std::move(mine);
  }
  const int64_t K = static_cast<int64_t>(all.size());
  const int64_t unit = training_ ? R_ * G_ : R_;
  const int64_t full = training_ ? o_.microBatchesPerRequest() : R_ * o_.deviceIterations;
  GNN_CHECK_ARG(K <= full, req, " holds ", K, " micro-batches but one request is micro-batch x deviceIterations (",
                o_.deviceIterations, ") x replicationFactor (", R_, ")",
                training_ ? " x gradientAccumulation (" + std::to_string(G_) + ")" : std::string(), " = ", full,
                " micro-batches");
  const int64_t runCount = microBatchesToRun(K);  // real or padding
  result.droppedMicroBatches = std::max<int64_t>(0, K - runCount);
  result.paddedMicroBatches = std::max<int64_t>(0, runCount - K);
  all.resize(static_cast<size_t>(runCount));
  for (int64_t m = K; m < runCount; ++m) {
    // Weight 0: it runs like any other and changes nothing.
    MicroBatchRun& mb = all[static_cast<size_t>(m)];
    mb.index = m;
    mb.padding = true;
  }
  // What crosses the host link: with --eight-bit-io the integer features as uint8 (checked, widened again on
  // the device); with fp16 the float inputs as half (rounded here, in copies: the caller's request is left
  // as it was).
  int64_t linkBytes = bytesOf(request);
  if (o_.eightBitIo || fp16_) {
    linkBytes = 0;
    for (int64_t m = 0; m < K; ++m) {
      Batch& b = all[static_cast<size_t>(m)].batch;
      if (b.numGraphs == 0) continue;  // another process's
      if (o_.eightBitIo) {
        linkBytes += narrowIntegerFeatures(b, m);
      } else {
        linkBytes += bytesOf(b);
      }
      if (fp16_)
        for (const BatchField& f : batchFields()) {
          Tensor& t = b.*f.inBatch;
          if (!t.defined() || (t.dtype() != DType::F32 && t.dtype() != DType::F64)) continue;
          t = t.clone();
          if (!f.target) {
            roundTensorToHalf(t, Rounding::Half);
            linkBytes -= streamedBytes(t) / 2;  // sent as half
          }
        }
    }
  }
  {
    // Padding micro-batches this process runs: a copy of its last real one (the compiled shapes when it has none).
    const Batch* last = &shapes_;
    for (int64_t m = 0; m < K; ++m)
      if (all[static_cast<size_t>(m)].batch.numGraphs > 0) last = &all[static_cast<size_t>(m)].batch;
    for (int64_t m = K; m < runCount; ++m)
      if (local(shard_.replicaOf(m))) all[static_cast<size_t>(m)].batch = *last;
  }
  {
    TaskRecord h;
    h.kind = TaskKind::HostToDevice;
    h.ipu = static_cast<int64_t>(trace_.tracks().size()) - 1;
    h.request = requests_;
    h.bytes = linkBytes;
    h.cpu = {start, now() - start};
    recordTask(h);
  }
  capturing_ = !record_.captured;
  // A profiler on the calling thread sees every task's ops (serialised when tasks run on several workers).
  SharedObserver shared;
  struct ObserverReset {
    std::vector<std::unique_ptr<Ipu>>& ipus;
    ~ObserverReset() {
      for (auto& ip : ipus) ip->ctx.setObserver(nullptr);
    }
  } resetObservers{ipus_};
  if (OpObserver* caller = ExecutionContext::current().observer()) {
    shared.target = caller;
    for (auto& ip : ipus_) ip->ctx.setObserver(workers_ > 1 ? static_cast<OpObserver*>(&shared) : caller);
  }
  const uint64_t seed = ExecutionContext::current().randomKey().seed;
  const uint64_t callerStep = ExecutionContext::current().randomKey().step;
  const int64_t iterations = runCount / unit;
  std::vector<MicroBatchRun> done;
  for (int64_t d = 0; d < iterations; ++d) {
    // Per replica, this iteration's micro-batches.
    const int64_t per = training_ ? G_ : 1;
    std::vector<std::vector<MicroBatchRun>> mbs(static_cast<size_t>(R_));
    for (int64_t r = 0; r < R_; ++r)
      for (int64_t k = 0; k < per; ++k)
        mbs[static_cast<size_t>(r)].push_back(std::move(all[static_cast<size_t>(d * unit + r * per + k)]));
    if (!training_) {
      // Inference: the whole request is one pass; collect every iteration's micro-batches per replica first.
      for (int64_t r = 0; r < R_; ++r)
        for (auto& m : mbs[static_cast<size_t>(r)]) done.push_back(std::move(m));
      continue;
    }
    const int64_t step = opt_->stepCount();
    if (hooks.beforeUpdate) hooks.beforeUpdate(step);
    runUpdate(mbs, d, step, seed, result);
    double W = 0, lossSum = 0;
    int64_t real = 0, samples = 0;
    double single = NAN;
    for (auto& rep : mbs)
      for (auto& m : rep) {
        if (m.padding) continue;
        W += m.weight;
        ++real;
        single = m.loss;
        samples += m.samples;
      }
    for (auto& rep : mbs)
      for (auto& m : rep)
        if (!m.padding) lossSum += (W > 0 ? m.weight / W : 1.0 / static_cast<double>(real)) * m.loss;
    const double updateLoss = real == 1 ? single : lossSum;
    result.microBatches += real;
    result.samples += samples;
    for (int64_t r = 0; r < R_; ++r)
      for (auto& m : mbs[static_cast<size_t>(r)]) {
        m.batch = Batch();  // free the micro-batch; keep the loss and output
        done.push_back(std::move(m));
      }
    if (hooks.afterUpdate) hooks.afterUpdate(updateLoss, samples);
  }
  if (!training_ && !done.empty()) {
    // Inference: replica r runs micro-batches d·R + r for every device iteration d, as one pipelined pass.
    std::vector<std::vector<MicroBatchRun>> mbs(static_cast<size_t>(R_));
    for (auto& m : done) mbs[static_cast<size_t>(m.index % R_)].push_back(std::move(m));
    done.clear();
    runUpdate(mbs, 0, static_cast<int64_t>(callerStep), seed, result);
    for (auto& rep : mbs)
      for (auto& m : rep) {
        if (!m.padding) {
          ++result.microBatches;
          result.samples += m.samples;
        }
        m.batch = Batch();
        done.push_back(std::move(m));
      }
    std::sort(done.begin(), done.end(), [](const MicroBatchRun& a, const MicroBatchRun& b) { return a.index < b.index; });
  }
  if (capturing_) {
    record_.captured = true;
    capturing_ = false;
  }

  // Outputs per the output mode. Step j of a replica: j = iteration·G + micro-batch (inference: the iteration).
  const OutputMode mode = o_.resolvedOutputMode(training_);
  std::vector<MicroBatchOutput> outs;
  int64_t lastStep = -1;
  for (const auto& m : done) {
    if (m.padding) continue;
    MicroBatchOutput o;
    const int64_t per = training_ ? G_ : 1;
    o.iteration = m.index / unit;
    o.replica = (m.index / per) % R_;
    o.microBatch = m.index % per;
    o.loss = m.loss;
    o.weight = m.weight;
    o.output = m.output;
    lastStep = std::max(lastStep, o.iteration * per + o.microBatch);
    outs.push_back(std::move(o));
  }
  const int64_t perStep = training_ ? G_ : 1;
  auto stepOf = [&](const MicroBatchOutput& o) { return o.iteration * perStep + o.microBatch; };
  if (mode == OutputMode::All) {
    result.outputs = std::move(outs);
  } else if (mode == OutputMode::Final) {
    for (auto& o : outs)
      if (stepOf(o) == lastStep) result.outputs.push_back(std::move(o));
  } else if (mode == OutputMode::EveryN) {
    for (auto& o : outs)
      if ((stepOf(o) + 1) % o_.outputPeriod == 0) result.outputs.push_back(std::move(o));
  } else if (mode == OutputMode::Sum) {
    std::vector<MicroBatchOutput> sums(static_cast<size_t>(R_));
    for (int64_t r = 0; r < R_; ++r) sums[static_cast<size_t>(r)].replica = r;
    for (const auto& o : outs) {
      MicroBatchOutput& s = sums[static_cast<size_t>(o.replica)];
      s.loss += o.loss;
      s.weight += o.weight;
      s.output = s.output.defined() ? sumInto(s.output, o.output) : o.output.clone();
      s.iteration = o.iteration;
      s.microBatch = o.microBatch;
    }
    for (auto& s : sums)
      if (s.output.defined()) result.outputs.push_back(std::move(s));
  }
  {
    TaskRecord h;
    h.kind = TaskKind::DeviceToHost;
    h.ipu = static_cast<int64_t>(trace_.tracks().size()) - 1;
    h.request = requests_;
    for (const auto& o : result.outputs)
      if (o.output.defined()) h.bytes += static_cast<int64_t>(o.output.nbytes());
    const double t = now();
    h.cpu = {t, 0};
    recordTask(h);
  }
  result.seconds = now() - start;
  ++requests_;
  return result;
}

std::string ExecutionProgram::stageTable() const {
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "%-5s %-28s %9s %11s %12s %12s %10s %7s\n", "stage", "blocks", "ops f/b", "parameters",
                "GFLOP/mb", "saved MB/mb", "ms/mb", "stash");
  s << line;
  for (size_t i = 0; i < record_.stages.size(); ++i) {
    const StageRecord& st = record_.stages[i];
    const double ms = (fwdCount_[i] ? fwdSeconds_[i] / static_cast<double>(fwdCount_[i]) : 0.0) +
                      (bwdCount_[i] ? bwdSeconds_[i] / static_cast<double>(bwdCount_[i]) : 0.0);
    const std::string ops = std::to_string(st.forwardOps) + "/" + std::to_string(st.backwardOps);
    std::snprintf(line, sizeof line, "%-5zu %-28s %9s %11lld %12.4f %12.2f %10.2f %7lld\n", i, st.name.c_str(),
                  ops.c_str(), static_cast<long long>(st.parameters),
                  static_cast<double>(st.forwardFlops + st.backwardFlops) * 1e-9,
                  static_cast<double>(st.savedBytes) / 1e6, ms * 1e3, static_cast<long long>(st.maxStashed));
    s << line;
  }
  return s.str();
}

}  // namespace gnn
