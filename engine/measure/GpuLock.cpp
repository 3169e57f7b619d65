#include "engine/measure/GpuLock.h"
#include "common/EnvNames.h"
#include "common/OwnedDir.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ciq {

namespace {

// The holder's line is written as a record of this size, over the old one in
// place: a lock file of another user's is never truncated.
constexpr size_t kRecord = 256;

const char *const kFix = "set CIQ_GPU_LOCK_DIR to a folder owned by root with mode 1777 that every user of this GPU "
                         "shares (or to a folder of your own)";

bool explicitDir() {
  const char *d = getenv(env::GpuLockDir);
  return d && *d;
}

// A GPU UUID ("GPU-1a2b...") as a file name: only [A-Za-z0-9._-].
std::string fileKey(const std::string &key) {
  std::string k;
  for (char c : key)
    k += isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_' ? c : '_';
  return k.empty() ? "host" : k;
}

std::string lockName(const std::string &key) {
  return explicitDir() ? fileKey(key) + ".lock" : "ciq-gpu-" + fileKey(key) + ".lock";
}

// The components of an absolute path, in order ("." dropped).
std::vector<std::string> componentsOf(const std::string &path) {
  std::vector<std::string> out;
  for (auto it = llvm::sys::path::begin(path), end = llvm::sys::path::end(path); it != end; ++it)
    if (*it != "/" && *it != ".")
      out.push_back(it->str());
  return out;
}

// The path to the lock folder as the kernel resolves it, one component at a
// time, links followed: every link on the way must be root's or ours, and
// every folder above the lock folder root's or ours and, where others may
// write to it, sticky (sharedFolderProblem). A link another user planted as
// $CIQ_GPU_LOCK_DIR (to a folder of root's) passed the check of the folder
// it points to, and root then made a lock file where the link led. "" when
// the path is sound, or a component is missing (the open says so).
std::string pathProblem(const std::string &dir) {
  llvm::SmallString<256> abs(dir);
  llvm::sys::fs::make_absolute(abs);
  std::vector<std::string> todo = componentsOf(std::string(abs));
  std::reverse(todo.begin(), todo.end()); // a stack: the next component last
  std::string at;                         // resolved so far ("" is "/")
  for (int links = 0; !todo.empty();) {
    std::string name = todo.back();
    todo.pop_back();
    if (name == "..") {
      at = llvm::sys::path::parent_path(at).str();
      continue;
    }
    std::string next = at + "/" + name;
    struct stat st;
    if (lstat(next.c_str(), &st) != 0)
      return "";
    if (S_ISLNK(st.st_mode)) {
      if (st.st_uid != 0 && st.st_uid != geteuid())
        return next + " is a symbolic link of uid " + std::to_string(st.st_uid) + ", not of root or you";
      char target[PATH_MAX];
      ssize_t n = readlink(next.c_str(), target, sizeof target - 1);
      if (n < 0 || ++links > 40)
        return next + ": cannot follow its link";
      std::string to(target, n);
      if (!to.empty() && to[0] == '/')
        at.clear();
      std::vector<std::string> more = componentsOf(to);
      todo.insert(todo.end(), more.rbegin(), more.rend());
      continue;
    }
    if (!todo.empty()) // a folder above the lock folder (which openLockDir checks itself)
      if (std::string wrong = sharedFolderProblem(st); !wrong.empty())
        return next + " (above the lock folder) " + wrong;
    at = next;
  }
  return "";
}

// The folder, as a descriptor the lock file is opened relative to (so the
// folder cannot be swapped after the check). It must be root's or ours, and
// sticky where others may create files: else another user could rename the
// lock a search holds, or replace it with a link.
int openLockDir(const std::string &dir, std::string &error) {
  if (std::string wrong = pathProblem(dir); !wrong.empty()) {
    error = "the GPU lock folder " + dir + " is not one to trust: " + wrong +
            "; another user could point it at any folder, or swap the lock files for links to your files; " + kFix;
    return -1;
  }
  if (explicitDir() && mkdir(dir.c_str(), 01777) == 0)
    chmod(dir.c_str(), 01777); // a missing $CIQ_GPU_LOCK_DIR is made shared, like /tmp
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    error = "cannot open the GPU lock folder " + dir + ": " + strerror(errno) + "; " + kFix;
    return -1;
  }
  struct stat st;
  std::string wrong = fstat(dfd, &st) != 0 ? std::string("cannot be inspected: ") + strerror(errno)
                                           : sharedFolderProblem(st);
  if (wrong.empty())
    return dfd;
  close(dfd);
  error = "the GPU lock folder " + dir + " " + wrong + ": another user could swap the lock files for links to "
          "your files; " + kFix;
  return -1;
}

