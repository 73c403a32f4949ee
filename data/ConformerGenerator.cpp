#include "data/ConformerGenerator.h"

#include <GraphMol/DistGeomHelpers/Embedder.h>
#include <GraphMol/GraphMol.h>
#include <GraphMol/MolOps.h>

namespace gnn {

bool ConformerGenerator::generate(const RDKit::ROMol& mol, std::vector<float>& pos, std::string& error) const {
  pos.clear();
  const unsigned n = mol.getNumAtoms();
  if (n == 0) return true;
  if (options_.maxHeavyAtoms > 0 && static_cast<int>(mol.getNumHeavyAtoms()) > options_.maxHeavyAtoms) {
    error = std::to_string(mol.getNumHeavyAtoms()) + " heavy atoms, more than --max-conformer-atoms " +
            std::to_string(options_.maxHeavyAtoms) + " for a 3D embedding (ETKDG's time grows steeply with size)";
    return false;
  }
  try {
    RDKit::RWMol withHs(mol);
    // addHs appends the new hydrogens after the existing atoms, so atoms 0..n-1 keep their indices.
    RDKit::MolOps::addHs(withHs);
    RDKit::DGeomHelpers::EmbedParameters params = RDKit::DGeomHelpers::ETKDGv3;
    params.randomSeed = options_.seed;
    params.numThreads = 1;  // we parallelise across molecules
    if (options_.maxIterations) params.maxIterations = options_.maxIterations;
    const int id = RDKit::DGeomHelpers::EmbedMolecule(withHs, params);
    if (id < 0) {
      error = "ETKDG embedding failed (seed " + std::to_string(options_.seed) + ")";
      return false;
    }
    const RDKit::Conformer& conf = withHs.getConformer(id);
    pos.resize(static_cast<size_t>(n) * 3);
    for (unsigned i = 0; i < n; ++i) {
      const RDGeom::Point3D& p = conf.getAtomPos(i);
      pos[3 * i] = static_cast<float>(p.x);
      pos[3 * i + 1] = static_cast<float>(p.y);
      pos[3 * i + 2] = static_cast<float>(p.z);
    }
    return true;
  } catch (const std::exception& e) {
    error = std::string("ETKDG embedding failed: ") + e.what();
  } catch (...) {
    error = "ETKDG embedding failed";
  }
  pos.clear();
  return false;
}

}  // namespace gnn
