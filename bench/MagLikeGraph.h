// MagLikeGraph: writes a synthetic heterogeneous graph shaped like ogbn-mag in OGB's heterogeneous raw layout
// (docs/datasets.md, "Heterogeneous graphs"), so OgbHeteroDataset::load reads it, as would OGB's
// read_csv_heterograph_raw (gzipped files; with `gzip` off the .csv files are for our reader only). ogbn-mag (Hu et
// al., "Open Graph Benchmark: Datasets for Machine Learning on Graphs", NeurIPS 2020; ogb.stanford.edu, ogbn-mag's
// page) is a slice of the Microsoft Academic Graph: 736,389 papers (128 word2vec features, a year, a venue among 349
// as the label), 1,134,649 authors, 8,740 institutions and 59,965 fields of study, joined by author-affiliated_with-
// institution (1,043,998 edges), author-writes-paper (7,145,660), paper-cites-paper (5,416,271) and paper-has_topic-
// field_of_study (7,505,078); only papers have features, labels and a split, by year (train before 2018, valid 2018,
// test 2019). Why generate one: heterogeneous loaders and models need a graph of that shape at any size, whose
// venues a relational model can recover better than the features alone can (on ogbn-mag an MLP of the features
// reaches 0.2692 test accuracy, OGB's leaderboard, relational models well above it); same bytes for the same options.
//
//   MagLikeOptions o;
//   o.papers = 2000;                                     // every other count scaled from ogbn-mag's
//   MagLikeStats s = writeMagLike("/tmp/mag_like", o);
//   OgbHeteroDataset mag = OgbHeteroDataset::load("/tmp/mag_like");
//
// How (every draw seeded, one stream per purpose):
//   counts     by default ogbn-mag's times papers / 736,389, rounded (at least one node of each type)
//   venues     paper p's venue (its label) drawn with probability ~ (c + 1)^-0.7, skewed as venues' sizes are; every
//              venue used at least once (venues 0..C-1 on C distinct random papers)
//   years      ogbn-mag's split in its proportions (629,571 / 64,879 / 41,939): round(P x 41,939 / 736,389) random
//              papers of 2019 (test), round(P x 64,879 / 736,389) of 2018 (valid), the rest of 2010-2017 uniformly
//   homes      each author, institution and field of study has a home venue, the venue of a random paper (so a big
//              venue has more of them)
//   degrees    each relation gets exactly its edge count: every source one edge when there are at least as many
//              edges as sources (else none), the rest shared in proportion to log-normal weights (sigma 1 for writes
//              and cites, 0.5 for has_topic and affiliated_with: heavy tails, as publication counts have), each
//              source's share floor(R W_i / W) - floor(R W_{i-1} / W) of the R left (W_i the running sum of weights)
//   writes     author a's papers: with probability authorVenueFraction one of its home venue, else any paper
//   cites      paper p cites papers published no later than p (years are what the time split splits on): with
//              probability citeVenueFraction of p's venue, else any; when p's venue has no other such paper, any
//   has_topic  paper p's fields: with probability fieldVenueFraction one whose home venue is p's, else any field
//   affiliated author a's institutions: with probability institutionVenueFraction one whose home venue is a's
//   distinct   a draw repeating one of the source's targets is drawn again, up to 16 times (then kept); p itself, in
//              cites, until it is another paper
//   features   128 per paper: (centroid of its venue + noise x N(0, I)) / sqrt(1 + noise^2), centroids N(0, I), so
//              each feature has variance ~1; written with 3 decimals. The noise sets what the features alone give.
//              A paper x = m_y + s e is nearer a wrong venue's centroid m_c when e.(m_c - m_y) > |m_c - m_y|^2 / 2s:
//              |m_c - m_y|^2 ~ 256 in 128 dimensions, and the 348 comparisons share the term e.m_y, so the chance
//              that none succeeds is about E_z[Phi((z + sqrt(128) / s) / sqrt(1 + 2 / s^2))^348]: 0.40 at s = 4,
//              0.31 at 4.5, 0.24 at 5 (numerical quadrature). A Monte Carlo of this recipe gave 0.33 at 4.5, and
//              0.30 with centroids averaged from the ~85,000 training papers of the default 100,000 papers (each
//              venue's mean then carries noise of its own), so 4.5 is the default: "about 0.3", as an MLP gets on
//              ogbn-mag. The generator measures both (featureAccuracy, featureAccuracyTrained): 0.339 and 0.312 at
//              100,000 papers, 0.338 and 0.334 at ogbn-mag's 736,389; with fewer papers per venue the trained
//              figure falls (0.13 at 2,000 papers: ~5 training papers a venue)
//   files      streamed through 1 MB buffers: memory O(papers + authors), never O(edges)
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/NearestCentroid.h"
#include "bench/OutFile.h"
#include "bench/SplitMix.h"

