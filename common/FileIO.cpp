#include "common/FileIO.h"
#include "common/DiskFault.h"
#include "common/EnvNames.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <unistd.h>

namespace ciq {

namespace {

bool syncPath(const std::string &path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

// 0, or the errno of the open, a write, the fsync (durable) or the close.
int writeFile(const std::string &path, const std::string &bytes, bool durable) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  size_t off = 0;
  int err = 0;
  while (off < bytes.size() && !err) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      err = n < 0 ? errno : ENOSPC;
    else
      off += n;
  }
  if (!err && durable && fsync(fd) != 0)
    err = errno;
  if (::close(fd) != 0 && !err)
    err = errno;
  return err;
}

// The test hook of CIQ_TEST_KILL_BEFORE_RENAME (EnvNames.def): a kill -9
// that lands between the temporary file and the rename, where no polling
// kill ever landed, so the tests can prove the old file is what remains.
void killHereIfAsked(const std::string &path) {
  const char *v = getenv(env::TestKillBeforeRename);
  if (!v || !*v)
    return;
  llvm::StringRef spec(v), name = spec.split(':').first, nth = spec.split(':').second;
  static std::atomic<int> seen{0};
  unsigned n = 1;
  if (llvm::sys::path::filename(path) != name || (!nth.empty() && nth.getAsInteger(10, n)))
    return;
  if ((unsigned)++seen == n)
    ::kill(getpid(), SIGKILL);
}

} // namespace

std::optional<std::string> readWholeFile(const std::string &path, std::string *error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf) {
    if (error)
      *error = path + ": cannot be read (" + buf.getError().message() + ")";
    return std::nullopt;
  }
  return (*buf)->getBuffer().str();
}

std::optional<std::string> readOwnFile(const std::string &path, size_t maxBytes, int dirFd) {
  int fd = ::openat(dirFd, path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  std::optional<std::string> bytes;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (size_t)st.st_size <= maxBytes) {
    std::string buf((size_t)st.st_size, '\0');
    ssize_t n = ::pread(fd, buf.data(), buf.size(), 0);
    if (n >= 0)
      bytes = buf.substr(0, (size_t)n);
  }
  ::close(fd);
  return bytes;
}

namespace {
const char *kindOfFile(mode_t m) {
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISDIR(m))
    return "a folder";
  if (S_ISCHR(m) || S_ISBLK(m))
    return "a device";
  if (S_ISSOCK(m))
    return "a socket";
  return "not a regular file";
}
} // namespace

std::optional<std::string> readRegularFile(const std::string &path, size_t maxBytes, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    error = path + (e == ELOOP ? ": is a symbolic link; ciq reads no link here (remove it)"
                               : ": cannot be read (" + std::string(strerror(e)) + ")");
    return std::nullopt;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + ": is " + kindOfFile(st.st_mode) + ", not a regular file; ciq does not read it (remove it)";
    ::close(fd);
    return std::nullopt;
  }
  // Read at most maxBytes + 1: a file that grows while read is bounded too.
  std::string bytes;
  char buf[65536];
  while (bytes.size() <= maxBytes) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, maxBytes + 1 - bytes.size()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = path + ": cannot be read (" + std::string(strerror(errno)) + ")";
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0)
      break;
    bytes.append(buf, (size_t)n);
  }
  ::close(fd);
  if (bytes.size() > maxBytes) {
    error = path + ": larger than " + std::to_string(maxBytes) + " bytes; not read";
    return std::nullopt;
  }
  return bytes;
}

bool writeFileAtomically(const std::string &path, const std::string &bytes, std::string &error, bool durable,
                         int *errNo) {
  int unused;
  int &err = errNo ? *errNo : unused;
  err = 0;
  std::string dir = llvm::sys::path::parent_path(path).str();
  if (!dir.empty())
    if (auto ec = llvm::sys::fs::create_directories(dir)) {
      err = ec.value();
      error = "cannot create the folder of " + path + ": " + ec.message();
      return false;
    }
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  // Every write, the fsync and the close are checked: a full or read-only
  // disk is said with its errno (the caller may have to stop on it).
  if ((err = writeFile(tmp, bytes, durable))) {
    error = "cannot write " + tmp + ": " + errnoText(err);
    llvm::sys::fs::remove(tmp);
    return false;
  }
  killHereIfAsked(path);
  if (auto ec = llvm::sys::fs::rename(tmp, path)) {
    err = ec.value();
    error = "cannot rename " + tmp + " to " + path + ": " + ec.message();
    llvm::sys::fs::remove(tmp);
    return false;
  }
  if (durable && !dir.empty())
    syncPath(dir, O_RDONLY | O_DIRECTORY); // the rename itself survives a crash
  return true;
}

bool canCreateFileIn(const std::string &dir, std::string &error, int *errNo) {
  int unused;
  int &err = errNo ? *errNo : unused;
  if (!llvm::sys::fs::is_directory(dir)) {
    err = llvm::sys::fs::exists(dir) ? ENOTDIR : ENOENT;
    error = dir + ": " + (err == ENOENT ? "no such folder" : "not a folder");
    return false;
  }
  llvm::SmallString<256> probe;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createUniqueFile(dir + "/.ciq-probe-%%%%%%%%", fd, probe)) {
    err = ec.value();
    error = dir + ": cannot create a file in it: " + errnoText(err);
    return false;
  }
  ::close(fd);
  llvm::sys::fs::remove(probe);
  err = 0;
  return true;
}

bool removeTree(const std::string &path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0)
    return errno == ENOENT;
  if (!S_ISDIR(st.st_mode))
    return !llvm::sys::fs::remove(path);
  return !llvm::sys::fs::remove_directories(path);
}

// The temporary copies "<name>.tmp.<pid>" that a writer killed before its
// rename left beside `path` (a kill -9 of ciq tune while it wrote the lock
// left one in the project's source folder, for `git add` to commit): those
// of a process no longer alive on this host go. A live writer's is kept.
void removeKilledWritersTemps(const std::string &path) {
  std::string dir = llvm::sys::path::parent_path(path).str();
  std::string prefix = llvm::sys::path::filename(path).str() + ".tmp.";
  std::error_code ec;
  std::vector<std::string> dead;
  for (llvm::sys::fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    long pid = 0;
    if (!name.startswith(prefix) || name.drop_front(prefix.size()).getAsInteger(10, pid) || pid <= 0 ||
        pid == getpid())
      continue;
    if (::kill((pid_t)pid, 0) != 0 && errno == ESRCH)
      dead.push_back(it->path());
  }
  for (const auto &f : dead)
    llvm::sys::fs::remove(f);
}

} // namespace ciq
