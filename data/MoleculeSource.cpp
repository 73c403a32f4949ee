#include "data/MoleculeSource.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "data/GzLineReader.h"
#include "data/MoleculeCsvReader.h"
#include "data/Pcqm4mv2Reader.h"
#include "data/SdfReader.h"
#include "data/SmiReader.h"
#include "data/XyzReader.h"

namespace gnn {

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::string guessMoleculeFormat(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_directory(path)) return "pcqm4mv2";
  std::string p = path;
  for (char& c : p) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (endsWith(p, ".gz")) p.resize(p.size() - 3);
  if (endsWith(p, "raw/data.csv")) return "pcqm4mv2";
  for (const char* ext : {"csv", "smi", "sdf", "xyz"})
    if (endsWith(p, std::string(".") + ext)) return ext;
  if (endsWith(p, ".smiles") || endsWith(p, ".txt")) return "smi";
  if (endsWith(p, ".mol")) return "sdf";
  return "";
}

std::unique_ptr<MoleculeSource> openMoleculeSource(const MoleculeSourceOptions& o) {
  const std::string format = o.format.empty() ? guessMoleculeFormat(o.path) : o.format;
  if (!o.splitColumn.empty() && format != "csv")
    throw InputError(o.path, 0,
                     format == "pcqm4mv2" ? "a split column applies to CSV input; PCQM4Mv2's split comes from its split/ folder"
                                          : "a split column applies to CSV input, not " +
                                                (format.empty() ? std::string("this file") : format));
  if (format == "pcqm4mv2") {
    if (!o.targetColumns.empty() && !(o.targetColumns.size() == 1 && o.targetColumns[0] == "homolumogap"))
      throw InputError(o.path, 0, "PCQM4Mv2 has one target, homolumogap");
    return std::make_unique<Pcqm4mv2Reader>(o.path);
  }
  if (format == "csv")
    return std::make_unique<MoleculeCsvReader>(o.path, o.smilesColumn, o.targetColumns, "", o.splitColumn);
  if (format == "smi") return std::make_unique<SmiReader>(o.path);
  if (format == "sdf") return std::make_unique<SdfReader>(o.path, o.targetColumns);
  if (format == "xyz") return std::make_unique<XyzReader>(o.path, o.targetColumns);
  throw InputError(o.path, 0,
                   format.empty() ? "cannot tell the format from the file name: pass --format "
                                    "pcqm4mv2|csv|smi|sdf|xyz"
                                  : "unknown format '" + format + "' (pcqm4mv2, csv, smi, sdf, xyz)");
}

bool parseSplitName(std::string_view field, std::string& split) {
  while (!field.empty() && std::isspace(static_cast<unsigned char>(field.front()))) field.remove_prefix(1);
  while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back()))) field.remove_suffix(1);
  std::string v(field);
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "train" || v == "test") {
    split = v;
    return true;
  }
  if (v == "valid" || v == "val" || v == "validation") {
    split = "valid";
    return true;
  }
  return false;
}

bool parseLabel(std::string_view field, float& value) {
  while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\t' || field.back() == '\r')) field.remove_suffix(1);
  if (field.empty() || field == "nan" || field == "NaN" || field == "NA" || field == "None" || field == "N/A") {
    value = std::nanf("");
    return true;
  }
  std::string s(field);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  value = static_cast<float>(v);
  // Not a number, or a number float32 cannot hold (inf, 1e39): a bad label, not a missing one.
  if (end != s.c_str() + s.size() || !std::isfinite(value)) {
    value = std::nanf("");
    return false;
  }
  return true;
}

}  // namespace gnn
