// SvgPlot: one x-y plot as inline SVG, drawn without any script or style sheet: axes with ticks and labels, a
// title, lines and point clouds, dashed reference lines (y = x, chance) and a legend. The HTML report
// (app/HtmlReport.h) is made of these.
//
//   app::SvgPlot p("Parity: logS (test)", "true", "predicted");
//   p.addPoints("molecules", trueValues, predicted);
//   p.setEqualAxes();                        // the same range on both axes
//   p.addReference(lo, lo, hi, hi, "y = x");  // or addDiagonal() once the data are in
//   std::string svg = p.svg();               // <svg class="plot" data-points="N" ...>...</svg>
//
// Every drawn point is an element a browser can count: a <circle class="pt"> per point of a point cloud, a
// vertex of a <polyline class="series"> per point of a line; the root's data-points holds their total (points
// that are not finite are left out and not counted).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gnn::app {

class SvgPlot {
 public:
  enum class Corner { TopLeft, TopRight, BottomLeft, BottomRight };

  SvgPlot(std::string title, std::string xLabel, std::string yLabel);

  /// A line through (x[i], y[i]) in order, with a marker on each vertex when it has at most 40 (so one epoch
  /// shows too); `dashed` for a secondary series; `color`: the colour of series number `color` (-1: the next
  /// one), to draw two series of one model alike. x and y must have one size (std::invalid_argument naming
  /// both).
  void addLine(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
               bool dashed = false, int color = -1);
  /// One marker per (x[i], y[i]).
  void addPoints(const std::string& name, const std::vector<double>& x, const std::vector<double>& y);
  /// A dashed grey segment (not counted as data), named in the legend when `name` is not empty.
  void addReference(double x0, double y0, double x1, double y1, const std::string& name);
  /// addReference over the axes' common range (call after the data and setEqualAxes).
  void addDiagonal(const std::string& name = "y = x");

  /// Fixed ranges instead of the data's (ROC, PR and calibration plots: [0, 1]).
  void setXRange(double lo, double hi);
  void setYRange(double lo, double hi);
  /// Both axes over the union of the data's ranges (parity plots).
  void setEqualAxes() { equal_ = true; }
  /// Ticks on whole numbers only (epochs).
  void setIntegerX() { integerX_ = true; }
  void setLegendCorner(Corner c) { legend_ = c; }
  /// A line of text under the plot's title (an area, a count).
  void setSubtitle(std::string text) { subtitle_ = std::move(text); }

  /// The plot: <svg class="plot" data-points="N" width=.. height=.. viewBox=..>; text escaped.
  std::string svg(int width = 560, int height = 420) const;
  /// Points drawn (finite ones), as data-points says.
  int64_t points() const;

 private:
  struct Series {
    std::string name;
    std::vector<double> x, y;
    bool line = true, dashed = false;
    int color = 0;
  };
  struct Reference {
    double x0, y0, x1, y1;
    std::string name;
  };
  struct Range {
    double lo, hi;
  };
  Range dataRange(bool xAxis) const;
  Range xRange() const;
  Range yRange() const;

  std::string title_, xLabel_, yLabel_, subtitle_;
  std::vector<Series> series_;
  std::vector<Reference> references_;
  bool fixedX_ = false, fixedY_ = false, equal_ = false, integerX_ = false;
  int nextColor_ = 0;
  Range x_{0, 1}, y_{0, 1};
  Corner legend_ = Corner::TopLeft;
};

/// Tick positions for an axis over [lo, hi]: about `target` round values (1, 2 or 5 times a power of ten
/// apart) within the range; `integer`: a step of at least 1.
std::vector<double> niceTicks(double lo, double hi, int target = 6, bool integer = false);

}  // namespace gnn::app
