#include "engine/RunLock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <llvm/Support/FileSystem.h>
#include <string>
#include <sys/file.h>
#include <unistd.h>

namespace ciq {

RunLock::~RunLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the flock
}

bool RunLock::acquire(const std::string &runDir, const std::string &what, std::string &error) {
  llvm::sys::fs::create_directories(runDir);
  std::string path = runDir + "/engine.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno) + "; check the permissions of " + runDir;
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {0};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, (size_t)n) : "?";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
      pid.pop_back();
    ::close(fd);
    error = "a search of " + what + " is already running in " + runDir + " (pid " + pid +
            "); follow it with `ciq status`, end it with `ciq stop`, then start again";
    return false;
  }
  std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) < 0) {
    // the lock holds anyway; the pid is only for the message above
  }
  fd_ = fd;
  return true;
}

} // namespace ciq
