#include "device/Trace.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace gnn {

const char* taskKindName(TaskKind k) {
  switch (k) {
    case TaskKind::Forward: return "forward";
    case TaskKind::Backward: return "backward";
    case TaskKind::Copy: return "copy";
    case TaskKind::AllReduce: return "all-reduce";
    case TaskKind::Optimizer: return "optimizer";
    case TaskKind::HostToDevice: return "host-to-device";
    case TaskKind::DeviceToHost: return "device-to-host";
  }
  return "?";
}

const char* pipelinePhaseName(PipelinePhase p) {
  switch (p) {
    case PipelinePhase::None: return "";
    case PipelinePhase::Fill: return "fill";
    case PipelinePhase::Main: return "main";
    case PipelinePhase::Flush: return "flush";
  }
  return "?";
}

void Trace::setTracks(std::vector<std::string> names) {
  std::lock_guard<std::mutex> lock(mu_);
  tracks_ = std::move(names);
}

void Trace::add(const TaskRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  if (limit_ > 0 && records_.size() >= limit_) {
    ++omitted_;
    return;
  }
  records_.push_back(r);
}

std::vector<TaskRecord> Trace::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

void Trace::mapRecords(const std::function<void(TaskRecord&)>& f) {
  std::lock_guard<std::mutex> lock(mu_);
  for (TaskRecord& r : records_) f(r);
}

bool Trace::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_.empty();
}

void Trace::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  records_.clear();
  omitted_ = 0;
}

namespace {
void writeFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + path);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + path + " (disk full?)");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

// Both clocks set on every record -> the IPU clock; else the CPU clock.
bool useIpuClock(const std::vector<TaskRecord>& rs) {
  if (rs.empty()) return false;
  for (const auto& r : rs)
    if (!r.ipuClock.set()) return false;
  return true;
}

std::string taskLabel(const TaskRecord& r) {
  std::string s = taskKindName(r.kind);
  if (r.microBatch >= 0) s += " mb" + std::to_string(r.microBatch);
  return s;
}

std::string escapeXml(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}
}  // namespace

void Trace::writeChromeJson(const std::string& path, const std::string& title) const {
  const std::vector<TaskRecord> rs = records();
  const bool ipu = useIpuClock(rs);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0},
                    {"args", {{"name", title + (ipu ? " (simulated IPU clock)" : " (CPU clock)")}}}});
  const auto tracks = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return tracks_;
  }();
  for (size_t t = 0; t < tracks.size(); ++t) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", t}, {"args", {{"name", tracks[t]}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 0}, {"tid", t},
                      {"args", {{"sort_index", t}}}});
  }
  for (const auto& r : rs) {
    const TaskClock& c = ipu ? r.ipuClock : r.cpu;
    const TaskClock& other = ipu ? r.cpu : r.ipuClock;
    nlohmann::json args = {{"request", r.request}, {"iteration", r.iteration}};
    if (r.replica >= 0) args["replica"] = r.replica;
    if (r.stage >= 0) args["stage"] = r.stage;
    if (r.microBatch >= 0) args["micro_batch"] = r.microBatch;
    if (r.phase != PipelinePhase::None) args["phase"] = pipelinePhaseName(r.phase);
    if (r.flops) args["flops"] = r.flops;
    if (r.bytes) args["bytes"] = r.bytes;
    if (other.set()) args[ipu ? "cpu_ms" : "ipu_ms"] = other.duration * 1e3;
    events.push_back({{"name", taskLabel(r)},
                      {"cat", taskKindName(r.kind)},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", r.ipu},
                      {"ts", c.start * 1e6},
                      {"dur", std::max(c.duration * 1e6, 0.001)},
                      {"args", args}});
  }
  nlohmann::json doc = {{"traceEvents", events},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"title", title}, {"clock", ipu ? "simulated IPU" : "CPU wall time"},
                                       {"omitted_tasks", omitted_}}}};
  writeFile(path, doc.dump(1) + "\n");
}

