#include "app/TransferInit.h"

#include <filesystem>
#include <map>
#include <set>

#include "gnn/io/Checkpoint.h"

namespace gnn::app {

std::vector<std::string> moleculeHeadModules(const MoleculeModelSpec& spec) {
  if (spec.isDmpnn()) return {"ffn"};               // models/Dmpnn.h: the FFN reads the aggregated atoms
  if (spec.isSchNet()) return {"lin1", "lin2"};     // models/SchNet.h: the atomwise head before the sum
  return {"head"};                                  // GraphModel, Graphormer: one Linear
}

bool isHeadParameter(const MoleculeModelSpec& spec, const std::string& name) {
  for (const std::string& m : moleculeHeadModules(spec))
    if (name.rfind(m + ".", 0) == 0) return true;
  return false;
}

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string shapeAndType(const Tensor& t) { return shapeString(t.shape()) + " " + dtypeName(t.dtype()); }

}  // namespace

EncoderInit initEncoderFrom(const std::string& path, BlockModel& model, const MoleculeModelSpec& spec) {
  const Checkpoint ck = Checkpoint::load(path);
  const std::string flag = "--init-from " + path;
  if (!ck.meta.contains("config") || !ck.meta["config"].is_object())
    throw UsageError(flag + ": its metadata holds no run configuration ('config'): give a checkpoint that "
                     "molecule_property, pcqm4m_graphormer or qm7_schnet wrote with --save or --checkpoint-dir");
  MoleculeModelSpec theirs;
  try {
    theirs = MoleculeModelSpec::fromConfig(ck.meta["config"]);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(path + ": its configuration is malformed; the checkpoint cannot be used");
  }
  const std::string ours = "this run: " + spec.describe(), source = path + ": " + theirs.describe();
  if (theirs.model != spec.model)
    throw UsageError(flag + " holds a --model " + theirs.model + " encoder (" + theirs.describe() +
                     "), but this run builds --model " + spec.model + "; give the checkpoint's --model and widths");
  EncoderInit init;
  // The weights `predict` applies: the best validation epoch's, when the run kept them.
  const auto named = model.namedParameters();
  init.weights =
      !named.empty() && ck.findParameter("best", named.front().first, named.front().second.shape()) ? "best" : "model";
  const std::string prefix = init.weights + ".";
  std::set<std::string> encoder;
  for (const auto& [name, v] : named) {
    if (isHeadParameter(spec, name)) continue;
    encoder.insert(name);
    const Tensor* t = ck.findParameter(init.weights, name, v.shape());
    if (!t)
      throw UsageError(flag + ": this run's encoder has parameter '" + name + "' " + shapeAndType(v.value()) +
                       ", which the checkpoint lacks (" + source + "; " + ours + ")");
    if (t->shape() != v.shape() || t->dtype() != v.dtype())
      throw UsageError(flag + ": parameter '" + name + "' is " + shapeAndType(*t) + " in " + path +
                       " but " + shapeAndType(v.value()) + " in this run's encoder (" + source + "; " + ours +
                       "); give the checkpoint's widths");
    ck.requireFinite(prefix + name);
  }
  // An encoder parameter the checkpoint has and this model lacks (more layers there) would be dropped unseen.
  for (const auto& [stored, t] : ck.tensors) {
    const std::string key = ck.currentName(stored);
    if (key.rfind(prefix, 0) != 0) continue;
    const std::string name = key.substr(prefix.size());
    if (!isHeadParameter(spec, name) && !encoder.count(name))
      throw UsageError(flag + ": its encoder parameter '" + name + "' " + shapeAndType(t) +
                       " has no place in this run's model (" + source + "; " + ours + ")");
  }
  // Copied once every parameter passed: a refused checkpoint leaves the model as it was.
  for (const auto& [name, v] : named) {
    if (!encoder.count(name)) continue;
    Variable var = v;
    var.value() = ck.findParameter(init.weights, name, v.shape())->clone();
    ++init.parameters;
    init.elements += var.value().numel();
  }
  return init;
}

std::vector<Variable> freezeEncoder(BlockModel& model, const MoleculeModelSpec& spec) {
  std::vector<Variable> head;
  for (const auto& [name, v] : model.namedParameters()) {
    Variable var = v;
    if (isHeadParameter(spec, name))
      head.push_back(var);
    else
      var.setRequiresGrad(false);
  }
  GNN_ASSERT(!head.empty(), "freezeEncoder: ", spec.model, " has no parameter under ",
             joined(moleculeHeadModules(spec)));
  return head;
}

void TransferFlags::addTo(po::options_description& flags) {
  flags.add_options()(
      "init-from", po::value(&initFrom)->value_name("CKPT"),
      "transfer learning: start the encoder (every parameter but the prediction head's) from the checkpoint of "
      "another run of the same --model and widths (its best validation epoch's weights when it kept them); the "
      "head starts fresh, so the targets and the task may differ")(
      "freeze-encoder", po::bool_switch(&freezeEncoder),
      "with --init-from: train the head only (the encoder's parameters get no gradient and no update)");
}

void TransferFlags::bind(RunConfig& config) {
  config.bind("init-from", &initFrom);
  config.bind("freeze-encoder", &freezeEncoder);
}

void TransferFlags::check(const Program& prog, const TrainingFlags& training) const {
  if (prog.given("init-from")) {
    if (!training.load.empty() || training.resume)
      throw UsageError(std::string("--init-from and ") + (training.resume ? "--resume" : "--load") +
                       " both set the starting weights: a run that continues already holds the weights --init-from "
                       "gave it (and its checkpoint records init_from and freeze_encoder); drop --init-from");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(initFrom, ec)) throw UsageError("--init-from " + initFrom + ": no such file");
  }
  if (freezeEncoder && !prog.given("init-from") && training.load.empty() && !training.resume)
    throw UsageError("--freeze-encoder needs --init-from CKPT: it keeps a pretrained encoder as it is");
}

std::vector<Variable> TransferFlags::prepare(BlockModel& model, const MoleculeModelSpec& spec, bool continuing,
                                             const Program& prog, bool quiet) const {
  if (freezeEncoder && initFrom.empty())
    throw UsageError("--freeze-encoder needs --init-from CKPT: it keeps a pretrained encoder as it is");
  if (!continuing && !initFrom.empty()) {
    const EncoderInit init = initEncoderFrom(initFrom, model, spec);
    if (!quiet)
      prog.note("encoder (" + std::to_string(init.parameters) + " tensors, " + std::to_string(init.elements) +
                " weights) from " + initFrom + " (its " + (init.weights == "best" ? "best validation epoch's" : "last") +
                " weights); head (" + joined(moleculeHeadModules(spec)) + ") initialised fresh" +
                (freezeEncoder ? ", encoder frozen" : ""));
  }
  if (freezeEncoder) return app::freezeEncoder(model, spec);
  return model.parameters();
}

}  // namespace gnn::app
