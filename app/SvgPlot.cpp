#include "app/SvgPlot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "app/HtmlEscape.h"

namespace gnn::app {

namespace {

// Matplotlib's "tab10" colours: distinct for the first ten series, readable on white.
const char* const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A tick label: at most 4 significant digits, no trailing zeros ("0.25", "1e+03", "-2").
std::string tickLabel(double v, double step) {
  if (std::fabs(v) < step * 1e-9) v = 0;  // -1.3e-17 from the sums is 0
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::vector<double> niceTicks(double lo, double hi, int target, bool integer) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  const double raw = (hi - lo) / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  if (integer) step = std::max(step, 1.0);
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1)
    ticks.push_back(k * step);
  return ticks;
}

SvgPlot::SvgPlot(std::string title, std::string xLabel, std::string yLabel)
    : title_(std::move(title)), xLabel_(std::move(xLabel)), yLabel_(std::move(yLabel)) {}

void SvgPlot::addLine(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
                      bool dashed, int color) {
  if (x.size() != y.size())
    throw std::invalid_argument("SvgPlot::addLine: x has " + std::to_string(x.size()) + " values, y " +
                                std::to_string(y.size()));
  if (color < 0) color = nextColor_++;
  series_.push_back({name, x, y, true, dashed, color % 10});
}

void SvgPlot::addPoints(const std::string& name, const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size())
    throw std::invalid_argument("SvgPlot::addPoints: x has " + std::to_string(x.size()) + " values, y " +
                                std::to_string(y.size()));
  series_.push_back({name, x, y, false, false, nextColor_++ % 10});
}

void SvgPlot::addReference(double x0, double y0, double x1, double y1, const std::string& name) {
  references_.push_back({x0, y0, x1, y1, name});
}

void SvgPlot::addDiagonal(const std::string& name) {
  const Range r = xRange();
  addReference(r.lo, r.lo, r.hi, r.hi, name);
}

void SvgPlot::setXRange(double lo, double hi) {
  fixedX_ = true;
  x_ = {lo, hi};
}

void SvgPlot::setYRange(double lo, double hi) {
  fixedY_ = true;
  y_ = {lo, hi};
}

int64_t SvgPlot::points() const {
  int64_t n = 0;
  for (const Series& s : series_)
    for (size_t i = 0; i < s.x.size(); ++i) n += std::isfinite(s.x[i]) && std::isfinite(s.y[i]);
  return n;
}

// The finite data's range on one axis, widened by 5% each side (a single value: +-1, or +-10% of it).
SvgPlot::Range SvgPlot::dataRange(bool xAxis) const {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& s : series_)
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      const double v = xAxis ? s.x[i] : s.y[i];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (!(lo <= hi)) return {0, 1};
  if (lo == hi) {
    const double d = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    return {lo - d, hi + d};
  }
  const double pad = (hi - lo) * 0.05;
  return {lo - pad, hi + pad};
}

