// An exclusive lock on a folder (flock on its descriptor), held for a
// read-modify-write of a file in it: two tunes that end at once and each
// add their section to one lockfile would otherwise both read the old file,
// and the later rename keeps only its own section. No file is made beside
// the user's lock. Where the file system takes no flock on a folder (some
// network file systems), nothing is held: held() says so.
#pragma once
#include <string>

namespace ciq {

class FolderLock {
public:
  explicit FolderLock(const std::string &dir);   // waits while another process holds it
  ~FolderLock();
  FolderLock(const FolderLock &) = delete;
  FolderLock &operator=(const FolderLock &) = delete;
  bool held() const { return held_; }

private:
  int fd_ = -1;
  bool held_ = false;
};

} // namespace ciq
