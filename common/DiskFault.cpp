#include "common/DiskFault.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <locale.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace ciq {

namespace {

constexpr int kDiskFaults[] = {ENOSPC, EDQUOT, EROFS, EIO};

std::string parentOf(const std::string &p) {
  auto s = p.find_last_of('/');
  if (s == std::string::npos)
    return ".";
  return s == 0 ? "/" : p.substr(0, s);
}

// The folder itself, or its nearest parent that exists (an output folder a
// failed compile never made).
std::string existingFolder(std::string p) {
  struct stat st;
  while (!p.empty() && ::stat(p.c_str(), &st) != 0 && p != "/" && p != ".")
    p = parentOf(p);
  return p;
}

struct FolderState {
  std::string folder;
  int fault = 0;                   // EROFS or ENOSPC, else 0
  unsigned long long freeBytes = 0;
};

// Writes a small file into the folder and removes it again: the errno of a
// write the file system refuses now (an ext4 that went read-only after an
// error, which statvfs may not show; a quota), else 0.
int probeWrite(const std::string &folder) {
  std::string probe = folder + "/.ciq-write-probe-" + std::to_string(getpid());
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return isDiskFault(errno) ? errno : 0;
  char page[4096] = {};
  int err = ::write(fd, page, sizeof page) == (ssize_t)sizeof page ? 0 : errno;
  if (::close(fd) != 0 && !err)
    err = errno;
  ::unlink(probe.c_str());
  return isDiskFault(err) ? err : 0;
}

std::optional<FolderState> examine(const std::string &folder) {
  struct statvfs vfs;
  FolderState s;
  s.folder = existingFolder(folder);
  if (s.folder.empty() || ::statvfs(s.folder.c_str(), &vfs) != 0)
    return std::nullopt;
  // root may write into the blocks reserved for it (ext4's 5 %): full for
  // root is no block free at all.
  unsigned long long blocks = geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail;
  s.freeBytes = blocks * (unsigned long long)vfs.f_frsize;
  bool noInode = vfs.f_files > 0 && vfs.f_favail == 0;
  if (vfs.f_flag & ST_RDONLY)
    s.fault = EROFS;
  else if (s.freeBytes < kNearlyFullBytes || noInode)
    s.fault = ENOSPC;
  else
    s.fault = probeWrite(s.folder);
  return s;
}

} // namespace

bool isDiskFault(int err) {
  for (int e : kDiskFaults)
    if (e == err)
      return true;
  return false;
}

std::string errnoText(int err) {
  const char *name = strerrorname_np(err);
  return std::string(strerror(err)) + " (" + (name ? name : "errno " + std::to_string(err)) + ")";
}

std::string DiskFault::describe() const { return path + ": " + errnoText(err); }

std::string DiskFault::remedy() const { return remedyFor(err); }

std::string remedyFor(int err) {
  switch (err) {
  case ENOSPC:
  case EDQUOT:
    return "free space";
  case EROFS:
    return "remount it read-write";
  case EIO:
    return "check the disk (an I/O error: dmesg, then fsck once it is unmounted)";
  case EPERM:
  case EACCES:
    return "make it writable (its permissions; `chattr -i` for an immutable file)";
  default:
    return "free space (or make it writable)";
  }
}

int diskFaultInOutput(const std::string &text) {
  // strerror() in this process is the C locale's text; a tool that called
  // setlocale() printed the environment's.
  locale_t env = newlocale(LC_MESSAGES_MASK, "", (locale_t)0);
  int found = 0;
  for (int e : kDiskFaults) {
    if (text.find(strerror(e)) != std::string::npos || (env && text.find(strerror_l(e, env)) != std::string::npos)) {
      found = e;
      break;
    }
  }
  if (env)
    freelocale(env);
  return found;
}

std::optional<DiskFault> diskFaultOfFailedTool(const std::string &output, const std::vector<std::string> &folders) {
  std::optional<FolderState> fullest;
  for (const auto &f : folders) {
    if (f.empty())
      continue;
    auto s = examine(f);
    if (!s)
      continue;
    if (s->fault)
      return DiskFault{s->fault, s->folder};
    if (!fullest || s->freeBytes < fullest->freeBytes)
      fullest = s;
  }
  int named = diskFaultInOutput(output);
  if (!named)
    return std::nullopt;
  std::string where = fullest ? fullest->folder : folders.empty() ? std::string() : folders.front();
  return DiskFault{named, where};
}

std::string temporaryFolder() {
  const char *t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

} // namespace ciq
