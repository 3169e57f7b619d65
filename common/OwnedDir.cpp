#include "common/OwnedDir.h"
#include "common/DiskFault.h"

#include <cerrno>
#include <climits>
#include <grp.h>
#include <pwd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq {
namespace {

std::string uidText(uid_t u) { return "uid " + std::to_string(u); }

// A folder above: a folder every user may share (sharedFolderProblem).
bool safeAncestor(const std::string &dir, const std::string &below, std::string &error) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    error = "cannot inspect " + dir + " (above " + below + "): " + strerror(errno);
    return false;
  }
  if (std::string wrong = sharedFolderProblem(st); !wrong.empty()) {
    error = dir + " (above " + below + ") " + wrong + ": that user could replace " + below +
            " with a folder or link of theirs";
    return false;
  }
  return true;
}

} // namespace

static std::string modeText(mode_t m) {
  char buf[8];
  snprintf(buf, sizeof buf, "%04o", (unsigned)(m & 07777));
  return buf;
}

// A group whose only member is the folder's owner (Debian's user private
// groups, under umask 002): its write bit lets no one else in. The same rule
// as Debian's OpenSSH StrictModes: listed as the group's one member, or no
// members listed and the group is the owner's primary group.
static bool groupOnlyOwner(const struct stat &st) {
  struct passwd pw, *pwp = nullptr;
  struct group gr, *grp = nullptr;
  char pwbuf[4096], grbuf[16384];
  if (getpwuid_r(st.st_uid, &pw, pwbuf, sizeof pwbuf, &pwp) != 0 || !pwp ||
      getgrgid_r(st.st_gid, &gr, grbuf, sizeof grbuf, &grp) != 0 || !grp)
    return false;
  if (!grp->gr_mem || !grp->gr_mem[0])
    return pwp->pw_gid == grp->gr_gid;
  return strcmp(grp->gr_mem[0], pwp->pw_name) == 0 && !grp->gr_mem[1];
}

// Whether users other than the owner may write to the folder.
static bool othersMayWrite(const struct stat &st) {
  return (st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && !groupOnlyOwner(st));
}

std::string sharedFolderProblem(const struct stat &st) {
  if (st.st_uid != 0 && st.st_uid != geteuid())
    return "belongs to " + uidText(st.st_uid) + ", not to root or you (" + uidText(geteuid()) + ")";
  if (othersMayWrite(st) && !(st.st_mode & S_ISVTX))
    return "has mode " + modeText(st.st_mode) + " (other users may write to it, and it is not sticky)";
  return "";
}

bool isOwnedDir(const std::string &dir, std::string &error) {
  char buf[PATH_MAX];
  if (!realpath(dir.c_str(), buf)) {
    error = "cannot resolve " + dir + ": " + strerror(errno);
    return false;
  }
  std::string real = buf;
  std::string shown = real == dir ? dir : dir + " (" + real + ")";
  struct stat st;
  if (stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = shown + " is not a folder";
    return false;
  }
  if (st.st_uid != geteuid()) {
    error = shown + " belongs to " + uidText(st.st_uid) + ", not to you (" + uidText(geteuid()) +
            "): its owner could plant entries there that ciq would trust";
    return false;
  }
  if (othersMayWrite(st)) {
    error = shown + " has mode " + modeText(st.st_mode) +
            ": other users may write to it and plant entries that ciq would trust";
    return false;
  }
  for (llvm::StringRef up = llvm::sys::path::parent_path(real); !up.empty();
       up = llvm::sys::path::parent_path(up)) {
    if (!safeAncestor(up.str(), shown, error))
      return false;
    if (up == "/")
      break;
  }
  return true;
}

// Makes `dir` and the folders above it that are missing (mode 0700). A disk
// that refuses it is named as such, with what to do (a read-only file
// system: EROFS, "remount it read-write"; issue 51 item 8).
static bool makeDirChain(const std::string &dir, std::string &error) {
  for (size_t p = 1; p <= dir.size(); ++p)
    if (p == dir.size() || dir[p] == '/')
      if (mkdir(dir.substr(0, p).c_str(), 0700) != 0 && errno != EEXIST) {
        int err = errno;
        error = "cannot create " + dir.substr(0, p) + ": " +
                (isDiskFault(err) ? errnoText(err) + "; " + remedyFor(err) : std::string(strerror(err)));
        return false;
      }
  return true;
}

bool ensureOwnedDir(const std::string &dir, std::string &error) {
  return makeDirChain(dir, error) && isOwnedDir(dir, error);
}

bool checkRunDir(const std::string &dir, bool create, std::string &error) {
  std::string fix = "; make it yours alone (chown it, chmod go-w " + dir + ") or give the search another run_dir: "
                    "in ciq.yaml, then run again";
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      error = "cannot inspect the run directory " + dir + ": " + strerror(errno);
      return false;
    }
    if (!create)
      return true; // nothing there to trust yet; the search that makes it checks it
  } else if (S_ISLNK(st.st_mode)) {
    // Whoever made the link can point it elsewhere after it was checked.
    error = "the run directory " + dir + " is a symbolic link" + fix;
    return false;
  }
  if (create && !makeDirChain(dir, error)) {
    error = "the run directory " + dir + ": " + error + ", or give the search another run_dir: in ciq.yaml";
    return false;
  }
  if (isOwnedDir(dir, error))
    return true;
  error = "the run directory is unsafe: " + error + fix;
  return false;
}

std::optional<std::string> userTempDir(std::string &error) {
  llvm::SmallString<128> tmp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
  std::string dir = tmp.str().str() + "/ciq-" + std::to_string(geteuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    error = "cannot create " + dir + ": " + strerror(errno);
    return std::nullopt;
  }
  // Anyone may create this name first: only a real folder of ours, closed to
  // everyone else, is used.
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = dir + " is not a folder (a link or file someone put in its place)";
    return std::nullopt;
  }
  if (st.st_uid != geteuid() || (st.st_mode & 077)) {
    error = dir + " is not private to you (" + uidText(st.st_uid) + ", mode " + modeText(st.st_mode) +
            ", not " + uidText(geteuid()) + " and 0700): another user may have made it first";
    return std::nullopt;
  }
  if (!isOwnedDir(dir, error))
    return std::nullopt;
  return dir;
}

} // namespace ciq
