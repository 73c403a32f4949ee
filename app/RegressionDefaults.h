// RegressionDefaults: the loss a regression trains with and the metric that selects its best epoch when --loss and
// --metric are not given, by the convention of the field the data comes from. Chosen once when a run starts and
// kept in its checkpoints (derived.regression_defaults), so a continued run keeps them.
//
//   RegressionDefaults r = RegressionDefaults::forData("esol.csv", "", "chemprop");   // mse, rmse
//   RegressionDefaults p = RegressionDefaults::forData("pcqm4m-v2", "", "chemprop");  // l1, mae (OGB-LSC)
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace gnn::app {

struct RegressionDefaults {
  // "chemprop": MSE loss, RMSE selection (Chemprop's defaults, Yang et al. 2019; MoleculeNet's physical-chemistry
  // sets are reported in RMSE, Wu et al. 2018). "ogb-lsc": L1 loss, MAE (PCQM4Mv2's metric, Hu et al. 2021;
  // Graphormer and GPS++ train on L1). "mae": L1 and MAE (MoleculeNet's quantum-mechanics sets such as QM7,
  // Wu et al. 2018; SchNet's examples train on L1).
  std::string convention = "mae";
  std::string loss = "l1";
  std::string metric = "mae";  // for one target; several targets are selected by std_mae whatever the convention

  /// `programConvention` ("chemprop", "ogb-lsc" or "mae") unless the data is in the PCQM4Mv2 layout (a folder or
  /// `raw/data.csv[.gz]`, or --format pcqm4mv2), which is OGB-LSC's. std::invalid_argument for another name.
  static RegressionDefaults forData(const std::string& dataPath, const std::string& format,
                                    const std::string& programConvention);
  /// What runs saved before the choice was recorded trained with: L1 and MAE.
  static RegressionDefaults earlier();

  nlohmann::json toJson() const;
  /// std::invalid_argument for a malformed value.
  static RegressionDefaults fromJson(const nlohmann::json& j);
};

}  // namespace gnn::app