namespace gnn::bench {

/// ogbn-mag's sizes (Hu et al. 2020; OGB's ogbn-mag page), which the defaults scale from.
struct OgbnMag {
  static constexpr int64_t papers = 736389, authors = 1134649, institutions = 8740, fieldsOfStudy = 59965;
  static constexpr int64_t affiliatedWith = 1043998, writes = 7145660, cites = 5416271, hasTopic = 7505078;
  static constexpr int64_t features = 128, classes = 349;
  static constexpr int64_t train = 629571, valid = 64879, test = 41939;  ///< papers before 2018, of 2018, of 2019
};

struct MagLikeOptions {
  int64_t papers = 100000;
  /// The other types' nodes and the relations' edges; -1: ogbn-mag's times papers / 736,389, rounded.
  int64_t authors = -1, institutions = -1, fieldsOfStudy = -1;
  int64_t affiliatedWith = -1, writes = -1, cites = -1, hasTopic = -1;
  int64_t features = OgbnMag::features, classes = OgbnMag::classes;
  /// How strongly each relation follows the venues (the rest of each draw: any node of the target type).
  double authorVenueFraction = 0.85;      ///< an author's papers at its home venue
  double citeVenueFraction = 0.7;         ///< a paper's citations of papers of its venue
  double fieldVenueFraction = 0.4;        ///< a paper's fields of study whose home venue is the paper's
  double institutionVenueFraction = 0.3;  ///< an author's institutions whose home venue is the author's
  double noise = 4.5;                     ///< feature noise std relative to the centroids' (1)
  uint64_t seed = 0;
  bool gzip = true;  ///< .csv.gz (level 1) as OGB ships them, else plain .csv
  /// Receives a line per file written (every 10% of a relation of 4M edges or more); nothing when empty.
  std::function<void(const std::string&)> progress;

