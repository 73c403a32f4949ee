// molecule_property --report-html (app/HtmlReport.h): the page of a regression ensemble (ESOL), of a
// classifier (BBBP) and of an evaluation-only run of its checkpoint holds the run's configuration, its
// learning curves, one parity point per test molecule or the ROC and PR curves, the calibration plot, the
// metrics the JSON reports, and the data's strings escaped; headless Chromium lays out every plot with all
// its points (the page's own check, <body data-plots-rendered>), and its screenshot is not blank.
//
// Chromium is found on PATH (chromium, chromium-browser); without it the browser tests are skipped, unless
// GNN_REQUIRE_CHROMIUM=1 (CI sets it), which makes its absence a failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "RunProgram.h"
#include "ScratchFolder.h"

namespace {
namespace fs = std::filesystem;
using gnn::testing::expectUsageError;
using gnn::testing::ProgramResult;
using gnn::testing::runExample;
using gnn::testing::lastJson;
using gnn::testing::runProgram;

const std::string kData = std::string(GNN_SOURCE_DIR) + "/examples/data/moleculenet/";
const std::string kSmall = " --hidden 16 --layers 2 --batch-size 32 --threads 1 --quiet --json";
const std::string kEsol =
    "--data " + kData + "delaney-processed.csv.gz" +
    " --target-cols 'measured log solubility in mols per litre' --limit 200 --split random "
    "--epochs 2 --seed 3 --ensemble-size 2 --test-every-epoch" +
    kSmall;
const std::string kBbbp = "--data " + kData +
                          "BBBP.csv.gz --target-cols p_np --limit 300 --split scaffold --epochs 2 --seed 1" +
                          kSmall;
// A target column and a file name that HTML must escape.
const std::string kOddTarget = "logS <b>&\"x'";
const std::string kOddFile = "we<ird>&\"name.csv";

std::string readText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t count(const std::string& text, const std::string& needle) {
  int64_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The <svg class="plot"> element whose title starts with `title`.
std::string plotTitled(const std::string& page, const std::string& title) {
  const size_t t = page.find("font-weight=\"bold\">" + title);
  if (t == std::string::npos) return "";
  const size_t start = page.rfind("<svg class=\"plot\"", t);
  return page.substr(start, page.find("</svg>", t) - start);
}

int64_t attribute(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(name + "=\"([0-9]+)\""))) return -1;
  return std::stoll(m[1]);
}

// The number as the page prints it (4 significant digits).
std::string shown(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A single-quoted shell word.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string findChromium() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path p = fs::path(dir) / name;
      if (!dir.empty() && access(p.c_str(), X_OK) == 0) return p.string();
    }
  return "";
}

class HtmlReport : public gnn::testing::SuiteScratchFolderTest<HtmlReport> {
 protected:
  static void SetUpTestSuite() {
    makeFolder("html_report_test");
    ProgramResult r =
        runExample("molecule_property",
                   kEsol + " --predict " + path("esol.csv") + " --report-html " + path("esol.html"), false);
    ASSERT_EQ(r.code, 0) << r.out;
    esol_ = lastJson(r.out);
    r = runExample("molecule_property",
                   kBbbp + " --save " + path("bbbp.ckpt") + " --report-html " + path("bbbp.html"), false);
    ASSERT_EQ(r.code, 0) << r.out;
    bbbp_ = lastJson(r.out);
    r = runExample("molecule_property",
                   "--load " + path("bbbp.ckpt") + " --epochs 0 --threads 1 --quiet --json " +
                       "--report-html " + path("eval.html"),
                   false);
    ASSERT_EQ(r.code, 0) << r.out;
    eval_ = lastJson(r.out);
    r = runExample("molecule_property",
                   "--load " + path("bbbp.ckpt") + " --epochs 3 --threads 1 --quiet --json " +
                       "--report-html " + path("continued.html"),
                   false);
    ASSERT_EQ(r.code, 0) << r.out;
    // 120 ESOL molecules under an odd file name and target column.
    std::ofstream odd(dir_ / kOddFile);
    odd << "smiles,\"" << std::regex_replace(kOddTarget, std::regex("\""), "\"\"") << "\"\n";
    std::istringstream esol(runProgram("zcat " + kData + "delaney-processed.csv.gz | head -n 121").out);
    std::string line;
    std::getline(esol, line);  // ...,measured log solubility,...,smiles: the second column and the last
    while (std::getline(esol, line)) {
      std::vector<std::string> f;
      std::stringstream s(line);
      for (std::string x; std::getline(s, x, ',');) f.push_back(x);
      odd << f.back() << "," << f[f.size() - 2] << "\n";
    }
    odd.close();
    r = runExample("molecule_property",
                   "--data " + quoted(path(kOddFile)) + " --target-cols " + quoted(kOddTarget) +
                       " --split random --epochs 1" + kSmall + " --report-html " + path("odd.html"),
                   false);
    ASSERT_EQ(r.code, 0) << r.out;
  }

