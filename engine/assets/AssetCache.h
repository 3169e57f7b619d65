// The download cache of release assets and the checks every asset passes:
// size and SHA-256 against what a manifest or catalog promises.
//
// Layout: $XDG_CACHE_HOME/ciq/<tag>/<first 12 hex of sha256>_<filename>
// (default ~/.cache/ciq). An entry is only ever created by renaming a fully
// downloaded and verified ".part-<random>" file of this process's own (two
// processes fetching one asset never write one file), and is verified again
// on every use: a corrupt entry is reported and fetched again.
#pragma once
#include "common/FileIO.h"
#include "engine/assets/Http.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ciq {


// A file name from a manifest must be one plain path component.
bool isPlainFileName(const std::string &name);
bool isSha256Hex(const std::string &s);

// Checks `path` holds `size` bytes (when size >= 0) with SHA-256 `sha256`.
// On mismatch, `error` says which and the values seen ("<what>" names the asset).
bool verifyAsset(const std::string &path, int64_t size, const std::string &sha256,
                 const std::string &what, std::string &error);

// nullopt with `error` when ciq's cache folder is not this user's own.
std::optional<std::string> cacheEntryPath(const std::string &tag, const std::string &sha256,
                                          const std::string &filename, std::string &error);

struct FetchedAsset {
  std::string path;        // verified local file
  bool fromCache = false;  // no download was needed
  std::string warning;     // e.g. a corrupt cache entry that was replaced
};

// Returns a verified cache entry for the asset, downloading `url` when the
// entry is missing or corrupt. An empty `url` means offline: only the cache.
std::optional<FetchedAsset> fetchToCache(const std::string &url, const std::string &tag,
                                         const std::string &filename, int64_t size,
                                         const std::string &sha256, const HttpSettings &http,
                                         std::string &error);

} // namespace ciq