  /// These options with each -1 count replaced by ogbn-mag's scaled to `papers`.
  MagLikeOptions resolved() const;
};

struct MagLikeStats {
  int64_t papers = 0, authors = 0, institutions = 0, fieldsOfStudy = 0;
  int64_t affiliatedWith = 0, writes = 0, cites = 0, hasTopic = 0;
  int64_t train = 0, valid = 0, test = 0;  ///< papers per split
  int64_t bytes = 0;                       ///< on disk, all files
  double seconds = 0;
  /// Nearest-centroid accuracy of the paper features alone: with the planted centroids over all papers (what a
  /// linear classifier of the features approaches with enough training papers), and with the training papers' mean
  /// features as written over the valid and test papers (what this graph's split gives that classifier).
  double featureAccuracy = 0, featureAccuracyTrained = 0;
  /// The measured share of each relation's edges whose ends share a venue (a paper's venue, an author's,
  /// institution's or field's home venue): the mixing fractions once fallbacks, redraws and chance are counted.
  double writesSameVenue = 0, citesSameVenue = 0, hasTopicSameVenue = 0, affiliatedSameVenue = 0;
};

inline MagLikeOptions MagLikeOptions::resolved() const {
  MagLikeOptions o = *this;
  const auto scaled = [&](int64_t& count, int64_t magCount, int64_t least) {
    if (count < 0)
      count = std::max(least, static_cast<int64_t>(std::llround(static_cast<double>(magCount) *
                                                                static_cast<double>(papers) / OgbnMag::papers)));
  };
  scaled(o.authors, OgbnMag::authors, 1);
  scaled(o.institutions, OgbnMag::institutions, 1);
  scaled(o.fieldsOfStudy, OgbnMag::fieldsOfStudy, 1);
  scaled(o.affiliatedWith, OgbnMag::affiliatedWith, 0);
  scaled(o.writes, OgbnMag::writes, 0);
  scaled(o.cites, OgbnMag::cites, 0);
  scaled(o.hasTopic, OgbnMag::hasTopic, 0);
  return o;
}

namespace detail {

constexpr int64_t kFirstYear = 2010, kYears = 10;   // 2010 .. 2019
constexpr int64_t kValidYear = 8, kTestYear = 9;    // 2018, 2019 as year indices
constexpr int kDistinctTries = 16;

// Refuses options no graph can be written with (resolved counts). Ids are held as int32.
inline void checkMagOptions(const MagLikeOptions& o) {
  const int64_t maxId = 2147483647;
  bool ok = o.papers >= 2 && o.classes >= 1 && o.classes <= o.papers && o.features >= 1 && o.noise >= 0;
  for (int64_t n : {o.papers, o.authors, o.institutions, o.fieldsOfStudy}) ok = ok && n >= 1 && n <= maxId;
  for (int64_t e : {o.affiliatedWith, o.writes, o.cites, o.hasTopic}) ok = ok && e >= 0;
  for (double f : {o.authorVenueFraction, o.citeVenueFraction, o.fieldVenueFraction, o.institutionVenueFraction})
    ok = ok && f >= 0 && f <= 1;
  if (!ok) throw std::invalid_argument("writeMagLike: options out of range");
}

inline int64_t splitCount(int64_t magCount, int64_t papers) {
  return std::llround(static_cast<double>(magCount) * static_cast<double>(papers) / OgbnMag::papers);
}

// Items grouped by a key, ids ascending within a key (a counting sort): key k's are items[start[k] .. start[k + 1]).
struct Groups {
  std::vector<int64_t> start;
  std::vector<int32_t> items;

