#include "common/CompileTemp.h"
#include "common/ProcessTrack.h"

#include <cstdlib>
#include <dirent.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq::wrapper {

namespace {
const char kPrefix[] = "ciq-compile-";
} // namespace

CompileTemp::CompileTemp() {
  llvm::SmallString<128> dir;
  // Under $TMPDIR (LLVM's system temporary folder), so a user's choice of
  // where temporary files go still holds. Named by this process's pid and
  // start time: a compile killed with SIGKILL (the compile timeout, a killed
  // engine's build) runs no destructor, and the next tune tells its folder
  // from a live compile's by them (removeStaleCompileTemps).
  std::string prefix = std::string(kPrefix) + std::to_string(getpid()) + "." + std::to_string(processStartTime(getpid()));
  if (!llvm::sys::fs::createUniqueDirectory(prefix, dir))
    path_ = dir.str().str();
}

CompileTemp::~CompileTemp() {
  if (!path_.empty())
    llvm::sys::fs::remove_directories(path_, /*IgnoreErrors=*/true);
}

int removeStaleCompileTemps(const std::string &tmpDir) {
  DIR *d = opendir(tmpDir.c_str());
  if (!d)
    return 0;
  int removed = 0;
  while (dirent *e = readdir(d)) {
    llvm::StringRef name(e->d_name);
    if (!name.consume_front(kPrefix))
      continue;
    // <pid>.<start>-XXXXXX; a folder of an older ciq (no owner in its name)
    // may still be in use: left alone.
    auto [pidText, rest] = name.split('.');
    llvm::StringRef startText = rest.split('-').first;
    int pid = 0;
    unsigned long long start = 0;
    if (pidText.getAsInteger(10, pid) || startText.getAsInteger(10, start) || pid <= 0 || start == 0)
      continue;
    std::string path = tmpDir + "/" + e->d_name;
    struct stat st;
    // Only this user's own folders, never a link (a shared /tmp).
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
      continue;
    if (processStartTime(pid) == start)
      continue; // its compile still runs
    llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
    removed += !llvm::sys::fs::exists(path);
  }
  closedir(d);
  return removed;
}

} // namespace ciq::wrapper
