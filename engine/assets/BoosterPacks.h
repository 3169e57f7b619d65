// Where booster packs come from: an offline mirror (CIQ_BOOSTER_PACKS_DIR:
// booster-pack-catalog.json, SHA256SUMS.txt and the pack zips) or the
// releases of CIQ_BOOSTER_PACKS_REPO (default NVIDIA/CompileIQ) whose tag
// starts with CIQ_BP_TAG_PREFIX (default "booster-packs-"). Every file is
// checked against SHA256SUMS.txt and the catalog; zips are cached like
// search spaces and extracted under <cache>/<tag>/packs/.
#pragma once
#include "engine/assets/BoosterCatalog.h"
#include "engine/assets/PackArchive.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct BoosterSettings {
  std::string repo = "NVIDIA/CompileIQ";    // CIQ_BOOSTER_PACKS_REPO
  std::string tagPrefix = "booster-packs-";  // CIQ_BP_TAG_PREFIX
  double latestTtlDays = 7;                  // latestTagTtlDays() (Releases.h), shared with spaces
  std::string mirrorDir;                     // CIQ_BOOSTER_PACKS_DIR
  static BoosterSettings fromEnv();
};

struct LoadedCatalog {
  BoosterCatalog catalog;
  std::map<std::string, std::string> sums;   // SHA256SUMS.txt: file name -> sha256
  std::string tag;           // the release tag (mirror: the catalog's release_tag)
  std::string where;         // mirror folder or repository, for messages
  bool mirror = false;
};

// `tag`: "latest" or a release tag.
std::optional<LoadedCatalog> loadBoosterCatalog(const std::string &tag, std::string &error);

// Downloads (or finds in the mirror), verifies and extracts one pack.
// `warnings` collects lines already printed (a corrupt cache entry replaced).
std::optional<ExtractedPack> fetchBoosterPack(const LoadedCatalog &c, const BoosterPack &pack,
                                              std::vector<std::string> &warnings,
                                              std::string &error);

// The installed compiler's release ("13.0") from `ptxas --version`; nullopt
// when ptxas cannot be run.
std::optional<std::string> installedCudaVersion(const std::string &ptxas = "ptxas");

} // namespace ciq