void Trace::writeSvg(const std::string& path, const std::string& title, int64_t request) const {
  std::vector<TaskRecord> rs;
  const std::vector<TaskRecord> all = records();
  if (request < 0)
    for (const auto& r : all) request = std::max(request, r.request);
  for (const auto& r : all)
    if (r.request == request) rs.push_back(r);
  const auto tracks = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return tracks_;
  }();
  const bool ipu = useIpuClock(rs);
  auto clk = [&](const TaskRecord& r) -> const TaskClock& { return ipu ? r.ipuClock : r.cpu; };
  double t0 = 1e300, t1 = -1e300;
  int64_t maxMb = 0;
  for (const auto& r : rs) {
    t0 = std::min(t0, clk(r).start);
    t1 = std::max(t1, clk(r).start + clk(r).duration);
    maxMb = std::max(maxMb, r.microBatch);
  }
  if (rs.empty()) t0 = 0, t1 = 1;
  const double span = std::max(t1 - t0, 1e-9);
  const int left = 340, right = 30, top = 70, rowH = 30, width = 1500;
  const int plotW = width - left - right;
  const int rows = static_cast<int>(tracks.size());
  const int height = top + rows * rowH + 90;
  auto X = [&](double t) { return left + (t - t0) / span * plotW; };
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(2);
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">" << escapeXml(title) << "</text>\n";
  s << "<text x=\"10\" y=\"42\" fill=\"#444\">host request " << request << ", " << (ipu ? "simulated IPU" : "CPU")
    << " clock, " << (span * 1e3) << " ms. Forward: light, backward: dark; colour = micro-batch.</text>\n";

  // Pipeline phases of the first update, from the forward slices: fill until the last stage starts its first
  // forward, flush from the first stage's last forward to the end of the last backward.
  double fillEnd = NAN, flushStart = NAN, lastBackward = NAN;
  for (const auto& r : rs) {
    if (r.iteration != 0) continue;
    const TaskClock& c = clk(r);
    if (r.kind == TaskKind::Forward && r.phase == PipelinePhase::Main)
      fillEnd = std::isnan(fillEnd) ? c.start : std::min(fillEnd, c.start);
    if (r.kind == TaskKind::Forward || r.kind == TaskKind::Backward) {
      if (r.phase == PipelinePhase::Flush)
        flushStart = std::isnan(flushStart) ? c.start : std::min(flushStart, c.start);
      lastBackward = std::isnan(lastBackward) ? c.start + c.duration : std::max(lastBackward, c.start + c.duration);
    }
  }
  if (std::isfinite(fillEnd) && std::isfinite(flushStart) && std::isfinite(lastBackward)) {
    const double a = X(t0), b = X(fillEnd), c = X(flushStart), d = X(lastBackward);
    const int y = top - 18, h = rows * rowH + 18;
    s << "<rect x=\"" << a << "\" y=\"" << y << "\" width=\"" << std::max(b - a, 0.0) << "\" height=\"" << h
      << "\" fill=\"#fff4d6\"/>\n";
    s << "<rect x=\"" << c << "\" y=\"" << y << "\" width=\"" << std::max(d - c, 0.0) << "\" height=\"" << h
      << "\" fill=\"#e3f0ff\"/>\n";
    s << "<text x=\"" << (a + 4) << "\" y=\"" << (y + 13) << "\" fill=\"#8a6d00\">fill</text>\n";
    s << "<text x=\"" << (b + 4) << "\" y=\"" << (y + 13) << "\" fill=\"#333\">main</text>\n";
    s << "<text x=\"" << (c + 4) << "\" y=\"" << (y + 13) << "\" fill=\"#1d4f91\">flush</text>\n";
  }
  for (int t = 0; t < rows; ++t) {
    const int y = top + t * rowH;
    s << "<text x=\"10\" y=\"" << (y + rowH / 2 + 4) << "\">" << escapeXml(tracks[static_cast<size_t>(t)]) << "</text>\n";
    s << "<line x1=\"" << left << "\" y1=\"" << (y + rowH) << "\" x2=\"" << (width - right) << "\" y2=\"" << (y + rowH)
      << "\" stroke=\"#ddd\"/>\n";
  }
  for (const auto& r : rs) {
    const TaskClock& c = clk(r);
    const double x = X(c.start), w = std::max(X(c.start + c.duration) - x, 0.6);
    const int y = top + static_cast<int>(r.ipu) * rowH + 3;
    std::string fill;
    if (r.kind == TaskKind::Forward || r.kind == TaskKind::Backward) {
      const int hue = static_cast<int>((r.microBatch * 47) % 360);
      fill = "hsl(" + std::to_string(hue) + ",70%," + (r.kind == TaskKind::Forward ? "72%" : "42%") + ")";
    } else if (r.kind == TaskKind::Optimizer) {
      fill = "#222";
    } else if (r.kind == TaskKind::AllReduce) {
      fill = "#c0392b";
    } else {
      fill = "#999";
    }
    s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << (rowH - 6) << "\" fill=\""
      << fill << "\" stroke=\"white\" stroke-width=\"0.5\"><title>" << escapeXml(taskLabel(r))
      << (r.stage >= 0 ? ", stage " + std::to_string(r.stage) : "")
      << (r.replica >= 0 ? ", replica " + std::to_string(r.replica) : "")
      << ", iteration " << r.iteration << ", " << (c.duration * 1e3) << " ms</title></rect>\n";
    if (w > 26 && r.microBatch >= 0)
      s << "<text x=\"" << (x + 3) << "\" y=\"" << (y + rowH / 2 + 1) << "\" font-size=\"10\">"
        << (r.kind == TaskKind::Forward ? "F" : r.kind == TaskKind::Backward ? "B" : "") << r.microBatch << "</text>\n";
  }
  // Legend and time axis.
  const int ly = top + rows * rowH + 30;
  s << "<text x=\"" << left << "\" y=\"" << ly << "\">0 ms</text>\n";
  s << "<text x=\"" << (width - right - 80) << "\" y=\"" << ly << "\">" << (span * 1e3) << " ms</text>\n";
  int lx = left;
  auto legend = [&](const std::string& fill, const std::string& label) {
    s << "<rect x=\"" << lx << "\" y=\"" << (ly + 14) << "\" width=\"14\" height=\"14\" fill=\"" << fill << "\"/>\n";
    s << "<text x=\"" << (lx + 18) << "\" y=\"" << (ly + 26) << "\">" << label << "</text>\n";
    lx += 30 + static_cast<int>(label.size()) * 7;
  };
  legend("hsl(0,70%,72%)", "forward (F k: micro-batch k)");
  legend("hsl(0,70%,42%)", "backward (B k)");
  legend("#c0392b", "all-reduce");
  legend("#222", "optimizer step");
  legend("#999", "copies and host transfers");
  s << "</svg>\n";
  writeFile(path, s.str());
}

}  // namespace gnn