  // Chromium's DOM of `page` after its load event (the page's check has run); "" when Chromium is missing.
  static std::string renderedDom(const std::string& page) {
    const std::string chromium = findChromium();
    if (chromium.empty()) return "";
    return runProgram("timeout 60 " + chromium + " --headless --no-sandbox --disable-gpu --user-data-dir=" +
                          quoted(path("chromium-profile")) + " --dump-dom " + quoted("file://" + path(page)),
                      /*withStderr=*/false)
        .out;
  }

  static nlohmann::json esol_, bbbp_, eval_;
};
nlohmann::json HtmlReport::esol_, HtmlReport::bbbp_, HtmlReport::eval_;

#define REQUIRE_CHROMIUM()                                                                              \
  do {                                                                                                  \
    if (findChromium().empty()) {                                                                       \
      const char* require = std::getenv("GNN_REQUIRE_CHROMIUM");                                        \
      if (require != nullptr && std::string(require) == "1")                                            \
        FAIL() << "GNN_REQUIRE_CHROMIUM=1 but neither chromium nor chromium-browser is on PATH "        \
                  "(scripts/install-deps.sh installs chromium)";                                        \
      GTEST_SKIP() << "no chromium or chromium-browser on PATH: the report's rendering is not checked " \
                      "(apt-get install chromium, or set GNN_REQUIRE_CHROMIUM=1 to fail instead)";      \
    }                                                                                                   \
  } while (0)

TEST_F(HtmlReport, RegressionEnsemblePageHasCurvesParityAndCalibration) {
  const std::string page = readText(path("esol.html"));
  EXPECT_EQ(esol_.at("report_html"), path("esol.html"));
  // Learning curves (two members, validation and test per epoch), parity, calibration.
  EXPECT_EQ(count(page, "<svg class=\"plot\""), 4);
  EXPECT_EQ(attribute(page, "data-plots"), 4);
  const std::string loss = plotTitled(page, "Training loss"),
                    metric = plotTitled(page, "Validation rmse and test");
  EXPECT_EQ(attribute(loss, "data-points"), 2 * 2);        // 2 members x 2 epochs
  EXPECT_EQ(attribute(metric, "data-points"), 2 * 2 * 2);  // and valid + test
  EXPECT_NE(loss.find("train (seed 4)"), std::string::npos);
  // One parity point per test molecule (and per row of --predict's file).
  const int64_t tests = esol_.at("test_graphs").get<int64_t>();
  ASSERT_GT(tests, 0);
  const std::string parity = plotTitled(page, "Parity: measured log solubility in mols per litre (test)");
  ASSERT_FALSE(parity.empty());
  EXPECT_EQ(count(parity, "<circle class=\"pt\""), tests);
  EXPECT_EQ(attribute(parity, "data-points"), tests);
  EXPECT_EQ(count(readText(path("esol.csv")), "\n"), tests + 1);
  EXPECT_NE(parity.find("y = x"), std::string::npos);
  EXPECT_NE(parity.find("(test), R2 = "), std::string::npos) << "the R2 of the points beside its parity plot";
  // The per-target metrics are the ensemble's, as the JSON has them.
  const nlohmann::json& e = esol_.at("ensemble");
  EXPECT_NE(page.find("<td>" + shown(e.at("test_rmse").get<double>()) + "</td>"), std::string::npos);
  // The calibration plot (before and after z-scaling) with the JSON's miscalibration areas.
  const std::string cal = plotTitled(page, "Calibration: ");
  ASSERT_FALSE(cal.empty());
  EXPECT_EQ(attribute(cal, "data-points"), 2 * 101);
  for (const char* which : {"uncalibrated", "calibrated"})
    EXPECT_NE(
        cal.find(std::string(which) + " (area " +
                 shown(e.at("test_uncertainty").at(which).at("miscalibration_area").get<double>()) + ")"),
        std::string::npos)
        << which;
  // Configuration, split and machine.
  for (const std::string& s :
       {std::string("<th>--hidden</th><td>16</td>"), std::string("<th>--ensemble-size</th><td>2</td>"),
        std::string("random: 160 train / 20 valid / 20 test (seed 3)"),
        std::string("<th>threads</th><td>1</td>"), std::string("<th>gemm_isa</th>")})
    EXPECT_NE(page.find(s), std::string::npos) << s;
  EXPECT_EQ(page.find("http://"),
            page.find("http://www.w3.org/2000/svg"));  // no link out but SVG's namespace
  EXPECT_EQ(page.find("src="), std::string::npos);
}

TEST_F(HtmlReport, ClassificationPageHasRocAndPrCurves) {
  const std::string page = readText(path("bbbp.html"));
  EXPECT_EQ(count(page, "<svg class=\"plot\""), 4);
  EXPECT_EQ(attribute(page, "data-plots"), 4);
  const std::string roc = plotTitled(page, "ROC: p_np (test)"),
                    pr = plotTitled(page, "Precision-recall: p_np (test)");
  ASSERT_FALSE(roc.empty());
  ASSERT_FALSE(pr.empty());
  EXPECT_NE(roc.find("ROC-AUC " + shown(bbbp_.at("test_rocauc").get<double>())), std::string::npos);
  EXPECT_GE(attribute(roc, "data-points"), 3);  // (0, 0), a threshold at least, (1, 1)
  EXPECT_NE(page.find("scaffold: "), std::string::npos);
  EXPECT_NE(page.find("<th>prc</th>"), std::string::npos);
  EXPECT_EQ(page.find("id=\"uncertainty\""), std::string::npos);  // one classifier, no calibration
}