  Groups(const std::vector<int32_t>& keyOf, int64_t keys) : start(static_cast<size_t>(keys) + 1, 0) {
    for (int32_t k : keyOf) ++start[k + 1];
    for (int64_t k = 0; k < keys; ++k) start[k + 1] += start[k];
    items.resize(keyOf.size());
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < keyOf.size(); ++i) items[fill[keyOf[i]]++] = static_cast<int32_t>(i);
  }
  // A random item among keys [first, last), or -1 when they hold none.
  int64_t pick(int64_t first, int64_t last, SplitMix& r) const {
    const int64_t n = start[last] - start[first];
    return n > 0 ? items[start[first] + static_cast<int64_t>(r.below(static_cast<uint64_t>(n)))] : -1;
  }
};

// Everything the relations are drawn from: each paper's venue and year, the papers by venue and year, the home
// venues of the other types and their members by venue.
struct MagPlan {
  std::vector<int32_t> venue, year;  ///< per paper; year as 0 .. 9 for 2010 .. 2019
  std::vector<int32_t> authorHome, institutionHome, fieldHome;
  Groups byVenueYear, byYear, institutionsOf, fieldsOf;  ///< keys venue * kYears + year; year; venue; venue
  int64_t valid = 0, test = 0;
};

// Venues: skewed, every venue used at least once (on distinct papers, so none is overwritten).
inline std::vector<int32_t> drawVenues(const MagLikeOptions& o) {
  const int64_t n = o.papers, C = o.classes;
  SplitMix r = stream(o.seed, 1);
  std::vector<double> cdf(static_cast<size_t>(C));
  double s = 0;
  for (int64_t c = 0; c < C; ++c) cdf[c] = (s += std::pow(static_cast<double>(c + 1), -0.7));
  for (double& v : cdf) v /= s;
  std::vector<int32_t> venue(static_cast<size_t>(n));
  for (int32_t& v : venue)
    v = static_cast<int32_t>(
        std::min<int64_t>(C - 1, std::lower_bound(cdf.begin(), cdf.end(), r.uniform()) - cdf.begin()));
  std::vector<int32_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = static_cast<int32_t>(i);
  for (int64_t c = 0; c < C; ++c) {
    std::swap(perm[c], perm[c + static_cast<int64_t>(r.below(static_cast<uint64_t>(n - c)))]);
    venue[perm[c]] = static_cast<int32_t>(c);
  }
  return venue;
}

// Years: 2010-2017 uniformly, then ogbn-mag's shares of 2019 and 2018 papers on distinct random papers.
inline std::vector<int32_t> drawYears(const MagLikeOptions& o, int64_t& valid, int64_t& test) {
  const int64_t n = o.papers;
  SplitMix r = stream(o.seed, 2);
  test = splitCount(OgbnMag::test, n);
  valid = splitCount(OgbnMag::valid, n);
  std::vector<int32_t> year(static_cast<size_t>(n));
  for (int32_t& y : year) y = static_cast<int32_t>(r.below(kValidYear));
  std::vector<int32_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[i] = static_cast<int32_t>(i);
  for (int64_t i = 0; i < test + valid; ++i) {
    std::swap(perm[i], perm[i + static_cast<int64_t>(r.below(static_cast<uint64_t>(n - i)))]);
    year[perm[i]] = static_cast<int32_t>(i < test ? kTestYear : kValidYear);
  }
  return year;
}

inline std::vector<int32_t> homeVenues(int64_t count, const std::vector<int32_t>& venue, SplitMix r) {
  std::vector<int32_t> home(static_cast<size_t>(count));
  for (int32_t& h : home) h = venue[r.below(venue.size())];
  return home;
}

inline std::vector<int32_t> venueYearKeys(const std::vector<int32_t>& venue, const std::vector<int32_t>& year) {
  std::vector<int32_t> key(venue.size());
  for (size_t p = 0; p < venue.size(); ++p) key[p] = static_cast<int32_t>(venue[p] * kYears + year[p]);
  return key;
}

inline MagPlan makePlan(const MagLikeOptions& o) {
  std::vector<int32_t> venue = drawVenues(o);
  int64_t valid = 0, test = 0;
  std::vector<int32_t> year = drawYears(o, valid, test);
  std::vector<int32_t> authorHome = homeVenues(o.authors, venue, stream(o.seed, 3));
  std::vector<int32_t> institutionHome = homeVenues(o.institutions, venue, stream(o.seed, 4));
  std::vector<int32_t> fieldHome = homeVenues(o.fieldsOfStudy, venue, stream(o.seed, 5));
  Groups byVenueYear(venueYearKeys(venue, year), o.classes * kYears), byYear(year, kYears);
  Groups institutionsOf(institutionHome, o.classes), fieldsOf(fieldHome, o.classes);
  return MagPlan{std::move(venue),          std::move(year),           std::move(authorHome),
                 std::move(institutionHome), std::move(fieldHome),     std::move(byVenueYear),
                 std::move(byYear),          std::move(institutionsOf), std::move(fieldsOf),
                 valid,                      test};
}

// Splits `total` edges over n sources (see the header: one each when total >= n, the rest by log-normal weights),
// summing to total exactly.
inline std::vector<int64_t> spreadDegrees(int64_t total, int64_t n, double sigma, SplitMix r) {
  const int64_t each = total >= n ? 1 : 0, rest = total - each * n;
  std::vector<double> weight(static_cast<size_t>(n));
  double sum = 0;
  for (double& w : weight) sum += (w = std::exp(sigma * r.normal()));
  std::vector<int64_t> degree(static_cast<size_t>(n));
  double running = 0;
  int64_t before = 0;
  for (int64_t i = 0; i < n; ++i) {
    running += weight[i];
    const int64_t upTo = i + 1 == n ? rest : std::min<int64_t>(rest, static_cast<int64_t>(std::floor(
                                                                           static_cast<double>(rest) * running / sum)));
    degree[i] = each + std::max<int64_t>(0, upTo - before);
    before = std::max(before, upTo);
  }
  return degree;
}

// Progress lines with the seconds since the start, when asked for.
struct MagProgress {
  std::function<void(const std::string&)> say;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  void operator()(const std::string& what) const {
    if (!say) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    say(what + " (" + std::to_string(static_cast<int64_t>(s * 10) / 10) + "." +
        std::to_string(static_cast<int64_t>(s * 10) % 10) + " s)");
  }
};

// One relation as it is written: its folder name, each source's degree, whether source and target are the same type
// (then a source is not its own target).
struct RelationSpec {
  std::string name;
  std::vector<int64_t> degree;
  bool oneType = false;
};

// Writes a relation's edge.csv and num-edge-list.csv: source s's degree[s] targets from draw(s, r), each drawn again
// (up to kDistinctTries times) while it repeats one of s's targets or is s itself; returns the edges whose ends
// sameVenue(s, t) says share a venue.
template <class Draw, class SameVenue>
int64_t writeRelation(const std::filesystem::path& raw, const std::string& ext, bool gzip, const RelationSpec& rel,
                      SplitMix r, const Draw& draw, const SameVenue& sameVenue, const MagProgress& progress) {
  const std::filesystem::path dir = raw / "relations" / rel.name;
  int64_t total = 0;
  for (int64_t d : rel.degree) total += d;
  const int64_t tick = total >= 4000000 ? total / 10 : 0;
  OutFile out((dir / ("edge" + ext)).string(), gzip);
  std::vector<int64_t> seen;
  int64_t written = 0, same = 0;
  for (int64_t s = 0; s < static_cast<int64_t>(rel.degree.size()); ++s) {
    seen.clear();
    for (int64_t k = 0; k < rel.degree[s]; ++k) {
      const auto rejected = [&](int64_t t) {
        return (rel.oneType && t == s) || std::find(seen.begin(), seen.end(), t) != seen.end();
      };
      int64_t t = draw(s, r);
      for (int tries = 1; tries < kDistinctTries && rejected(t); ++tries) t = draw(s, r);
      // Past the tries a repeat is kept (a source with few candidates left), never the source itself: draw until
      // another (every draw can give one: its pools hold two or more), so the draw's own rules (cites: no later
      // paper) still hold.
      while (rel.oneType && t == s) t = draw(s, r);
      seen.push_back(t);
      out.putInt(s);
      out.put(',');
      out.putInt(t);
      out.endLine();
      same += sameVenue(s, t) ? 1 : 0;
      if (tick && ++written % tick == 0 && written / tick < 10)
        progress(rel.name + ": " + std::to_string(written / tick * 10) + "% of " + std::to_string(total) + " edges");
    }
  }
  out.close();
  OutFile count((dir / ("num-edge-list" + ext)).string(), gzip);
  count.putInt(total);
  count.endLine();
  count.close();
  progress(rel.name + ": " + std::to_string(total) + " edges written");
  return same;
}

inline double shareOf(int64_t part, int64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The four relations, each from its own streams (degrees and draws). A draw is a target id; sameVenue says whether an
// edge joins its ends' venues.
inline void writeRelations(const std::filesystem::path& raw, const std::string& ext, const MagLikeOptions& o,
                           const MagPlan& plan, const MagProgress& progress, MagLikeStats& st) {
  const int64_t P = o.papers;
  const auto anyOf = [](int64_t n, SplitMix& r) { return static_cast<int64_t>(r.below(static_cast<uint64_t>(n))); };
  // With probability `fraction` a member of the venue's group (when it has one), else any of the n targets.
  const auto venueOrAny = [&](const Groups& g, int64_t venue, double fraction, int64_t n, SplitMix& r) {
    const int64_t t = r.uniform() < fraction ? g.pick(venue, venue + 1, r) : -1;
    return t >= 0 ? t : anyOf(n, r);
  };
  const auto affiliation = [&](int64_t a, SplitMix& r) {
    return venueOrAny(plan.institutionsOf, plan.authorHome[a], o.institutionVenueFraction, o.institutions, r);
  };
  const auto authorship = [&](int64_t a, SplitMix& r) {
    const int64_t home = plan.authorHome[a];  // its papers: keys home * kYears .. (home + 1) * kYears
    const int64_t t = r.uniform() < o.authorVenueFraction
                          ? plan.byVenueYear.pick(home * kYears, (home + 1) * kYears, r) : -1;
    return t >= 0 ? t : anyOf(P, r);
  };
  // Papers of year <= p's: of p's venue when it has another, else of any venue; else (no other paper that old) any.
  const auto citation = [&](int64_t p, SplitMix& r) {
    const int64_t v = plan.venue[p], y = plan.year[p];
    const Groups& g = plan.byVenueYear;
    if (r.uniform() < o.citeVenueFraction && g.start[v * kYears + y + 1] - g.start[v * kYears] >= 2)
      return g.pick(v * kYears, v * kYears + y + 1, r);
    return plan.byYear.start[y + 1] >= 2 ? plan.byYear.pick(0, y + 1, r) : anyOf(P, r);
  };
  const auto topic = [&](int64_t p, SplitMix& r) {
    return venueOrAny(plan.fieldsOf, plan.venue[p], o.fieldVenueFraction, o.fieldsOfStudy, r);
  };
  const RelationSpec aff{"author___affiliated_with___institution",
                         spreadDegrees(o.affiliatedWith, o.authors, 0.5, stream(o.seed, 8)), false};
  const int64_t affSame =
      writeRelation(raw, ext, o.gzip, aff, stream(o.seed, 12), affiliation,
                    [&](int64_t a, int64_t i) { return plan.institutionHome[i] == plan.authorHome[a]; }, progress);
  const RelationSpec writes{"author___writes___paper", spreadDegrees(o.writes, o.authors, 1.0, stream(o.seed, 9)),
                            false};
  const int64_t writesSame = writeRelation(raw, ext, o.gzip, writes, stream(o.seed, 13), authorship,
                                           [&](int64_t a, int64_t p) { return plan.venue[p] == plan.authorHome[a]; },
                                           progress);
  const RelationSpec cites{"paper___cites___paper", spreadDegrees(o.cites, P, 1.0, stream(o.seed, 10)), true};
  const int64_t citesSame = writeRelation(raw, ext, o.gzip, cites, stream(o.seed, 14), citation,
                                          [&](int64_t p, int64_t q) { return plan.venue[p] == plan.venue[q]; },
                                          progress);
  const RelationSpec topics{"paper___has_topic___field_of_study",
                            spreadDegrees(o.hasTopic, P, 0.5, stream(o.seed, 11)), false};
  const int64_t topicsSame = writeRelation(raw, ext, o.gzip, topics, stream(o.seed, 15), topic,
                                           [&](int64_t p, int64_t f) { return plan.fieldHome[f] == plan.venue[p]; },
                                           progress);
  st.affiliatedSameVenue = shareOf(affSame, o.affiliatedWith);
  st.writesSameVenue = shareOf(writesSame, o.writes);
  st.citesSameVenue = shareOf(citesSame, o.cites);
  st.hasTopicSameVenue = shareOf(topicsSame, o.hasTopic);
}

// Paper v's features as written (rounded to thousandths), from its own stream, so a row can be drawn again alone.
inline void featureRow(const MagLikeOptions& o, const std::vector<double>& centroid, int64_t venue, int64_t v,
                       double noiseScale, std::vector<double>& x) {
  SplitMix r = rowStream(o.seed, 7, static_cast<uint64_t>(v));
  const double* m = centroid.data() + venue * o.features;
  for (int64_t j = 0; j < o.features; ++j)
    x[j] = static_cast<double>(std::llround((m[j] + noiseScale * r.normal()) * 1000.0)) / 1000.0;
}

// node-feat.csv of the papers; sets the stats' two nearest-centroid accuracies. The held-out rows are drawn again
// after the training papers' means are known, rather than kept.
inline void writeFeatures(const std::string& path, const MagLikeOptions& o, const MagPlan& plan,
                          const MagProgress& progress, MagLikeStats& st) {
  const int64_t n = o.papers, C = o.classes, F = o.features;
  const double scale = 1.0 / std::sqrt(1.0 + o.noise * o.noise);
  SplitMix r = stream(o.seed, 6);
  std::vector<double> centroid(static_cast<size_t>(C * F));
  for (double& m : centroid) m = scale * r.normal();
  NearestCentroid planted(C, F), trained(C, F);
  for (int64_t c = 0; c < C; ++c) planted.add(c, centroid.data() + c * F);
  planted.finish();
  std::vector<double> x(static_cast<size_t>(F));
  int64_t hits = 0;
  const int64_t tick = n * F >= 40000000 ? n / 10 : 0;  // 10% steps from ~300k papers of 128 features
  OutFile out(path, o.gzip);
  for (int64_t v = 0; v < n; ++v) {
    featureRow(o, centroid, plan.venue[v], v, scale * o.noise, x);
    for (int64_t j = 0; j < F; ++j) {
      if (j) out.put(',');
      out.putFixed3(x[j]);
    }
    out.endLine();
    hits += planted.predict(x.data()) == plan.venue[v] ? 1 : 0;
    if (plan.year[v] < kValidYear) trained.add(plan.venue[v], x.data());
    if (tick && (v + 1) % tick == 0 && (v + 1) / tick < 10)
      progress("paper features: " + std::to_string((v + 1) / tick * 10) + "% of " + std::to_string(n) + " rows");
  }
  out.close();
  trained.finish();
  int64_t held = 0, heldHits = 0;
  for (int64_t v = 0; v < n; ++v) {
    if (plan.year[v] < kValidYear) continue;
    featureRow(o, centroid, plan.venue[v], v, scale * o.noise, x);
    ++held;
    heldHits += trained.predict(x.data()) == plan.venue[v] ? 1 : 0;
  }
  st.featureAccuracy = shareOf(hits, n);
  st.featureAccuracyTrained = shareOf(heldHits, held);
}

inline void writeLines(const std::string& path, bool gzip, const std::vector<std::string>& lines) {
  OutFile f(path, gzip);
  for (const std::string& line : lines) {
    f.put(line);
    f.endLine();
  }
  f.close();
}

// The type tables (types in OGB's sorted order: its reader sorts them anyway), the labels, years and time split.
inline void writePaperFiles(const std::filesystem::path& dir, const std::string& ext, const MagLikeOptions& o,
                            const MagPlan& plan) {
  const std::filesystem::path raw = dir / "raw", split = dir / "split" / "time";
  const std::string types = "author,field_of_study,institution,paper", labelled = "False,False,False,True";
  writeLines((raw / ("num-node-dict" + ext)).string(), o.gzip,
             {types, std::to_string(o.authors) + "," + std::to_string(o.fieldsOfStudy) + "," +
                         std::to_string(o.institutions) + "," + std::to_string(o.papers)});
  writeLines((raw / ("triplet-type-list" + ext)).string(), o.gzip,
             {"author,affiliated_with,institution", "author,writes,paper", "paper,cites,paper",
              "paper,has_topic,field_of_study"});
  writeLines((raw / ("nodetype-has-label" + ext)).string(), o.gzip, {types, labelled});
  writeLines((split / ("nodetype-has-split" + ext)).string(), o.gzip, {types, labelled});
  OutFile label((raw / "node-label" / "paper" / ("node-label" + ext)).string(), o.gzip);
  OutFile year((raw / "node-feat" / "paper" / ("node_year" + ext)).string(), o.gzip);
  OutFile train((split / "paper" / ("train" + ext)).string(), o.gzip);
  OutFile valid((split / "paper" / ("valid" + ext)).string(), o.gzip);
  OutFile test((split / "paper" / ("test" + ext)).string(), o.gzip);
  for (int64_t p = 0; p < o.papers; ++p) {
    label.putInt(plan.venue[p]);
    label.endLine();
    year.putInt(kFirstYear + plan.year[p]);
    year.endLine();
    OutFile& s = plan.year[p] == kTestYear ? test : plan.year[p] == kValidYear ? valid : train;
    s.putInt(p);
    s.endLine();
  }
  for (OutFile* f : {&label, &year, &train, &valid, &test}) f->close();
}

// Creates the folders and removes the files of the other compression an earlier run may have left (the reader
// would find one of the two first).
inline void prepareMagFolders(const std::filesystem::path& dir, bool gzip) {
  namespace fs = std::filesystem;
  const std::vector<std::string> relations = {"author___affiliated_with___institution", "author___writes___paper",
                                              "paper___cites___paper", "paper___has_topic___field_of_study"};
  std::vector<std::string> files = {"raw/num-node-dict", "raw/triplet-type-list", "raw/nodetype-has-label",
                                    "raw/node-feat/paper/node-feat", "raw/node-feat/paper/node_year",
                                    "raw/node-label/paper/node-label", "split/time/nodetype-has-split",
                                    "split/time/paper/train", "split/time/paper/valid", "split/time/paper/test"};
  for (const std::string& r : relations) {
    fs::create_directories(dir / "raw" / "relations" / r);
    files.push_back("raw/relations/" + r + "/edge");
    files.push_back("raw/relations/" + r + "/num-edge-list");
  }
  for (const char* d : {"raw/node-feat/paper", "raw/node-label/paper", "split/time/paper"})
    fs::create_directories(dir / d);
  for (const std::string& f : files) fs::remove(dir / (f + (gzip ? ".csv" : ".csv.gz")));
}

}  // namespace detail

/// Writes the graph into dir (created; files replaced). Memory: O(papers + authors + fields + institutions) (venues,
/// years, home venues, degrees of one relation), never O(edges): edges and features are written as they are drawn.
inline MagLikeStats writeMagLike(const std::string& dirName, const MagLikeOptions& options) {
  namespace fs = std::filesystem;
  const MagLikeOptions o = options.resolved();
  detail::checkMagOptions(o);
  const detail::MagProgress progress{o.progress};
  const fs::path dir(dirName);
  const std::string ext = o.gzip ? ".csv.gz" : ".csv";
  detail::prepareMagFolders(dir, o.gzip);
  const detail::MagPlan plan = detail::makePlan(o);
  MagLikeStats st;
  st.papers = o.papers;
  st.authors = o.authors;
  st.institutions = o.institutions;
  st.fieldsOfStudy = o.fieldsOfStudy;
  st.affiliatedWith = o.affiliatedWith;
  st.writes = o.writes;
  st.cites = o.cites;
  st.hasTopic = o.hasTopic;
  st.valid = plan.valid;
  st.test = plan.test;
  st.train = o.papers - plan.valid - plan.test;
  detail::writePaperFiles(dir, ext, o, plan);
  detail::writeRelations(dir / "raw", ext, o, plan, progress, st);
  detail::writeFeatures((dir / "raw" / "node-feat" / "paper" / ("node-feat" + ext)).string(), o, plan, progress, st);
  progress("paper features written");
  st.bytes = detail::bytesUnder(dirName);
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - progress.t0).count();
  return st;
}

}  // namespace gnn::bench
