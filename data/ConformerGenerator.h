// ConformerGenerator: 3D coordinates for molecules without any, by RDKit's ETKDG (v3) distance geometry
// (Riniker & Landrum, J. Chem. Inf. Model. 55, 2562 (2015); Wang et al., JCIM 60, 2044 (2020)) with a fixed
// random seed, so the same molecule always gets the same coordinates on any thread.
//
//   ConformerGenerator gen({.seed = 42});
//   std::vector<float> pos; std::string why;
//   if (!gen.generate(mol, pos, why)) report(why);
#pragma once
#include <string>
#include <vector>

namespace RDKit {
class ROMol;
}

namespace gnn {

class ConformerGenerator {
 public:
  struct Options {
    int seed = 42;
    /// Embedding attempts before giving up (RDKit's maxIterations; 0 = RDKit's default, 10 x atoms).
    unsigned maxIterations = 0;
    /// Molecules with more heavy atoms are refused before embedding (0: no limit). ETKDG's time grows steeply
    /// with size and RDKit 2022.09 has no time limit for it; on this machine (2 cores, one busy) molecules of
    /// about 100 heavy atoms took 1 to 4.6 s, a 150-carbon chain 12 s only to fail.
    int maxHeavyAtoms = 100;
  };
  ConformerGenerator() = default;
  explicit ConformerGenerator(Options options) : options_(options) {}
  const Options& options() const { return options_; }

  /// Embeds a copy of `mol` with hydrogens added (ETKDG needs them for sensible geometry) and returns the
  /// coordinates of mol's own atoms, [N * 3] in Angstrom. False with `error` set when embedding fails.
  bool generate(const RDKit::ROMol& mol, std::vector<float>& pos, std::string& error) const;

 private:
  Options options_;
};

}  // namespace gnn
