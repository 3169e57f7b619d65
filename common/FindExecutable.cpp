#include "common/FindExecutable.h"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq {
namespace {

// The path with links resolved, or as given when it does not resolve.
std::string real(const std::string &p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The first entry of the search path `p` holding a `name` (or `name`
// itself, holding a '/') that is an executable file and not refused.
template <class Refused>
std::optional<std::string> searchPath(const std::string &name, const std::string &p, Refused refused) {
  auto usable = [&](const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0 && !refused(p);
  };
  if (name.find('/') != std::string::npos)
    return usable(name) ? std::optional<std::string>(name) : std::nullopt;
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t end = p.find(':', pos);
    if (end == std::string::npos)
      end = p.size();
    std::string dir = p.substr(pos, end - pos);
    if (dir.empty())
      dir = ".";
    std::string cand = dir + "/" + name;
    if (usable(cand))
      return cand;
    pos = end + 1;
  }
  return std::nullopt;
}

// This process's PATH, or the search path execvp uses without one.
std::string ownPath() {
  const char *path = getenv("PATH");
  return path ? path : "/usr/bin:/bin";
}

std::string baseOf(const std::string &resolved) { return resolved.substr(resolved.rfind('/') + 1); }

} // namespace

std::optional<std::string> findExecutableOn(const std::string &name, const std::string &searchPathValue) {
  return searchPath(name, searchPathValue, [](const std::string &) { return false; });
}

std::optional<std::string> findExecutable(const std::string &name, const std::string &skip) {
  std::string skipReal = skip.empty() ? "" : real(skip);
  return searchPath(name, ownPath(), [&](const std::string &p) { return !skipReal.empty() && real(p) == skipReal; });
}

std::optional<std::string> findRealCompiler(const std::string &name, const std::string &skip) {
  std::string skipReal = skip.empty() ? "" : real(skip);
  return searchPath(name, ownPath(), [&](const std::string &p) {
    return (!skipReal.empty() && real(p) == skipReal) || isCiqPtxas(p) || isCompilerCache(p);
  });
}

bool isCompilerCache(const std::string &path) {
  std::string base = baseOf(real(path));
  return base == "ccache" || base == "sccache" || base == "buildcache";
}

bool isCiqPtxas(const std::string &path) {
  std::string base = baseOf(real(path));
  return base.rfind("ciq-ptxas", 0) == 0;
}

} // namespace ciq
