#include "engine/GpuLock.h"
#include "common/EnvNames.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq {

std::string gpuLockDir() {
  if (const char *d = getenv(env::GpuLockDir); d && *d)
    return d;
  llvm::SmallString<128> tmp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
  llvm::sys::path::append(tmp, "ciq-gpu-locks");
  return std::string(tmp);
}

namespace {

// A GPU UUID ("GPU-1a2b...") as a file name: only [A-Za-z0-9._-].
std::string fileKey(const std::string &key) {
  std::string k;
  for (char c : key)
    k += isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_' ? c : '_';
  return k.empty() ? "host" : k;
}

std::string readHolder(int fd) {
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, (size_t)n) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
    s.pop_back();
  return s.empty() ? "another process" : s;
}

} // namespace

bool GpuLock::acquire(const std::string &key, const std::string &holder, std::string &error,
                      const std::function<void(const std::string &)> &waiting) {
  release();
  std::string dir = gpuLockDir();
  // Every user's searches meet here: world-writable and sticky, like /tmp.
  if (mkdir(dir.c_str(), 01777) == 0)
    chmod(dir.c_str(), 01777);
  path_ = dir + "/" + fileKey(key) + ".lock";
  int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0)
    fchmod(fd, 0666); // umask must not keep other users out
  else
    fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC); // another user's file: flock works read-only
  if (fd < 0) {
    error = "cannot open the GPU lock " + path_ + ": " + strerror(errno) + "; set CIQ_GPU_LOCK_DIR to a directory "
            "every user of this GPU can write";
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      error = "cannot lock " + path_ + ": " + strerror(errno);
      close(fd);
      return false;
    }
    if (waiting)
      waiting(readHolder(fd));
    while (flock(fd, LOCK_EX) != 0)
      if (errno != EINTR) {
        error = "cannot lock " + path_ + ": " + strerror(errno);
        close(fd);
        return false;
      }
  }
  std::string line = holder + "\n";
  if (ftruncate(fd, 0) == 0)
    (void)!pwrite(fd, line.data(), line.size(), 0);
  fd_ = fd;
  return true;
}

void GpuLock::release() {
  if (fd_ < 0)
    return;
  (void)!ftruncate(fd_, 0);
  flock(fd_, LOCK_UN);
  close(fd_);
  fd_ = -1;
}

} // namespace ciq
