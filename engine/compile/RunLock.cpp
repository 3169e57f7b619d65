#include "engine/compile/RunLock.h"
#include "common/DiskFault.h"
#include "common/OwnedDir.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq {

RunLock::~RunLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the flock
}

bool RunLock::lockFile(const std::string &path, const std::string &mine, std::string &holder,
                       std::string &error) {
  error.clear(); // empty on a false return: another process holds the lock
  // A link there (planted before the folder was checked) would have the pid
  // written over the file it names.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0644);
  if (fd < 0) {
    int err = errno;
    // A disk fault names its errno and what to do about it (a read-only
    // run directory said only "check the permissions"; issue 51 item 8).
    error = "cannot open " + path + ": " +
            (err == ELOOP    ? std::string(std::strerror(err)) + " (a symbolic link in its place: remove it)"
             : isDiskFault(err) ? errnoText(err) + "; " + remedyFor(err) +
                                     " (or give the search a run_dir: on a writable disk), then run it again"
                                : std::string(std::strerror(err)) + "; check the permissions of its folder");
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = "cannot use " + path + ": not a regular file; remove it";
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[4096] = {0};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    holder = n > 0 ? std::string(buf, (size_t)n) : "";
    ::close(fd);
    return false;
  }
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, mine.data(), mine.size(), 0) < 0) {
    // the lock holds anyway; the text is only for the message of the next
  }
  fd_ = fd;
  return true;
}

namespace {

// Line `n` (0: the pid) of a lock file's text, "?" when absent.
std::string holderLine(const std::string &text, size_t n) {
  llvm::SmallVector<llvm::StringRef, 4> lines;
  llvm::StringRef(text).split(lines, '\n');
  llvm::StringRef line = n < lines.size() ? lines[n].trim() : "";
  return line.empty() ? "?" : line.str();
}

} // namespace

bool RunLock::acquire(const std::string &runDir, const std::string &what, std::string &error) {
  if (!checkRunDir(runDir, /*create=*/true, error))
    return false;
  std::string holder;
  if (lockFile(runDir + "/engine.lock", std::to_string(::getpid()) + "\n", holder, error))
    return true;
  if (error.empty())
    error = "a search of " + what + " is already running in " + runDir + " (pid " + holderLine(holder, 0) +
            "); follow it with `ciq status`, end it with `ciq stop`, then start again";
  return false;
}

bool RunLock::acquireBuildTree(const std::string &buildDir, const std::string &runDir, std::string &error) {
  std::string dir = buildDir + "/CMakeFiles";
  if (!llvm::sys::fs::is_directory(dir))
    return true;
  std::string holder;
  if (lockFile(dir + "/ciq-engine.lock", std::to_string(::getpid()) + "\n" + runDir + "\n", holder, error))
    return true;
  if (error.empty())
    error = "another ciq (pid " + holderLine(holder, 0) + ", run directory " + holderLine(holder, 1) +
            ") is building candidates in " + buildDir + "; two at once overwrite each other's objects: wait for "
            "it to end (or end it with `ciq stop`), or give this search a build tree of its own";
  return false;
}

} // namespace ciq
