#include "engine/assets/AssetCache.h"

#include "common/Paths.h"
#include "common/Sha256.h"

#include <cstdio>
#include <fstream>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <sstream>
#include <unistd.h>

namespace ciq {

bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

bool isSha256Hex(const std::string &s) {
  if (s.size() != 64)
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

bool verifyAsset(const std::string &path, int64_t size, const std::string &sha256,
                 const std::string &what, std::string &error) {
  uint64_t actual = 0;
  if (auto ec = llvm::sys::fs::file_size(path, actual)) {
    error = "cannot read " + what + " at " + path + ": " + ec.message();
    return false;
  }
  if (size >= 0 && actual != (uint64_t)size) {
    error = "size mismatch for " + what + " (" + path + "): " + std::to_string(actual) +
            " bytes, expected " + std::to_string(size);
    return false;
  }
  auto hash = sha256File(path);
  if (!hash) {
    error = "cannot read " + what + " at " + path;
    return false;
  }
  if (*hash != sha256) {
    error = "checksum mismatch for " + what + " (" + path + "): SHA-256 " + *hash +
            ", expected " + sha256;
    return false;
  }
  return true;
}

std::optional<std::string> cacheEntryPath(const std::string &tag, const std::string &sha256,
                                          const std::string &filename, std::string &error) {
  auto dir = cacheDir(error);
  if (!dir)
    return std::nullopt;
  llvm::SmallString<256> p(*dir);
  llvm::sys::path::append(p, tag, sha256.substr(0, 12) + "_" + filename);
  return p.str().str();
}

std::optional<FetchedAsset> fetchToCache(const std::string &url, const std::string &tag,
                                         const std::string &filename, int64_t size,
                                         const std::string &sha256, const HttpSettings &http,
                                         std::string &error) {
  FetchedAsset out;
  auto entry = cacheEntryPath(tag, sha256, filename, error);
  if (!entry)
    return std::nullopt;
  out.path = *entry;
  const std::string what = filename + " of release " + tag;
  if (llvm::sys::fs::exists(out.path)) {
    std::string why;
    if (verifyAsset(out.path, size, sha256, "cached " + what, why)) {
      out.fromCache = true;
      return out;
    }
    // Replaced by the rename below, not removed first: a parallel fetch may
    // be renaming a good copy into place right now.
    out.warning = why + "; fetching it again";
  }
  if (url.empty()) {
    error = "no cached copy of " + what + " (" + out.path + ") and no network source for it";
    return std::nullopt;
  }
  if (auto ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(out.path))) {
    error = "cannot create the cache folder " + llvm::sys::path::parent_path(out.path).str() +
            ": " + ec.message() + "; set XDG_CACHE_HOME to a writable folder";
    return std::nullopt;
  }
  // A name of this download's own: parallel fetches of one asset (several
  // `ciq spaces fetch`, searches starting together) each write their own
  // file, and the last rename leaves one verified copy.
  llvm::SmallString<256> unique;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createUniqueFile(out.path + ".part-%%%%%%%%", fd, unique)) {
    error = "cannot create a download file beside " + out.path + ": " + ec.message() +
            "; set XDG_CACHE_HOME to a writable folder";
    return std::nullopt;
  }
  close(fd);
  const std::string part = unique.str().str();
  HttpResponse resp = httpDownload(url, part, size, http);
  if (!resp.ok) {
    error = resp.error;
    return std::nullopt;
  }
  if (!verifyAsset(part, size, sha256, what + " downloaded from " + url, error)) {
    llvm::sys::fs::remove(part);
    return std::nullopt;
  }
  if (auto ec = llvm::sys::fs::rename(part, out.path)) {
    error = "cannot move " + part + " into the cache: " + ec.message();
    llvm::sys::fs::remove(part);
    return std::nullopt;
  }
  return out;
}

} // namespace ciq
