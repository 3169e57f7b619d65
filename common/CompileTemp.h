// A private temporary folder for one compile (issue 41 item 9). nvcc writes
// its intermediates to $TMPDIR (tmpxft_<pid>_..._k.cudafe1.cpp, .ptx,
// .fatbin.c) and removes them when it ends, but not when the compile timeout
// ends its process group: three files per killed compile, left for good.
// The compiler gets its own folder under the real $TMPDIR as its TMPDIR, and
// the folder goes, with whatever is left in it, when the compile ends.
#pragma once
#include <string>

namespace ciq::wrapper {

class CompileTemp {
public:
  CompileTemp();  // path() "" when the folder cannot be made: the compile uses $TMPDIR as before
  ~CompileTemp(); // removes the folder and what is left in it
  CompileTemp(const CompileTemp &) = delete;
  CompileTemp &operator=(const CompileTemp &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

// Removes the folders of compiles that were killed (SIGKILL runs no
// destructor) from `tmpDir`: only this user's, only those whose compile is
// gone (the pid and start time in the name name no running process). The
// number removed.
int removeStaleCompileTemps(const std::string &tmpDir);

} // namespace ciq::wrapper
