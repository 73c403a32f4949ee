#include "data/Pcqm4mv2Reader.h"

#include <filesystem>

namespace gnn {

namespace fs = std::filesystem;

std::string Pcqm4mv2Reader::dataFile(const std::string& path) {
  if (!fs::is_directory(path)) return path;
  for (const char* name : {"raw/data.csv.gz", "raw/data.csv"})
    if (fs::exists(fs::path(path) / name)) return (fs::path(path) / name).string();
  throw InputError(path, 0, "not a PCQM4Mv2 root: raw/data.csv.gz is missing");
}

std::string Pcqm4mv2Reader::rootOf(const std::string& path) {
  if (fs::is_directory(path)) return path;
  fs::path p = fs::absolute(path).parent_path();
  return p.filename() == "raw" ? p.parent_path().string() : p.string();
}

Pcqm4mv2Reader::Pcqm4mv2Reader(const std::string& path)
    : csv_(dataFile(path), "smiles", {"homolumogap"}, "idx") {}

std::map<std::string, std::vector<int64_t>> Pcqm4mv2Reader::readSplits(const std::string& path) {
  std::map<std::string, std::vector<int64_t>> splits;
  const fs::path dir = fs::path(rootOf(path)) / "split";
  if (!fs::is_directory(dir)) return splits;
  for (const char* name : {"train", "valid", "test", "test-dev", "test-challenge"}) {
    for (const char* ext : {".csv.gz", ".csv"}) {
      const fs::path file = dir / (std::string(name) + ext);
      if (!fs::exists(file)) continue;
      GzLineReader in(file.string());
      std::string_view line;
      std::vector<int64_t>& ids = splits[name];
      while (in.next(line))
        if (!line.empty()) ids.push_back(parseInt(line, in));
      break;
    }
  }
  return splits;
}

std::string Pcqm4mv2Reader::splitHint(const std::string& path) {
  const fs::path root = rootOf(path);
  if (fs::is_directory(root / "split") || !fs::exists(root / "split_dict.pt")) return "";
  return (root / "split_dict.pt").string() +
         " holds OGB's official split as a PyTorch pickle, which is not read here; convert it once with\n"
         "  python3 -c \"import gzip, os, sys, torch; r = sys.argv[1]; d = torch.load(os.path.join(r, 'split_dict.pt')); "
         "os.makedirs(os.path.join(r, 'split'), exist_ok=True); "
         "[gzip.open(os.path.join(r, 'split', k + '.csv.gz'), 'wt').write(''.join('%d\\n' % int(i) for i in v)) "
         "for k, v in d.items()]\" " +
         root.string() + "\n(without a split, every 10th molecule validates and the next one tests)";
}

}  // namespace gnn
