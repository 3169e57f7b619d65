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

} // namespace

std::optional<std::string> findExecutable(const std::string &name, const std::string &skip) {
  std::string skipReal = skip.empty() ? "" : real(skip);
  auto usable = [&](const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0 &&
           (skipReal.empty() || real(p) != skipReal);
  };
  if (name.find('/') != std::string::npos)
    return usable(name) ? std::optional<std::string>(name) : std::nullopt;
  const char *path = getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
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

bool isCiqPtxas(const std::string &path) {
  std::string resolved = real(path);
  std::string base = resolved.substr(resolved.rfind('/') + 1);
  return base.rfind("ciq-ptxas", 0) == 0;
}

} // namespace ciq
