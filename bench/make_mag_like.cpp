// bench_make_mag_like: writes an ogbn-mag-shaped heterogeneous graph (papers, authors, institutions, fields of study;
// venues planted as the papers' labels, a time split) in OGB's heterogeneous raw layout, for OgbHeteroDataset and
// the heterogeneous benchmarks (bench/MagLikeGraph.h says how it is made). Same options, same bytes. Prints one JSON
// object: the counts per type and relation, the split, bytes, seconds, and what the features alone give (the
// nearest-centroid accuracies) beside the share of each relation's edges that stay within a venue.
//
//   bench_make_mag_like --out /tmp/ogbn_mag_like                  # 100,000 papers, ~2.9M edges
//   bench_make_mag_like --out /tmp/ogbn_mag_full --papers 736389  # ogbn-mag's counts
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/Program.h"
#include "bench/MagLikeGraph.h"

namespace po = boost::program_options;
using namespace gnn;

namespace {

// The counts that default to ogbn-mag's scaled to --papers (no default shown: it depends on --papers).
struct CountFlag {
  const char* name;
  int64_t* value;
  int64_t magCount;
  const char* what;
  double least;
};

std::vector<CountFlag> countFlags(bench::MagLikeOptions& o) {
  using M = bench::OgbnMag;
  return {{"authors", &o.authors, M::authors, "authors", 1},
          {"institutions", &o.institutions, M::institutions, "institutions", 1},
          {"fields-of-study", &o.fieldsOfStudy, M::fieldsOfStudy, "fields of study", 1},
          {"affiliated-with", &o.affiliatedWith, M::affiliatedWith, "author-affiliated_with-institution edges", 0},
          {"writes", &o.writes, M::writes, "author-writes-paper edges", 0},
          {"cites", &o.cites, M::cites, "paper-cites-paper edges", 0},
          {"has-topic", &o.hasTopic, M::hasTopic, "paper-has_topic-field_of_study edges", 0}};
}

std::string withCommas(int64_t n) {
  std::string s = std::to_string(n);
  for (int64_t i = static_cast<int64_t>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

void addFlags(app::Program& prog, bench::MagLikeOptions& o, std::string& out, bool& plain) {
  auto flag = prog.flags().add_options();
  flag("out", po::value(&out)->required()->value_name("DIR"), "dataset folder to write (created)");
  flag("papers", app::value(&o.papers, int64_t{100000}), "papers (ogbn-mag: 736,389); the counts below scale with it");
  for (const CountFlag& c : countFlags(o))
    flag(c.name, po::value(c.value)->value_name("N"),
         (std::string(c.what) + " (default: ogbn-mag's " + withCommas(c.magCount) + " x papers / 736,389)")
             .c_str());
  flag("features", app::value(&o.features, int64_t{128}), "features per paper");
  flag("classes", app::value(&o.classes, int64_t{349}), "venues: the papers' classes");
  flag("author-venue-fraction", app::value(&o.authorVenueFraction, 0.85),
       "share of an author's papers drawn from its home venue (the rest: any paper)");
  flag("cite-venue-fraction", app::value(&o.citeVenueFraction, 0.7),
       "share of a paper's citations drawn from its venue's earlier papers (the rest: any earlier paper)");
  flag("field-venue-fraction", app::value(&o.fieldVenueFraction, 0.4),
       "share of a paper's fields of study drawn from those of its venue");
  flag("institution-venue-fraction", app::value(&o.institutionVenueFraction, 0.3),
       "share of an author's institutions drawn from those of its home venue");
  flag("noise", app::value(&o.noise, 4.5),
       "feature noise std, relative to the venue centroids' spread (1); 4.5: nearest centroid ~0.3 at 349 venues");
  flag("seed", app::value(&o.seed, uint64_t{0}), "random seed");
  flag("plain", po::bool_switch(&plain), "write .csv instead of .csv.gz (OGB's own reader takes .csv.gz only)");
}

void checkFlags(const app::Program& prog, bench::MagLikeOptions& o) {
  app::requireAtLeast("--papers", static_cast<double>(o.papers), 2);
  for (const CountFlag& c : countFlags(o)) {
    if (prog.given(c.name))
      app::requireAtLeast(std::string("--") + c.name, static_cast<double>(*c.value), c.least);
  }
  app::requireAtLeast("--features", static_cast<double>(o.features), 1);
  app::requireRange("--classes", static_cast<double>(o.classes), 1, static_cast<double>(o.papers));
  app::requireRange("--author-venue-fraction", o.authorVenueFraction, 0, 1);
  app::requireRange("--cite-venue-fraction", o.citeVenueFraction, 0, 1);
  app::requireRange("--field-venue-fraction", o.fieldVenueFraction, 0, 1);
  app::requireRange("--institution-venue-fraction", o.institutionVenueFraction, 0, 1);
  app::requireAtLeast("--noise", o.noise, 0);
}

nlohmann::json summary(const std::string& out, const bench::MagLikeOptions& o, const bench::MagLikeStats& s) {
  return {{"out", out},
          {"node_counts", {{"author", s.authors}, {"field_of_study", s.fieldsOfStudy},
                           {"institution", s.institutions}, {"paper", s.papers}}},
          {"edge_counts", {{"author__affiliated_with__institution", s.affiliatedWith},
                           {"author__writes__paper", s.writes},
                           {"paper__cites__paper", s.cites},
                           {"paper__has_topic__field_of_study", s.hasTopic}}},
          {"nodes", s.papers + s.authors + s.institutions + s.fieldsOfStudy},
          {"edges", s.affiliatedWith + s.writes + s.cites + s.hasTopic},
          {"split", {{"train", s.train}, {"valid", s.valid}, {"test", s.test}}},
          {"features", o.features},
          {"classes", o.classes},
          {"noise", o.noise},
          {"feature_only_nearest_centroid_accuracy", s.featureAccuracy},
          {"feature_only_trained_centroid_accuracy", s.featureAccuracyTrained},
          {"same_venue_share", {{"writes", s.writesSameVenue}, {"cites", s.citesSameVenue},
                                {"has_topic", s.hasTopicSameVenue}, {"affiliated_with", s.affiliatedSameVenue}}},
          {"bytes", s.bytes},
          {"seconds", s.seconds},
          {"seed", o.seed},
          {"gzip", o.gzip}};
}

}  // namespace

int main(int argc, char** argv) {
  app::Program prog("bench_make_mag_like",
                    "writes an ogbn-mag-shaped heterogeneous graph (4 node types, 4 relations, venues planted as the\n"
                    "papers' labels, a time split) in OGB's heterogeneous raw layout.\n\n"
                    "Measures: nothing (prints the counts, bytes written and seconds, the nearest-centroid accuracy\n"
                    "  of the paper features alone and each relation's within-venue share); the data for\n"
                    "  OgbHeteroDataset and the heterogeneous benchmarks.\n"
                    "Compared with: nothing (the counts are ogbn-mag's, Hu et al. 2020, scaled to --papers).");
  bench::MagLikeOptions o;
  std::string out;
  bool plain = false;
  addFlags(prog, o, out, plain);
  return prog.run(argc, argv, [&] {
    checkFlags(prog, o);
    o.gzip = !plain;
    const bench::MagLikeOptions r = o.resolved();
    // Progress once the graph takes more than a few seconds (ogbn-mag's default 100k papers: ~2.9M edges).
    if (r.affiliatedWith + r.writes + r.cites + r.hasTopic >= 1000000)
      o.progress = [&](const std::string& line) { prog.note(line); };
    const bench::MagLikeStats s = bench::writeMagLike(out, o);
    std::cout << summary(out, o, s).dump() << std::endl;
    return 0;
  });
}
