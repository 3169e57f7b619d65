// Reads a booster-pack zip with libarchive: its booster-pack-manifest.json
// and .acf files, each checked against the catalog's SHA-256 and size.
// Entries are never written where the zip says: an absolute path, a ".."
// component or a link is refused, and every file lands, by its base name,
// in a folder ciq chose.
#pragma once
#include "engine/assets/BoosterCatalog.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct ExtractedAcf {
  PackAcf ref;          // as the catalog lists it
  std::string path;    // absolute path of the extracted, verified file
};

struct ExtractedPack {
  std::string dir;             // <cache>/<tag>/packs/<pack_id>-<first 12 hex of artifact sha256>
  std::string manifestPath;    // the extracted booster-pack-manifest.json
  std::vector<ExtractedAcf> acfs;   // in catalog order
};

// Unsafe entry names: absolute paths, drive letters, ".." components.
bool isUnsafeEntryName(const std::string &name);

// Extracts `zipPath` into `destDir` (replaced atomically; reused when it
// already holds verified files).
std::optional<ExtractedPack> extractPack(const std::string &zipPath, const BoosterPack &pack,
                                         const std::string &destDir, std::string &error);

} // namespace ciq
