// ciq-ptxas front: the common case, a build outside any tuning run and without
// a lock, must cost one exec. This file links nothing but libc: the driver
// (ciq-ptxas-driver, with LLVM's Object library and its static initializers,
// ~5 ms of start-up) is exec'd only when there is work for it.
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

bool plainLauncher(int argc, char **argv) {
  const char *self = baseName(argv[0]);
  if (!std::strcmp(self, "ptxas") || !std::strcmp(self, "nvcc"))
    return false;
  if (argc < 2 || argv[1][0] == '-') // ciq options all start with "--"
    return false;
  const char *sock = std::getenv("CIQ_SOCKET"), *lock = std::getenv("CIQ_LOCK");
  return !(sock && *sock) && !(lock && *lock);
}

int fail(const std::string &msg, int status) {
  std::fprintf(stderr, "ciq-ptxas: error: %s\n", msg.c_str());
  return status;
}

} // namespace

int main(int argc, char **argv) {
  if (plainLauncher(argc, argv)) {
    execvp(argv[1], argv + 1);
    return fail(std::string("cannot run '") + argv[1] + "': " + std::strerror(errno) +
                    " (check the compiler path given to ciq-ptxas)",
                127);
  }
  // The driver sits beside the real front (a stand-in may be a link or a copy elsewhere).
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string self = n > 0 ? std::string(buf, n) : "";
  setenv("CIQ_FRONT_EXE", self.c_str(), 1);
  std::string driver = self.substr(0, self.rfind('/') + 1) + "ciq-ptxas-driver";
  if (access(driver.c_str(), X_OK) != 0)
    driver = CIQ_DRIVER_FALLBACK;
  execv(driver.c_str(), argv); // argv[0] unchanged: the entry mode is its name
  return fail("cannot run the ciq-ptxas driver '" + driver + "': " + std::strerror(errno) +
                  " (reinstall ciq: it belongs beside ciq-ptxas)",
              127);
}