// The lock file: never through a link, and only a regular file with one name
// (a hard link to someone's file would otherwise be written). `writable`:
// the holder's record may be written (the file is ours, or its owner's ciq
// made it writable by everyone).
int openLockFile(int dfd, const std::string &name, const std::string &path, bool &writable, std::string &error) {
  const int flags = O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK; // O_NONBLOCK: a FIFO in its place cannot hang us
  int fd = openat(dfd, name.c_str(), O_RDWR | O_CREAT | flags, 0666);
  // Another user's lock: fs.protected_regular refuses O_CREAT on it even
  // when its mode lets us write, and flock works on a read-only descriptor.
  for (int mode : {O_RDWR, O_RDONLY})
    if (fd < 0 && errno == EACCES)
      fd = openat(dfd, name.c_str(), mode | flags);
  if (fd < 0) {
    if (errno == ELOOP)
      error = "the GPU lock " + path + " is a symbolic link, which ciq never opens (another user may have planted "
              "it to make ciq write where it points); remove it, or " + kFix;
    else
      error = "cannot open the GPU lock " + path + ": " + strerror(errno) + "; " + kFix;
    return -1;
  }
  struct stat st;
  std::string wrong;
  if (fstat(fd, &st) != 0)
    wrong = std::string("cannot be inspected: ") + strerror(errno);
  else if (!S_ISREG(st.st_mode))
    wrong = "is not a regular file";
  else if (st.st_nlink != 1)
    wrong = "has " + std::to_string(st.st_nlink) + " names (a hard link to another file)";
  if (!wrong.empty()) {
    close(fd);
    error = "the GPU lock " + path + " " + wrong + ", which ciq never uses as a lock; remove it, or " + kFix;
    return -1;
  }
  bool rw = (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
  if (st.st_uid == geteuid()) {
    fchmod(fd, 0666); // ours: the umask must not keep other users out
    writable = rw;
  } else
    writable = rw && (st.st_mode & 0002);
  return fd;
}

std::string readHolder(int fd) {
  char buf[kRecord + 1];
  ssize_t n = pread(fd, buf, kRecord, 0);
  std::string s = n > 0 ? std::string(buf, strnlen(buf, (size_t)n)) : "";
  while (!s.empty() && s.back() == '\n')
    s.pop_back();
  return s.empty() ? "another process" : s;
}

void writeRecord(int fd, const std::string &line) {
  std::string rec = line.substr(0, kRecord - 1) + (line.empty() ? "" : "\n");
  rec.resize(kRecord, '\0');
  (void)!pwrite(fd, rec.data(), rec.size(), 0);
}

} // namespace

std::string gpuLockDir() {
  if (explicitDir())
    return getenv(env::GpuLockDir);
  llvm::SmallString<128> tmp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
  return std::string(tmp);
}

std::string gpuLockPath(const std::string &key) { return gpuLockDir() + "/" + lockName(key); }

bool GpuLock::acquire(const std::string &key, const std::string &holder, std::string &error,
                      const std::function<void(const std::string &)> &waiting) {
  release();
  path_ = gpuLockPath(key);
  int dfd = openLockDir(gpuLockDir(), error);
  if (dfd < 0)
    return false;
  bool writable = false;
  int fd = openLockFile(dfd, lockName(key), path_, writable, error);
  close(dfd);
  if (fd < 0)
    return false;
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
  if (writable)
    writeRecord(fd, holder);
  fd_ = fd;
  writable_ = writable;
  return true;
}

void GpuLock::release() {
  if (fd_ < 0)
    return;
  if (writable_)
    writeRecord(fd_, "");
  flock(fd_, LOCK_UN);
  close(fd_);
  fd_ = -1;
  writable_ = false;
}

} // namespace ciq
