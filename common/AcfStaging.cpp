#include "common/AcfStaging.h"

#include "common/FileIO.h"
#include "common/OwnedDir.h"
#include "common/Sha256.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ciq {
namespace {

// The folders an ACF may be staged in, best first. Each is used only once
// ensureOwnedDir has made it and found it this user's own: a folder another
// user can write to (a /tmp/ciq-<uid> made by them first) would let them
// swap the staged file, or plant a link that ciq's copy writes through.
std::vector<std::string> stagingDirs() {
  std::vector<std::string> dirs;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
    dirs.push_back(std::string(x) + "/ciq/acf");
  if (const char *h = std::getenv("HOME"); h && *h == '/')
    dirs.push_back(std::string(h) + "/.cache/ciq/acf");
  std::string ignored;
  if (auto tmp = userTempDir(ignored))
    dirs.push_back(*tmp + "/acf");
  return dirs;
}

// Copies `from` to `to` through a temporary file beside it, so a concurrent
// compile never reads half an ACF.
bool copyInto(const std::string &from, const std::string &to) {
  auto bytes = readWholeFile(from);
  std::string error;
  return bytes && writeFileAtomically(to, *bytes, error);
}

} // namespace

bool acfPathIsPlain(const std::string &path) {
  return !path.empty() &&
         path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@") ==
             std::string::npos;
}

std::optional<std::string> plainAcfPath(const std::string &path, std::string &error) {
  if (acfPathIsPlain(path))
    return path;
  auto actual = sha256File(path);
  if (!actual) {
    error = "ACF " + path + " cannot be read";
    return std::nullopt;
  }
  const std::string &want = *actual;
  for (const auto &dir : stagingDirs()) {
    std::string unsafe;
    if (!acfPathIsPlain(dir) || !ensureOwnedDir(dir, unsafe))
      continue;
    std::string staged = dir + "/" + want + ".acf";
    if (sha256File(staged) == want || (copyInto(path, staged) && sha256File(staged) == want))
      return staged;
  }
  error = "ACF " + path + " holds characters nvcc would split the path at, and no folder to copy it to " +
          "without them could be written (tried $XDG_CACHE_HOME/ciq/acf, $HOME/.cache/ciq/acf, <tmp>/ciq-" +
          std::to_string(geteuid()) + "/acf, each only if it is yours alone); move the file to a path without "
          "spaces or commas";
  return std::nullopt;
}

} // namespace ciq
