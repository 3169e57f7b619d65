// A file or folder of this test process's own under the temporary folder: a
// unique name, created exclusively, removed when it goes out of scope. Two
// `make check` run at once on one host: a fixed name in /tmp let one run's
// test read, append to or remove the other's (a pid file holding the other
// run's child, an order log with both runs' letters).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <llvm/Support/FileSystem.h>
#include <string>

namespace ciq::test {

// Also reached at static initialization (before GoogleTest runs): there is
// no test to fail, so it stops the process with the reason.
[[noreturn]] inline void scratchFailed(const char *what, const char *prefix, std::error_code ec) {
  std::fprintf(stderr, "cannot create a temporary %s %s-*: %s\n", what, prefix, ec.message().c_str());
  std::abort();
}

class ScratchFile {
public:
  // Created empty: <tmp>/<prefix>-XXXXXX.<suffix>.
  ScratchFile(const char *prefix, const char *suffix) {
    llvm::SmallString<128> p;
    if (auto ec = llvm::sys::fs::createTemporaryFile(prefix, suffix, p))
      scratchFailed("file", prefix, ec);
    path_ = p.str().str();
  }
  ~ScratchFile() { llvm::sys::fs::remove(path_); }
  ScratchFile(const ScratchFile &) = delete;
  ScratchFile &operator=(const ScratchFile &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

class ScratchDir {
public:
  // <tmp>/<prefix>-XXXXXX, with what a test puts in it.
  explicit ScratchDir(const char *prefix) {
    llvm::SmallString<128> p;
    if (auto ec = llvm::sys::fs::createUniqueDirectory(prefix, p))
      scratchFailed("folder", prefix, ec);
    path_ = p.str().str();
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(path_); }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

} // namespace ciq::test