// An evaluation-only run (--load, --epochs 0) trains nothing: its page shows the learning curves its checkpoint
// kept, and says whose they are.
TEST_F(HtmlReport, EvaluationOnlyPageScoresWithTheCheckpointsCurves) {
  const std::string page = readText(path("eval.html"));
  EXPECT_EQ(eval_.at("evaluation_only"), true);
  EXPECT_NE(page.find("No epoch was trained in this run (evaluation only): the curves are those of the run that "
                      "wrote its checkpoint (epochs 1-" + std::to_string(bbbp_.at("epochs").get<int64_t>()) + ")"),
            std::string::npos);
  EXPECT_EQ(count(page, "<svg class=\"plot\""), 4);  // the two curves, ROC and PR
  EXPECT_NE(page.find("ROC-AUC " + shown(eval_.at("test_rocauc").get<double>())), std::string::npos);
  EXPECT_EQ(eval_.at("test_rocauc"), bbbp_.at("test_rocauc"));
}

// A run continued from a checkpoint plots the epochs before it too (the checkpoint keeps the curve).
TEST_F(HtmlReport, ContinuedRunPlotsTheEpochsBeforeItsLoad) {
  const std::string page = readText(path("continued.html"));
  EXPECT_NE(page.find("Epochs 1-2 were trained before this run continued from a checkpoint"), std::string::npos);
  const std::string loss = plotTitled(page, "Training loss");
  ASSERT_FALSE(loss.empty());
  EXPECT_EQ(attribute(loss, "data-points"), 3);  // epochs 1, 2 (the checkpoint's) and 3
}

TEST_F(HtmlReport, DataStringsAreEscaped) {
  const std::string page = readText(path("odd.html"));
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  EXPECT_EQ(page.find("<ird>"), std::string::npos);
  EXPECT_NE(page.find("logS &lt;b&gt;&amp;&quot;x&#39;"), std::string::npos);
  EXPECT_NE(page.find("we&lt;ird&gt;&amp;&quot;name.csv"), std::string::npos);
  EXPECT_EQ(count(page, "<svg class=\"plot\""), 3);
}

TEST_F(HtmlReport, BadPathIsAUsageError) {
  expectUsageError(runExample("molecule_property", kBbbp + " --report-html /nonexistent-dir/r.html"),
                   "--report-html");
}

TEST_F(HtmlReport, EveryPlotRendersInHeadlessChromium) {
  REQUIRE_CHROMIUM();
  for (const char* page : {"esol.html", "bbbp.html", "eval.html", "odd.html"}) {
    const std::string html = readText(path(page)), dom = renderedDom(page);
    const int64_t plots = count(html, "<svg class=\"plot\"");
    int64_t points = 0;
    for (size_t at = html.find("<svg class=\"plot\""); at != std::string::npos;
         at = html.find("<svg class=\"plot\"", at + 1))
      points += attribute(html.substr(at, 200), "data-points");
    const size_t body = dom.find("<body");
    ASSERT_NE(body, std::string::npos) << page << ": no DOM from Chromium";
    const std::string tag = dom.substr(body, dom.find('>', body) - body);
    EXPECT_EQ(attribute(tag, "data-plots"), plots) << page;
    EXPECT_EQ(attribute(tag, "data-plots-rendered"), plots) << page << ": " << tag;
    EXPECT_EQ(attribute(tag, "data-points-drawn"), points) << page << ": " << tag;
    EXPECT_EQ(count(dom, "data-rendered=\"yes\""), plots) << page;
  }
}

TEST_F(HtmlReport, ScreenshotIsNotBlank) {
  REQUIRE_CHROMIUM();
  std::ofstream(path("blank.html")) << "<!DOCTYPE html><html><body></body></html>\n";
  auto shoot = [](const std::string& page, const std::string& png) {
    runProgram("timeout 60 " + findChromium() + " --headless --no-sandbox --disable-gpu --hide-scrollbars " +
                   "--window-size=1200,2400 --user-data-dir=" + quoted(path("chromium-profile")) +
                   " --screenshot=" + quoted(path(png)) + " " + quoted("file://" + path(page)),
               false);
    return fs::exists(path(png)) ? static_cast<int64_t>(fs::file_size(path(png))) : int64_t{0};
  };
  const int64_t blank = shoot("blank.html", "blank.png"), report = shoot("esol.html", "esol.png");
  ASSERT_GT(blank, 0) << "Chromium wrote no screenshot";
  // A blank page's PNG is a few kB of one colour; text, tables and plots make it many times larger.
  EXPECT_GT(report, 10 * blank) << "blank " << blank << " bytes, report " << report << " bytes";
}

}  // namespace
