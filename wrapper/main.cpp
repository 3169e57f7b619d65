// ciq-ptxas front: the common cases, a build outside any tuning run and without
// a lock, must cost one exec, as a launcher and as a ptxas or nvcc stand-in.
// This file links nothing but libc and the PATH search: the driver
// (ciq-ptxas-driver, a larger program to start) is exec'd only when there is work
// for it, and it also owns every error message but "cannot run".
#include "common/EnvNames.h"
#include "common/FindExecutable.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#ifndef CIQ_DRIVER_FALLBACK
#define CIQ_DRIVER_FALLBACK ""
#endif

namespace {

const char *baseName(const char *p) {
  const char *s = std::strrchr(p, '/');
  return s ? s + 1 : p;
}

bool isSet(const char *var) {
  const char *v = std::getenv(var);
  return v && *v;
}

// Nothing to apply: no tuning run (CIQ_SOCKET) and no lock (CIQ_LOCK), or a
// stand-in inside a command ciq-ptxas already rendered (CIQ_WRAPPED).
bool nothingToApply(bool standin) {
  const char *wrapped = std::getenv(ciq::env::Wrapped);
  if (standin && wrapped && !std::strcmp(wrapped, "1"))
    return true;
  return !isSet(ciq::env::Socket) && !isSet(ciq::env::Lock) && !isSet(ciq::env::RehearsalLock);
}

std::string selfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : "";
}

int fail(const std::string &msg, int status) {
  std::fprintf(stderr, "ciq-ptxas: error: %s\n", msg.c_str());
  return status;
}

// Launcher: `ciq-ptxas <compiler> args...` (ciq options all start with "--").
void launcherPassThrough(int argc, char **argv) {
  if (argc < 2 || argv[1][0] == '-' || !nothingToApply(false))
    return;
  execvp(argv[1], argv + 1);
  std::exit(fail(std::string("cannot run '") + argv[1] + "': " + std::strerror(errno) +
                     " (check the compiler path given to ciq-ptxas)",
                 127));
}

// Stand-in: the real compiler from CIQ_REAL_<TOOL> or PATH minus this file,
// entered once (the depth variable catches a stand-in that finds itself
// again). Anything unusual returns, and the driver explains it.
void standinPassThrough(const char *tool, char **argv, const std::string &self) {
  if (!nothingToApply(true))
    return;
  bool ptxas = !std::strcmp(tool, "ptxas");
  const char *depthVar = ptxas ? ciq::env::StandinPtxasDepth : ciq::env::StandinNvccDepth;
  // Entered again inside a compile it already passed on (CIQ_WRAPPED): a
  // compiler cache behind it ran the next nvcc on PATH, this stand-in. Once
  // more it goes to the real compiler, which is never a cache nor ciq-ptxas;
  // a third entry is a loop the driver explains.
  const char *depth = std::getenv(depthVar);
  int entered = depth ? std::atoi(depth) : 0;
  if (entered >= 2 || (entered == 1 && !std::getenv(ciq::env::Wrapped)))
    return;
  const char *wanted = std::getenv(ptxas ? ciq::env::RealPtxas : ciq::env::RealNvcc);
  // A link named nvcc to ccache is no real nvcc: ccache would run the next
  // nvcc on PATH, this stand-in again (issue 41 item 4).
  auto real = wanted && *wanted ? ciq::findExecutable(wanted, self) : ciq::findRealCompiler(tool, self);
  if (!real || ciq::isCiqPtxas(*real) || ciq::isCompilerCache(*real))
    return;
  setenv(depthVar, entered ? "2" : "1", 1);
  argv[0] = const_cast<char *>(real->c_str());
  execv(real->c_str(), argv);
  unsetenv(depthVar);
}

} // namespace

int main(int argc, char **argv) {
  const char *name = baseName(argv[0]);
  bool standin = !std::strcmp(name, "ptxas") || !std::strcmp(name, "nvcc");
  std::string self;
  if (standin) {
    self = selfExe();
    standinPassThrough(name, argv, self);
  } else {
    launcherPassThrough(argc, argv);
  }
  // The driver sits beside the real front (a stand-in may be a link or a copy elsewhere).
  if (self.empty())
    self = selfExe();
  setenv(ciq::env::FrontExe, self.c_str(), 1);
  std::string beside = self.substr(0, self.rfind('/') + 1) + "ciq-ptxas-driver";
  std::string driver = access(beside.c_str(), X_OK) == 0 ? beside : CIQ_DRIVER_FALLBACK;
  execv(driver.c_str(), argv); // argv[0] unchanged: the entry mode is its name
  return fail("cannot run the ciq-ptxas driver: neither " + beside + " (beside " + self + ") nor " +
                  CIQ_DRIVER_FALLBACK + " (the install) can run; copy ciq-ptxas-driver beside it, "
                  "or make it a link to an installed ciq-ptxas instead of a copy",
              127);
}
