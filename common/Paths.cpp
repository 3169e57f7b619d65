#include "common/Paths.h"
#include "common/EnvNames.h"

#include <cstdlib>
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

std::string cacheDir() {
  llvm::SmallString<256> p;
  if (const char *x = getenv("XDG_CACHE_HOME"); x && *x)
    p = x;
  else {
    const char *home = getenv("HOME");
    p = home ? home : "/tmp";
    llvm::sys::path::append(p, ".cache");
  }
  llvm::sys::path::append(p, "ciq");
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

} // namespace ciq
