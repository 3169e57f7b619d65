#include "common/AcfStaging.h"

#include "common/FileIO.h"
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

// Creates each missing folder of `dir` (mode 0700: only this user's builds read it).
bool makeDirs(const std::string &dir) {
  for (size_t p = 1; p <= dir.size(); ++p)
    if (p == dir.size() || dir[p] == '/')
      if (mkdir(dir.substr(0, p).c_str(), 0700) != 0 && errno != EEXIST)
        return false;
  return true;
}

// A folder that only this user can write (not a link put there by someone else).
bool ownedPrivateDir(const std::string &dir) {
  struct stat st;
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
         (st.st_mode & 022) == 0;
}

std::vector<std::string> stagingDirs() {
  std::vector<std::string> dirs;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
    dirs.push_back(std::string(x) + "/ciq/acf");
  if (const char *h = std::getenv("HOME"); h && *h == '/')
    dirs.push_back(std::string(h) + "/.cache/ciq/acf");
  dirs.push_back("/tmp/ciq-" + std::to_string(getuid()) + "/acf");
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
    if (!acfPathIsPlain(dir) || !makeDirs(dir) || !ownedPrivateDir(dir))
      continue;
    std::string staged = dir + "/" + want + ".acf";
    if (sha256File(staged) == want || (copyInto(path, staged) && sha256File(staged) == want))
      return staged;
  }
  error = "ACF " + path + " holds characters nvcc would split the path at, and no folder to copy it to " +
          "without them could be written (tried $XDG_CACHE_HOME/ciq/acf, $HOME/.cache/ciq/acf, /tmp/ciq-" +
          std::to_string(getuid()) + "/acf); move the file to a path without spaces or commas";
  return std::nullopt;
}

} // namespace ciq
