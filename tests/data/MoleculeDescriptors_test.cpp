// MoleculeDescriptors against Python RDKit (the same Debian build, 2022.09.3): Morgan bits and counts, the rdkit2d
// list and values, NaN where RDKit cannot compute, rows of NaN for SMILES that do not parse, and the same bits for
// any thread count.
#include "data/MoleculeDescriptors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace gnn {
namespace {

const char* const kAspirin = "CC(=O)Oc1ccccc1C(=O)O";
const char* const kCaffeine = "Cn1cnc2c1c(=O)n(C)c(=O)n2C";

std::vector<double> row(const MoleculeDescriptors& d, const std::string& smiles) {
  std::vector<double> r(static_cast<size_t>(d.width()));
  EXPECT_TRUE(d.computeSmiles(smiles, r.data())) << smiles;
  return r;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

TEST(MoleculeDescriptors, MorganBitsAndCountsAsPythonRdkit) {
  // /usr/bin/python3 -c "from rdkit import Chem; from rdkit.Chem import AllChem
  //   for s in [...]: m = Chem.MolFromSmiles(s); a = AllChem.GetMorganFingerprintAsBitVect(m, 2, nBits=2048);
  //   c = AllChem.GetHashedMorganFingerprint(m, 2, nBits=2048)
  //   print(s, a.GetNumOnBits(), sum(c.GetNonzeroElements().values()))"
  // (rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048) gives the same bits and counts.)
  struct Case {
    const char* smiles;
    int bits, counts;
  };
  const Case cases[] = {{"CCO", 6, 6},           {"c1ccccc1O", 11, 20},
                        {kAspirin, 24, 35},      {kCaffeine, 25, 37},
                        {"[Na+].[Cl-]", 2, 2},   {"OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O", 17, 31}};
  MoleculeDescriptors bits("morgan"), counts("morgan-count");
  ASSERT_EQ(bits.width(), 2048);
  ASSERT_EQ(counts.width(), 2048);
  EXPECT_TRUE(bits.isFingerprint());
  for (const Case& c : cases) {
    std::vector<double> b = row(bits, c.smiles), n = row(counts, c.smiles);
    EXPECT_EQ(sum(b), c.bits) << c.smiles;
    EXPECT_EQ(sum(n), c.counts) << c.smiles;
    for (size_t k = 0; k < b.size(); ++k) {
      ASSERT_TRUE(b[k] == 0 || b[k] == 1) << c.smiles << " bit " << k;
      ASSERT_EQ(b[k] == 1, n[k] > 0) << c.smiles << " bit " << k;  // the counts of the same bits
    }
  }
  // list(AllChem.GetMorganFingerprintAsBitVect(Chem.MolFromSmiles('CCO'), 2, nBits=2048).GetOnBits())
  std::vector<double> ethanol = row(bits, "CCO");
  for (int on : {80, 222, 294, 807, 1057, 1410}) EXPECT_EQ(ethanol[static_cast<size_t>(on)], 1.0) << on;
}

TEST(MoleculeDescriptors, Rdkit2dListAndValuesAsPythonRdkit) {
  MoleculeDescriptors d("rdkit2d");
  // 43 registered Properties + 12 SlogP_VSA + 10 SMR_VSA + 14 PEOE_VSA + 42 MQNs + 8 BCUT2D.
  ASSERT_EQ(d.width(), 129);
  EXPECT_FALSE(d.isFingerprint());
  EXPECT_EQ(d.names().front(), "exactmw");
  EXPECT_EQ(d.names()[42], "Phi");
  EXPECT_EQ(d.names()[43], "SlogP_VSA1");
  EXPECT_EQ(d.names().back(), "BCUT2D_MRLOW");
  // from rdkit.Chem import Descriptors as D; m = Chem.MolFromSmiles(s); D.MolWt(m), D.ExactMolWt(m), D.TPSA(m),
  // D.MolLogP(m), D.MolMR(m), D.LabuteASA(m), D.NumHDonors(m), D.NumHAcceptors(m), D.Kappa2(m), D.Chi1v(m),
  // D.HallKierAlpha(m), D.FractionCSP3(m), D.SlogP_VSA2(m), D.PEOE_VSA1(m), D.SMR_VSA1(m),
  // rdMolDescriptors.BCUT2D(m)[0]
  struct Named {
    const char* column;
    double aspirin, caffeine;
  };
  const Named named[] = {
      {"amw", 180.15899999999996, 194.194},
      {"exactmw", 180.042258736, 194.08037556},
      {"tpsa", 63.60000000000001, 61.82},
      {"CrippenClogP", 1.3101, -1.0293},
      {"CrippenMR", 44.71030000000002, 51.19600000000001},
      {"labuteASA", 74.75705264447721, 79.02895701814933},
      {"NumHBD", 1, 0},
      {"NumHBA", 3, 6},
      {"kappa2", 3.7092512583454584, 2.5679479011227926},
      {"chi1v", 3.6174536478673316, 4.107927642957933},
      {"hallKierAlpha", -1.8399999999999999, -1.85},
      {"FractionCSP3", 0.1111111111111111, 0.375},
      {"SlogP_VSA2", 17.045137970744406, 18.685277464321274},
      {"PEOE_VSA1", 9.843390348640755, 4.567099647791355},
      {"SMR_VSA1", 19.432464716784395, 0.0},
      {"BCUT2D_MWHI", 16.53611122125433, 16.161282315860745},
  };
  std::vector<double> a = row(d, kAspirin), c = row(d, kCaffeine);
  for (const Named& n : named) {
    const int64_t k = d.column(n.column);
    ASSERT_GE(k, 0) << n.column;
    EXPECT_NEAR(a[static_cast<size_t>(k)], n.aspirin, 1e-9 * (1 + std::abs(n.aspirin))) << n.column;
    EXPECT_NEAR(c[static_cast<size_t>(k)], n.caffeine, 1e-9 * (1 + std::abs(n.caffeine))) << n.column;
  }
  // Every column at once: the sum of
  //   list(rdMolDescriptors.Properties().ComputeProperties(m)) + list(rdMolDescriptors.SlogP_VSA_(m)) +
  //   list(rdMolDescriptors.SMR_VSA_(m)) + list(rdMolDescriptors.PEOE_VSA_(m)) + list(rdMolDescriptors.MQNs_(m)) +
  //   list(rdMolDescriptors.BCUT2D(m))
  EXPECT_NEAR(sum(a), 963.5016311512439, 1e-9);
  EXPECT_NEAR(sum(c), 1035.636046835483, 1e-9);
}

TEST(MoleculeDescriptors, WhatRdkitCannotComputeIsNaN) {
  MoleculeDescriptors d("rdkit2d");
  // BCUT2D raises for sodium ("No Gasteiger Partial Charge parameters for Element: Na"); the rest is computed.
  std::vector<double> salt = row(d, "[Na+].[Cl-]");
  double finite = 0;
  for (int64_t k = 0; k < d.width(); ++k) {
    const bool bcut = d.names()[static_cast<size_t>(k)].rfind("BCUT2D_", 0) == 0;
    EXPECT_EQ(std::isnan(salt[static_cast<size_t>(k)]), bcut) << d.names()[static_cast<size_t>(k)];
    if (!bcut) finite += salt[static_cast<size_t>(k)];
  }
  EXPECT_NEAR(finite, 320.63357542930123, 1e-9);  // Python: the sum of the finite values above
  // SMILES the featuriser rejects: no crash, a row of NaN, reported as failed.
  std::vector<double> bad(static_cast<size_t>(d.width()), 0.0);
  EXPECT_FALSE(d.computeSmiles("C1CC", bad.data()));
  for (double v : bad) EXPECT_TRUE(std::isnan(v));
  std::vector<int64_t> failed;
  std::vector<double> all = d.computeAll({"CCO", "not a molecule", "C(C)(C)(C)(C)C", ""}, 2, &failed);
  EXPECT_EQ(failed, (std::vector<int64_t>{1, 2}));  // carbon with five bonds is rejected too
  EXPECT_FALSE(std::isnan(all[0]));
  // "" parses to a molecule without atoms: its descriptors are 0 but BCUT2D's, which RDKit would abort on.
  for (int64_t k = 0; k < d.width(); ++k) {
    const std::string& name = d.names()[static_cast<size_t>(k)];
    EXPECT_EQ(std::isnan(all[static_cast<size_t>(3 * d.width() + k)]), name.rfind("BCUT2D_", 0) == 0) << name;
  }
  MoleculeDescriptors morgan("morgan");
  std::vector<double> bits(2048, 1.0);
  EXPECT_FALSE(morgan.computeSmiles("C1CC", bits.data()));
  EXPECT_TRUE(std::isnan(bits[0]));
  EXPECT_THROW(MoleculeDescriptors("rdkit3d"), std::invalid_argument);
}

TEST(MoleculeDescriptors, SameBitsForAnyThreadCount) {
  const std::vector<std::string> smiles = {kAspirin, kCaffeine, "CCO", "c1ccccc1O", "[Na+].[Cl-]", "CC(C)CC(=O)N",
                                           "O=C(O)c1ccncc1", "C1CCCCC1", "FC(F)(F)c1ccccc1", "CCN(CC)CC"};
  for (const char* kind : {"rdkit2d", "morgan-count"}) {
    MoleculeDescriptors d(kind);
    std::vector<double> one = d.computeAll(smiles, 1), two = d.computeAll(smiles, 2);
    ASSERT_EQ(one.size(), smiles.size() * static_cast<size_t>(d.width()));
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0) << kind;
    std::vector<double> first = row(d, smiles[3]);
    EXPECT_EQ(std::memcmp(first.data(), one.data() + 3 * d.width(), first.size() * sizeof(double)), 0) << kind;
  }
}

}  // namespace
}  // namespace gnn