SvgPlot::Range SvgPlot::xRange() const {
  if (fixedX_) return x_;
  if (!equal_) return dataRange(true);
  const Range a = dataRange(true), b = dataRange(false);
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

SvgPlot::Range SvgPlot::yRange() const {
  if (fixedY_) return y_;
  if (!equal_) return dataRange(false);
  return xRange();
}

std::string SvgPlot::svg(int width, int height) const {
  const double left = 72, right = 16, top = subtitle_.empty() ? 34 : 52, bottom = 52;
  const double pw = width - left - right, ph = height - top - bottom;
  const Range xr = xRange(), yr = yRange();
  auto px = [&](double x) { return left + (x - xr.lo) / (xr.hi - xr.lo) * pw; };
  auto py = [&](double y) { return top + ph - (y - yr.lo) / (yr.hi - yr.lo) * ph; };
  std::ostringstream o;
  o << "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" data-points=\"" << points() << "\" width=\""
    << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << ' ' << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"#fff\"/>\n";
  o << "<text x=\"" << width / 2
    << "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" << htmlEscape(title_)
    << "</text>\n";
  if (!subtitle_.empty())
    o << "<text x=\"" << width / 2 << "\" y=\"40\" text-anchor=\"middle\" fill=\"#444\">"
      << htmlEscape(subtitle_) << "</text>\n";
  // The axes' box, grid lines and tick labels.
  o << "<g class=\"axes\" stroke=\"#000\" fill=\"none\"><rect x=\"" << fixed2(left) << "\" y=\""
    << fixed2(top) << "\" width=\"" << fixed2(pw) << "\" height=\"" << fixed2(ph)
    << "\"/></g>\n<g class=\"ticks\">";
  const std::vector<double> xt = niceTicks(xr.lo, xr.hi, 6, integerX_), yt = niceTicks(yr.lo, yr.hi);
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1, ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double t : xt)
    o << "<line x1=\"" << fixed2(px(t)) << "\" y1=\"" << fixed2(top) << "\" x2=\"" << fixed2(px(t))
      << "\" y2=\"" << fixed2(top + ph + 5) << "\" stroke=\"#ddd\"/><text x=\"" << fixed2(px(t)) << "\" y=\""
      << fixed2(top + ph + 18) << "\" text-anchor=\"middle\">" << tickLabel(t, xstep) << "</text>";
  for (double t : yt)
    o << "<line x1=\"" << fixed2(left - 5) << "\" y1=\"" << fixed2(py(t)) << "\" x2=\"" << fixed2(left + pw)
      << "\" y2=\"" << fixed2(py(t)) << "\" stroke=\"#ddd\"/><text x=\"" << fixed2(left - 8) << "\" y=\""
      << fixed2(py(t) + 4) << "\" text-anchor=\"end\">" << tickLabel(t, ystep) << "</text>";
  o << "</g>\n<text x=\"" << fixed2(left + pw / 2) << "\" y=\"" << height - 10 << "\" text-anchor=\"middle\">"
    << htmlEscape(xLabel_) << "</text>\n<text transform=\"translate(16," << fixed2(top + ph / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">" << htmlEscape(yLabel_) << "</text>\n";
  for (const Reference& r : references_)
    o << "<line class=\"reference\" x1=\"" << fixed2(px(r.x0)) << "\" y1=\"" << fixed2(py(r.y0)) << "\" x2=\""
      << fixed2(px(r.x1)) << "\" y2=\"" << fixed2(py(r.y1))
      << "\" stroke=\"#888\" stroke-dasharray=\"5,4\"/>\n";
  // The data.
  o << "<g class=\"data\">\n";
  for (const Series& s : series_) {
    const char* color = kColors[s.color];
    if (s.line) {
      o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"6,3\"" : "") << " points=\"";
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
          o << fixed2(px(s.x[i])) << ',' << fixed2(py(s.y[i])) << ' ';
      o << "\"/>\n";
      if (s.x.size() <= 40)
        for (size_t i = 0; i < s.x.size(); ++i)
          if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
            o << "<circle class=\"vx\" cx=\"" << fixed2(px(s.x[i])) << "\" cy=\"" << fixed2(py(s.y[i]))
              << "\" r=\"3\" fill=\"" << color << "\"/>";
    } else {
      for (size_t i = 0; i < s.x.size(); ++i)
        if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
          o << "<circle class=\"pt\" cx=\"" << fixed2(px(s.x[i])) << "\" cy=\"" << fixed2(py(s.y[i]))
            << "\" r=\"2.5\" fill=\"" << color << "\" fill-opacity=\"0.6\"/>";
      o << "\n";
    }
  }
  o << "</g>\n";
  // The legend: one row per named series and reference, in the chosen corner of the axes.
  struct Row {
    std::string name, color;  // colour "": a reference
    bool dashed, dot;
  };
  std::vector<Row> rows;
  for (const Series& s : series_)
    if (!s.name.empty()) rows.push_back({s.name, kColors[s.color], s.dashed, !s.line});
  for (const Reference& r : references_)
    if (!r.name.empty()) rows.push_back({r.name, "", true, false});
  if (!rows.empty()) {
    size_t longest = 0;
    for (const Row& row : rows) longest = std::max(longest, row.name.size());
    const double lw = 34 + 7.0 * static_cast<double>(std::min<size_t>(longest, 48)),
                 lh = 18.0 * rows.size() + 6;
    const bool rightSide = legend_ == Corner::TopRight || legend_ == Corner::BottomRight;
    const bool bottomSide = legend_ == Corner::BottomLeft || legend_ == Corner::BottomRight;
    const double lx = rightSide ? left + pw - lw - 6 : left + 6,
                 ly = bottomSide ? top + ph - lh - 6 : top + 6;
    o << "<g class=\"legend\"><rect x=\"" << fixed2(lx) << "\" y=\"" << fixed2(ly) << "\" width=\""
      << fixed2(lw) << "\" height=\"" << fixed2(lh)
      << "\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#bbb\"/>";
    for (size_t k = 0; k < rows.size(); ++k) {
      const double y = ly + 15 + 18.0 * static_cast<double>(k);
      const Row& row = rows[k];
      const std::string c = row.color.empty() ? "#888" : row.color;
      if (row.dot)
        o << "<circle cx=\"" << fixed2(lx + 16) << "\" cy=\"" << fixed2(y - 4) << "\" r=\"3\" fill=\"" << c
          << "\"/>";
      else
        o << "<line x1=\"" << fixed2(lx + 6) << "\" y1=\"" << fixed2(y - 4) << "\" x2=\"" << fixed2(lx + 26)
          << "\" y2=\"" << fixed2(y - 4) << "\" stroke=\"" << c << "\" stroke-width=\"2\""
          << (row.dashed ? (row.color.empty() ? " stroke-dasharray=\"5,4\"" : " stroke-dasharray=\"6,3\"")
                         : "")
          << "/>";
      o << "<text x=\"" << fixed2(lx + 30) << "\" y=\"" << fixed2(y) << "\">" << htmlEscape(row.name)
        << "</text>";
    }
    o << "</g>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace gnn::app
