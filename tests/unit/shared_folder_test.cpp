// Issue 29, item 1: folders outside the build tree that another user of the
// machine could have prepared: the GPU locks every user shares, and the
// fallbacks under the temporary directory (no HOME). The other user is
// `nobody` (uid 65534), in a child process; those tests need root and skip
// otherwise. The victim is a file the test makes, never a system file.
#include "common/AcfStaging.h"
#include "common/CompilerVersion.h"
#include "common/OwnedDir.h"
#include "common/Sha256.h"
#include "engine/measure/GpuLock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <llvm/Support/FileSystem.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ciq;

namespace {

const uid_t kNobody = 65534;

// Runs `fn` as nobody in a child process; true when it returned true.
bool asNobody(const std::function<bool()> &fn) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0)
      _exit(3);
    umask(0);
    _exit(fn() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

mode_t modeOf(const std::string &path) {
  struct stat st {};
  stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

// The environment a test changes, put back when it ends.
struct Env {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  Env() {
    for (const char *v : {"TMPDIR", "HOME", "XDG_CACHE_HOME", "CIQ_GPU_LOCK_DIR"}) {
      const char *x = getenv(v);
      saved.push_back({v, x ? std::optional<std::string>(x) : std::nullopt});
    }
  }
  ~Env() {
    for (auto &[k, v] : saved)
      v ? setenv(k.c_str(), v->c_str(), 1) : unsetenv(k.c_str());
  }
};

// A root for one test that nobody can traverse, with tmp/ in it standing in
// for /tmp (root's, mode 1777) and a victim file of root's.
struct Scene {
  std::string root, tmp, victim;
  Env env;
  Scene() {
    llvm::SmallString<128> d;
    llvm::sys::fs::createUniqueDirectory("ciq-shared-folder", d);
    root = d.str().str();
    chmod(root.c_str(), 0755);
    tmp = root + "/tmp";
    mkdir(tmp.c_str(), 0700);
    chmod(tmp.c_str(), 01777);
    victim = root + "/victim";
    std::ofstream(victim) << "precious\n";
    chmod(victim.c_str(), 0644);
    setenv("TMPDIR", tmp.c_str(), 1);
    unsetenv("CIQ_GPU_LOCK_DIR");
  }
  ~Scene() { llvm::sys::fs::remove_directories(root); }
  bool victimIntact() const { return slurp(victim) == "precious\n" && modeOf(victim) == 0644; }
};

#define NEED_ROOT()                                                                                                    \
  if (geteuid() != 0)                                                                                                  \
  GTEST_SKIP() << "needs root, to act as another user (nobody)"

} // namespace

// The attack of the issue: another user made <tmp>/ciq-gpu-locks, open to
// all, and linked host.lock in it to the victim's file. The lock no longer
// lives in a folder a user can own: the planted folder is not used.
TEST(SharedFolder, PlantedGpuLockFolderIsNotUsed) {
  NEED_ROOT();
  Scene s;
  ASSERT_TRUE(asNobody([&] {
    return mkdir((s.tmp + "/ciq-gpu-locks").c_str(), 0777) == 0 &&
           symlink(s.victim.c_str(), (s.tmp + "/ciq-gpu-locks/host.lock").c_str()) == 0;
  }));
  GpuLock l;
  std::string err;
  EXPECT_TRUE(l.acquire("", "pid 1 root: ciq tune app", err)) << err;
  l.release();
  EXPECT_TRUE(s.victimIntact()) << "mode " << std::oct << modeOf(s.victim) << ": '" << slurp(s.victim) << "'";
  EXPECT_EQ(l.path(), s.tmp + "/ciq-gpu-host.lock");
}

// A link planted under the lock's own name is refused, with one line.
TEST(SharedFolder, PlantedGpuLockLinkIsRefused) {
  NEED_ROOT();
  Scene s;
  ASSERT_TRUE(asNobody([&] { return symlink(s.victim.c_str(), (s.tmp + "/ciq-gpu-host.lock").c_str()) == 0; }));
  GpuLock l;
  std::string err;
  EXPECT_FALSE(l.acquire("", "pid 1 root: ciq tune app", err));
  EXPECT_NE(err.find(s.tmp + "/ciq-gpu-host.lock is a symbolic link"), std::string::npos) << err;
  EXPECT_NE(err.find("CIQ_GPU_LOCK_DIR"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_TRUE(s.victimIntact());
}

// $CIQ_GPU_LOCK_DIR named a folder that another user made (and so controls).
TEST(SharedFolder, GpuLockFolderOfAnotherUserIsRefused) {
  NEED_ROOT();
  Scene s;
  std::string locks = s.tmp + "/locks";
  ASSERT_TRUE(asNobody([&] {
    return mkdir(locks.c_str(), 0777) == 0 && symlink(s.victim.c_str(), (locks + "/host.lock").c_str()) == 0;
  }));
  setenv("CIQ_GPU_LOCK_DIR", locks.c_str(), 1);
  GpuLock l;
  std::string err;
  EXPECT_FALSE(l.acquire("", "pid 1 root: ciq tune app", err));
  EXPECT_NE(err.find("the GPU lock folder " + locks + " belongs to uid 65534"), std::string::npos) << err;
  EXPECT_NE(err.find("set CIQ_GPU_LOCK_DIR"), std::string::npos) << err;
  EXPECT_TRUE(s.victimIntact());
}

// Issue 42 item 3: $CIQ_GPU_LOCK_DIR a link another user planted, to a
// folder of root's: it is not followed (root made a mode-0666 host.lock
// where it pointed), nor is a folder of theirs above the lock folder; a link
// of root's own is followed.
TEST(SharedFolder, GpuLockDirThroughAPlantedLinkIsRefused) {
  NEED_ROOT();
  Scene s;
  std::string target = s.root + "/root-locks", link = s.tmp + "/locks";
  ASSERT_EQ(mkdir(target.c_str(), 0700), 0);
  chmod(target.c_str(), 01777);
  ASSERT_TRUE(asNobody([&] { return symlink(target.c_str(), link.c_str()) == 0; }));
  setenv("CIQ_GPU_LOCK_DIR", link.c_str(), 1);
  GpuLock l;
  std::string err;
  EXPECT_FALSE(l.acquire("", "pid 1 root: ciq tune app", err));
  EXPECT_NE(err.find("the GPU lock folder " + link + " is not one to trust: " + link +
                     " is a symbolic link of uid 65534, not of root or you"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_FALSE(llvm::sys::fs::exists(target + "/host.lock"));
  // A folder of nobody's above the lock folder: they could rename it.
  std::string theirs = s.tmp + "/theirs";
  ASSERT_TRUE(asNobody([&] { return mkdir(theirs.c_str(), 0755) == 0; }));
  ASSERT_EQ(mkdir((theirs + "/locks").c_str(), 01777), 0);
  setenv("CIQ_GPU_LOCK_DIR", (theirs + "/locks").c_str(), 1);
  EXPECT_FALSE(l.acquire("", "pid 1 root: ciq tune app", err));
  EXPECT_NE(err.find(theirs + " (above the lock folder) belongs to uid 65534"), std::string::npos) << err;
  // root's own link to the same folder: followed.
  std::string own = s.root + "/own-link";
  ASSERT_EQ(symlink(target.c_str(), own.c_str()), 0);
  setenv("CIQ_GPU_LOCK_DIR", own.c_str(), 1);
  EXPECT_TRUE(l.acquire("", "pid 1 root: ciq tune app", err)) << err;
  l.release();
  EXPECT_TRUE(llvm::sys::fs::exists(target + "/host.lock"));
}

// A regular file another user put under the lock's name in a shared lock
// folder (root's, sticky): locked (flock needs no write access), but its
// mode and bytes are left as they are.
TEST(SharedFolder, AnotherUsersFileIsNeitherChmodedNorTruncated) {
  NEED_ROOT();
  Scene s;
  setenv("CIQ_GPU_LOCK_DIR", s.tmp.c_str(), 1);
  std::string lock = s.tmp + "/host.lock";
  ASSERT_TRUE(asNobody([&] {
    std::ofstream(lock) << "nobody's own file\n";
    return chmod(lock.c_str(), 0644) == 0;
  }));
  GpuLock l;
  std::string err;
  EXPECT_TRUE(l.acquire("", "pid 1 root: ciq tune app", err)) << err;
  l.release();
  EXPECT_EQ(slurp(lock), "nobody's own file\n");
  EXPECT_EQ(modeOf(lock), 0644u);
}

// What the lock is for still works across users: nobody's ciq made the lock
// (mode 0666) and holds it; root's search waits and is told who holds it.
TEST(SharedFolder, GpuLockStillExcludesAcrossUsers) {
  NEED_ROOT();
  Scene s;
  int held[2], done[2];
  ASSERT_EQ(pipe(held), 0);
  ASSERT_EQ(pipe(done), 0);
  pid_t child = fork();
  if (child == 0) {
    close(held[0]);
    close(done[1]);
    if (setgid(kNobody) != 0 || setuid(kNobody) != 0)
      _exit(3);
    GpuLock l;
    std::string e;
    if (!l.acquire("GPU-1a2b", "pid 2 nobody: ciq tune stencil", e))
      _exit(4);
    (void)!write(held[1], "x", 1);
    char c;
    (void)!read(done[0], &c, 1); // until the parent closes its end
    _exit(0);
  }
  close(held[1]);
  close(done[0]);
  char c = 0;
  ASSERT_EQ(read(held[0], &c, 1), 1) << "nobody could not take the lock";
  std::atomic<bool> got{false};
  std::string told, err;
  std::thread second([&] {
    GpuLock l;
    l.acquire("GPU-1a2b", "pid 1 root: ciq tune app", err, [&](const std::string &h) { told = h; });
    got = l.held();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got.load()) << "root's measurement did not wait for nobody's";
  close(done[1]);
  second.join();
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(got.load()) << err;
  EXPECT_EQ(told, "pid 2 nobody: ciq tune stencil");
}

// A lock file with a second name (a hard link: where fs.protected_hardlinks
// is 0 another user can make one to any file) is refused.
TEST(SharedFolder, HardLinkedGpuLockIsRefused) {
  Scene s;
  std::string locks = s.root + "/locks";
  mkdir(locks.c_str(), 01777);
  ASSERT_EQ(link(s.victim.c_str(), (locks + "/host.lock").c_str()), 0);
  setenv("CIQ_GPU_LOCK_DIR", locks.c_str(), 1);
  GpuLock l;
  std::string err;
  EXPECT_FALSE(l.acquire("", "pid 1: ciq tune app", err));
  EXPECT_NE(err.find("has 2 names"), std::string::npos) << err;
  EXPECT_TRUE(s.victimIntact());
}

namespace {

// The compiler-version cache entry of `exe` under `cache` (the key of
// common/CompilerVersion.cpp), holding `version`.
bool plantVersion(const std::string &cache, const std::string &exe, const std::string &version) {
  char buf[PATH_MAX];
  std::string real = realpath(exe.c_str(), buf) ? buf : exe;
  struct stat st {};
  stat(real.c_str(), &st);
  std::string key = sha256Hex(real + "\n" + std::to_string(st.st_mtim.tv_sec) + "." +
                              std::to_string(st.st_mtim.tv_nsec) + "\n" + std::to_string(st.st_size));
  llvm::sys::fs::create_directories(cache + "/compiler-version");
  std::ofstream out(cache + "/compiler-version/" + key);
  out << version << "\n";
  return bool(out.flush());
}

} // namespace

// No HOME: the cache went to a shared <tmp>/.cache/ciq, where another user's
// entry made nvcc 13.0 pass for 12.8 (and a lock frozen with 12.8 apply).
TEST(SharedFolder, CompilerVersionIgnoresAnotherUsersCache) {
  NEED_ROOT();
  Scene s;
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  std::string err;
  auto truth = compilerVersion(CIQ_TEST_NVCC, err);
  ASSERT_TRUE(truth) << err;
  ASSERT_TRUE(asNobody([&] {
    return plantVersion(s.tmp + "/.cache/ciq", CIQ_TEST_NVCC, "12.8.93") &&
           plantVersion(s.tmp + "/xdg/ciq", CIQ_TEST_NVCC, "12.8.93");
  }));
  auto v = compilerVersion(CIQ_TEST_NVCC, err);
  ASSERT_TRUE(v) << err;
  EXPECT_EQ(*v, *truth);
  // Nor from an XDG_CACHE_HOME another user made.
  setenv("XDG_CACHE_HOME", (s.tmp + "/xdg").c_str(), 1);
  v = compilerVersion(CIQ_TEST_NVCC, err);
  ASSERT_TRUE(v) << err;
  EXPECT_EQ(*v, *truth);
}

// No HOME: ACFs are staged under <tmp>/ciq-<uid>; another user who made
// that folder first (open to all) could swap the staged file or plant a
// link the copy writes through. It is refused, and nothing is written there.
TEST(SharedFolder, AcfStagingRefusesAnotherUsersTempFolder) {
  NEED_ROOT();
  Scene s;
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  std::string mine = s.tmp + "/ciq-" + std::to_string(geteuid());
  ASSERT_TRUE(asNobody([&] { return mkdir(mine.c_str(), 0777) == 0 && mkdir((mine + "/acf").c_str(), 0777) == 0; }));
  std::string acf = s.root + "/a b.acf";
  std::ofstream(acf) << "ACF bytes";
  std::string err;
  auto staged = plainAcfPath(acf, err);
  EXPECT_FALSE(staged) << *staged;
  std::error_code ec;
  EXPECT_TRUE(llvm::sys::fs::directory_iterator(mine + "/acf", ec) == llvm::sys::fs::directory_iterator()) << ec;
}

// The run directory (issue 51 item 1): a folder group-writable only for a
// group whose one member is its owner (Debian's user private groups, umask
// 002) is the user's own; one writable by a group of others, or another
// user's, is refused; a missing one is made 0700 when asked.
TEST(SharedFolder, RunDirectoryOwnedAndClosed) {
  NEED_ROOT();
  Scene s;
  std::string err, mine = s.root + "/build-ciq";
  ASSERT_TRUE(checkRunDir(mine, /*create=*/true, err)) << err;
  EXPECT_EQ(modeOf(mine), 0700u);
  chmod(mine.c_str(), 0770); // root:root, root's primary group with no members listed
  EXPECT_TRUE(checkRunDir(mine, false, err)) << err;
  ASSERT_EQ(chown(mine.c_str(), 0, 65534), 0); // nogroup: not root's own
  EXPECT_FALSE(checkRunDir(mine, false, err));
  EXPECT_NE(err.find("has mode 0770"), std::string::npos) << err;
  std::string theirs = s.tmp + "/run";
  ASSERT_TRUE(asNobody([&] { return mkdir(theirs.c_str(), 0700) == 0; }));
  EXPECT_FALSE(checkRunDir(theirs, true, err));
  EXPECT_NE(err.find("belongs to uid 65534"), std::string::npos) << err;
  EXPECT_TRUE(checkRunDir(s.tmp + "/not-made-yet", false, err)) << err;
}
