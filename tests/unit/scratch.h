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

class Scratch {
public:
  // A file, created empty: <tmp>/<prefix>-XXXXXX.<suffix>; with no suffix, a
  // folder <tmp>/<prefix>-XXXXXX for what a test puts in it.
  explicit Scratch(const char *prefix, const char *suffix = nullptr) : folder_(!suffix) {
    llvm::SmallString<128> p;
    std::error_code ec = folder_ ? llvm::sys::fs::createUniqueDirectory(prefix, p)
                                 : llvm::sys::fs::createTemporaryFile(prefix, suffix, p);
    if (ec) {
      // Also reached at static initialization (before GoogleTest runs): there
      // is no test to fail, so it stops the process with the reason.
      std::fprintf(stderr, "cannot create a temporary %s %s-*: %s\n", folder_ ? "folder" : "file", prefix,
                   ec.message().c_str());
      std::abort();
    }
    path_ = p.str().str();
  }
  ~Scratch() {
    if (folder_)
      llvm::sys::fs::remove_directories(path_);
    else
      llvm::sys::fs::remove(path_);
  }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  const std::string &path() const { return path_; }

private:
  bool folder_;
  std::string path_;
};

} // namespace ciq::test
