#include "common/FolderLock.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ciq {

FolderLock::FolderLock(const std::string &dir) {
  fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0)
    return;
  int r;
  while ((r = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
  }
  held_ = r == 0;
}

FolderLock::~FolderLock() {
  if (fd_ < 0)
    return;
  if (held_)
    ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

} // namespace ciq
