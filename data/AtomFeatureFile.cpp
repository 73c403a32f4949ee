#include "data/AtomFeatureFile.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "data/CsvRow.h"
#include "data/GzLineReader.h"
#include "data/NpzFile.h"

namespace gnn {

namespace {

// The molecule or atom column of a CSV line: a non-negative integer.
int64_t parseIndex(const std::string& field, const char* what, const std::string& path, int64_t line) {
  double v;
  if (!csvNumber(field, v) || !std::isfinite(v) || v < 0 || v != std::floor(v) || v > 1e15)
    throw InputError(path, line, std::string(what) + " is '" + field + "', not a 0-based index (columns: molecule," +
                                     "atom,f1,...,fk)");
  return static_cast<int64_t>(v);
}

AtomFeatureFile readCsv(const std::string& path) {
  AtomFeatureFile f;
  f.path = path;
  f.ptr = {0};
  GzLineReader in(path);
  CsvRow row;
  std::string_view line;
  bool first = true;
  int64_t lastMolecule = -1, lastAtom = -1, fields = 0;
  while (in.next(line)) {
    if (!row.parse(line)) throw InputError(path, in.lineNumber(), "a quoted field is not closed on its line");
    if (first) {
      first = false;
      fields = static_cast<int64_t>(row.size());
      if (fields < 3)
        throw InputError(path, in.lineNumber(), std::to_string(fields) + " columns; an atom's line is molecule,atom," +
                                                    "f1,...,fk (at least one feature)");
      f.width = fields - 2;
      bool numbers = true;
      for (size_t k = 0; k < row.size(); ++k)
        if (double x; !csvNumber(row[k], x)) numbers = false;
      if (!numbers) {  // a header
        f.header = true;
        f.names.assign(row.fields().begin() + 2, row.fields().end());
        continue;
      }
    }
    const int64_t at = in.lineNumber();
    if (static_cast<int64_t>(row.size()) != fields)
      throw InputError(path, at, std::to_string(row.size()) + " columns, but the first line has " +
                                     std::to_string(fields) + " (molecule,atom and the same features on every line)");
    const int64_t molecule = parseIndex(row[0], "the molecule", path, at), atom = parseIndex(row[1], "the atom", path, at);
    if (molecule < lastMolecule)
      throw InputError(path, at, "molecule " + std::to_string(molecule) + " after molecule " +
                                     std::to_string(lastMolecule) + ": molecules must come in the input's order");
    const int64_t want = molecule == lastMolecule ? lastAtom + 1 : 0;
    if (atom != want)
      throw InputError(path, at, "molecule " + std::to_string(molecule) + ", atom " + std::to_string(atom) +
                                     ": expected atom " + std::to_string(want) +
                                     " (each molecule's atoms on consecutive lines, from 0, in RDKit's order)");
    // A new molecule's row count starts at 0; molecules without lines before it have no atoms.
    if (molecule != lastMolecule)
      while (static_cast<int64_t>(f.ptr.size()) < molecule + 2) f.ptr.push_back(f.ptr.back());
    for (int64_t k = 2; k < fields; ++k) {
      double v;
      if (!csvNumber(row[static_cast<size_t>(k)], v))
        throw InputError(path, at, "column " + std::to_string(k + 1) + " is '" + row[static_cast<size_t>(k)] +
                                       "', not a number (an empty field, nan or inf is a missing value)");
      f.values.push_back(v);
    }
    ++f.ptr.back();
    lastMolecule = molecule;
    lastAtom = atom;
  }
  if (lastMolecule < 0) throw std::runtime_error(path + ": no atom lines (molecule,atom,f1,...,fk per atom)");
  f.molecules = static_cast<int64_t>(f.ptr.size()) - 1;
  if (!f.header)
    for (int64_t k = 0; k < f.width; ++k) f.names.push_back("file_" + std::to_string(k));
  return f;
}

AtomFeatureFile readNpz(const std::string& path) {
  NpzFile npz(path);
  const std::string layout = " (per-atom features: float 'features' [total atoms, width] and int64 'atom_ptr' "
                             "[molecules + 1], molecule m's atoms being rows atom_ptr[m] .. atom_ptr[m + 1] - 1)";
  if (!npz.has("features")) throw std::runtime_error(path + ": no array 'features'" + layout);
  if (!npz.has("atom_ptr")) throw std::runtime_error(path + ": no array 'atom_ptr'" + layout);
  const NpzFile::Array& a = npz.get("features");
  const bool f4 = a.descr == "<f4", f8 = a.descr == "<f8";
  if (!(f4 || f8) || a.shape.size() != 2)
    throw std::runtime_error(path + ": 'features' is " + a.descr + " of rank " + std::to_string(a.shape.size()) +
                             "; expected float32 or float64 [total atoms, width]" + layout);
  const NpzFile::Array& p = npz.get("atom_ptr");
  if (p.descr != "<i8" || p.shape.size() != 1 || p.shape[0] < 1)
    throw std::runtime_error(path + ": 'atom_ptr' is " + p.descr + " of shape [" +
                             (p.shape.empty() ? std::string() : std::to_string(p.shape[0])) +
                             (p.shape.size() > 1 ? ", ...]" : "]") + "; expected int64 [molecules + 1]" + layout);
  AtomFeatureFile f;
  f.path = path;
  f.width = a.shape[1];
  if (f.width < 1) throw std::runtime_error(path + ": 'features' has no columns");
  f.molecules = p.shape[0] - 1;
  f.ptr.resize(static_cast<size_t>(p.shape[0]));
  std::memcpy(f.ptr.data(), p.data, f.ptr.size() * sizeof(int64_t));
  if (f.ptr[0] != 0) throw std::runtime_error(path + ": atom_ptr[0] is " + std::to_string(f.ptr[0]) + ", expected 0" + layout);
  for (size_t m = 1; m < f.ptr.size(); ++m)
    if (f.ptr[m] < f.ptr[m - 1])
      throw std::runtime_error(path + ": atom_ptr decreases at molecule " + std::to_string(m - 1) + " (" +
                               std::to_string(f.ptr[m - 1]) + " then " + std::to_string(f.ptr[m]) + ")" + layout);
  if (f.ptr.back() != a.shape[0])
    throw std::runtime_error(path + ": atom_ptr ends at " + std::to_string(f.ptr.back()) + " but 'features' has " +
                             std::to_string(a.shape[0]) + " rows" + layout);
  f.values.resize(static_cast<size_t>(a.shape[0] * f.width));
  if (f8) {
    std::memcpy(f.values.data(), a.data, f.values.size() * sizeof(double));
  } else {
    for (size_t i = 0; i < f.values.size(); ++i) {
      float v;
      std::memcpy(&v, a.data + i * sizeof(float), sizeof v);
      f.values[i] = v;
    }
  }
  for (int64_t k = 0; k < f.width; ++k) f.names.push_back("file_" + std::to_string(k));
  return f;
}

}  // namespace

AtomFeatureFile AtomFeatureFile::read(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw std::runtime_error(path + ": no such file");
  return std::filesystem::path(path).extension() == ".npz" ? readNpz(path) : readCsv(path);
}

}  // namespace gnn
