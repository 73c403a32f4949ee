// MoleculeSource: a streaming reader of molecules (PCQM4Mv2 raw layout, MoleculeNet CSV, .smi, SDF, XYZ),
// all reading .gz transparently. Readers hold one record at a time, so memory does not grow with the file.
//
//   auto src = openMoleculeSource({.path = "HIV.csv.gz", .targetColumns = {"HIV_active"}});
//   MoleculeRecord r;
//   while (src->next(r)) { ... }
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/MoleculeRecord.h"

namespace gnn {

class MoleculeSource {
 public:
  virtual ~MoleculeSource() = default;
  /// Next molecule, false at the end. Throws InputError for a file that cannot be read on (truncated gzip,
  /// missing header column); a problem confined to one molecule goes to record.error instead.
  virtual bool next(MoleculeRecord& record) = 0;
  /// Names of the targets that fill record.y, in order.
  virtual const std::vector<std::string>& targetNames() const = 0;
  /// Name of the format ("pcqm4mv2", "csv", "smi", "sdf", "xyz").
  virtual std::string format() const = 0;
};

struct MoleculeSourceOptions {
  std::string path;
  /// "pcqm4mv2", "csv", "smi", "sdf", "xyz", or empty: guessed from the path (a directory or data.csv.gz
  /// under raw/ -> pcqm4mv2; .csv, .smi, .sdf, .xyz, each optionally .gz).
  std::string format;
  /// CSV: the SMILES column (matched case-insensitively); PCQM4Mv2 always uses "smiles".
  std::string smilesColumn = "smiles";
  /// CSV columns, SDF properties or XYZ comment keys to read as targets (PCQM4Mv2: homolumogap by default).
  std::vector<std::string> targetColumns;
  /// CSV: a column assigning each molecule to a split, with values train, valid (or val, validation) or
  /// test in any case; it fills record.split. Another value makes the record an error (the molecule is
  /// rejected, the build goes on). Empty: no split column. Other formats refuse it.
  std::string splitColumn;
};

/// The format openMoleculeSource would pick for this path (see MoleculeSourceOptions::format).
std::string guessMoleculeFormat(const std::string& path);
/// Opens a reader; throws InputError naming the file when it cannot be opened or its header is unusable.
std::unique_ptr<MoleculeSource> openMoleculeSource(const MoleculeSourceOptions& options);

/// Parses a split column's field: "train", "test", or "valid" / "val" / "validation" (any case, spaces
/// around ignored) -> "train", "test", "valid"; false for anything else.
bool parseSplitName(std::string_view field, std::string& split);

/// Parses a label field: empty, "nan", "NA", "None" -> NaN (missing); false for text that is not a number or
/// does not fit a finite float32 ("inf", "1e39").
bool parseLabel(std::string_view field, float& value);

}  // namespace gnn
