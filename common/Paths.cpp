#include "common/Paths.h"
#include "common/EnvNames.h"
#include "common/OwnedDir.h"

#include <cstdlib>
#include <vector>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

static int anchor;

std::string executablePath() {
  return llvm::sys::fs::getMainExecutable("ciq", (void *)&anchor);
}

std::string binDir() { return llvm::sys::path::parent_path(executablePath()).str(); }

std::string shareDir() {
  if (const char *env = getenv(env::ShareDir); env && *env)
    return env;
  llvm::SmallString<256> p(llvm::sys::path::parent_path(binDir()));
  llvm::sys::path::append(p, "share", "ciq");
  return p.str().str();
}

std::string wrapperPath() {
  llvm::SmallString<256> p(binDir());
  llvm::sys::path::append(p, "ciq-ptxas");
  return p.str().str();
}

std::string buildGuardPath() {
  llvm::SmallString<256> p(binDir());
  llvm::sys::path::append(p, "ciq-build-guard");
  return p.str().str();
}

std::optional<std::string> cacheDir(std::string &error) {
  llvm::SmallString<256> p;
  const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  const std::string fix = "; set XDG_CACHE_HOME to a folder of your own";
  if (x && *x == '/') {
    p = x;
    llvm::sys::path::append(p, "ciq");
  } else if (home && *home == '/') {
    p = home;
    llvm::sys::path::append(p, ".cache", "ciq");
  } else {
    // Not a shared <tmp>/.cache, where another user's entries would be read.
    auto tmp = userTempDir(error);
    if (!tmp) {
      error = "ciq's cache folder: " + error + fix;
      return std::nullopt;
    }
    p = *tmp;
    llvm::sys::path::append(p, "cache");
  }
  if (!ensureOwnedDir(p.str().str(), error)) {
    error = "ciq's cache folder: " + error + fix;
    return std::nullopt;
  }
  return p.str().str();
}

std::string absolutePath(const std::string &p, const std::string &base) {
  llvm::SmallString<256> s;
  if (llvm::sys::path::is_absolute(p))
    s = p;
  else {
    s = base;
    llvm::sys::path::append(s, p);
  }
  llvm::sys::path::remove_dots(s, true);
  return s.str().str();
}

// ciq-ptxas names a compile's output from getcwd(), which resolves symbolic
// links, while compile_commands.json keeps the path the build tree was
// configured under (a build folder reached through a link): both sides of a
// comparison go through this. The deepest existing folder is resolved, and
// the rest (an object folder Ninja creates on its first build) appended; the
// file itself is never resolved (a cache may link objects).
std::string physicalPath(const std::string &p) {
  if (!llvm::sys::path::is_absolute(p))
    return p;
  llvm::StringRef dir = llvm::sys::path::parent_path(p);
  std::vector<llvm::StringRef> rest = {llvm::sys::path::filename(p)};
  while (!dir.empty()) {
    llvm::SmallString<256> real;
    if (!llvm::sys::fs::real_path(dir, real)) {
      for (auto it = rest.rbegin(); it != rest.rend(); ++it)
        llvm::sys::path::append(real, *it);
      return real.str().str();
    }
    rest.push_back(llvm::sys::path::filename(dir));
    llvm::StringRef up = llvm::sys::path::parent_path(dir);
    if (up == dir)
      break;
    dir = up;
  }
  return p;
}

} // namespace ciq
