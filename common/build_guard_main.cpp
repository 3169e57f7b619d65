// ciq-build-guard: the leader of a candidate build's process group, which
// ends the whole build when the engine that started it dies.
//
//   ciq-build-guard <engine pid> <niceness> <program> [args...]
//
// A kill -9 of `ciq tune` runs no handler, so nothing in the engine can end
// its build: cmake, ninja and make, the commands ninja runs in groups of
// their own, nvcc's host compile after ciq-ptxas exited, the linker, a make
// recipe that sleeps. The guard is what learns of the death (a pidfd of the
// engine, which the kernel marks readable when the engine's last thread is
// gone; PR_SET_PDEATHSIG and getppid() where pidfds are missing) and ends
// every process below it: it is their subreaper (PR_SET_CHILD_SUBREAPER), so
// an orphan of the build, whatever group or session it moved to, comes back
// to it and is found by parent links (common/ProcessTree.h).
//
// The guard itself keeps the engine's priority: the build's niceness is set
// on its child only, so a loaded host still runs the guard at once.
// Otherwise it is transparent: the build's exit status is its own, and a
// SIGTERM to the group (the engine's build timeout) reaches the build.
// Static, libc only (like ciq-ptxas's front): it starts once per build.
#include "common/ProcessTree.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// How long the build's processes have for their own cleanup (nvcc's
// temporary files, ninja's partial outputs) after the engine died, before
// SIGKILL: well inside the second a build may outlive its engine.
constexpr long kGraceMs = 300;
// Where pidfds are missing and no parent-death signal came: how often the
// guard looks at its parent.
constexpr int kParentPollMs = 100;

volatile sig_atomic_t parentDied = 0; // interrupts the poll; getppid() decides

void onParentDeath(int) { parentDied = 1; }
void ignoreForBuild(int) {} // the build gets the group's signal; the guard stays

double nowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void onSignal(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

// Reaps what ended below the guard; returns true once `child` was reaped
// (its status in *status).
bool reap(pid_t child, int *status, bool *childDone) {
  int st;
  pid_t r;
  while ((r = waitpid(-1, &st, WNOHANG)) > 0)
    if (r == child) {
      *status = st;
      *childDone = true;
    }
  return *childDone;
}

// The engine is gone: every process of the build gets SIGTERM, and SIGKILL
// once the grace ran out; the guard ends when none is left.
[[noreturn]] void endBuild() {
  ciq::signalAllDescendants(SIGTERM);
  double until = nowMs() + kGraceMs;
  while (nowMs() < until) {
    while (waitpid(-1, nullptr, WNOHANG) > 0)
      ;
    if (!ciq::haveChildren() && ciq::signalAllDescendants(0) == 0)
      break;
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  ciq::endAllDescendants(10);
  _exit(128 + SIGKILL);
}

// The build's end is the guard's: its exit status, or its signal.
[[noreturn]] void endAs(int status) {
  if (WIFEXITED(status))
    _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none); // the build's core dump, if any, is written already
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig);
}

pid_t startBuild(char **argv, int niceness) {
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
  if (niceness > 0) {
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (errno == 0)
      setpriority(PRIO_PROCESS, 0, now + niceness);
  }
  execvp(argv[0], argv);
  int err = errno;
  dprintf(2, "ciq-build-guard: cannot run '%s': %s\n", argv[0], strerror(err));
  _exit(127);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    dprintf(2, "usage: ciq-build-guard <engine pid> <niceness> <program> [args...] (ciq starts it for its builds)\n");
    return 2;
  }
  pid_t engine = (pid_t)std::atol(argv[1]);
  int niceness = std::atoi(argv[2]);
  ciq::becomeSubreaper();
  onSignal(SIGUSR1, onParentDeath);
  for (int sig : {SIGTERM, SIGINT, SIGHUP})
    onSignal(sig, ignoreForBuild);
  // The parent-death signal follows the engine's thread that started the
  // guard (runSubprocess waits on it for the build's whole run); the pidfd
  // follows the engine itself. Either is checked against getppid(): a
  // thread's end is not the engine's, and an engine dead before these calls
  // left the guard another parent already.
  prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0);
  int enginefd = (int)syscall(SYS_pidfd_open, engine, 0);
  if (getppid() != engine)
    return 128 + SIGKILL; // the engine is gone: no build to start
  pid_t child = startBuild(argv + 3, niceness);
  if (child < 0) {
    dprintf(2, "ciq-build-guard: cannot start '%s': %s\n", argv[3], strerror(errno));
    return 127;
  }
  int childfd = (int)syscall(SYS_pidfd_open, child, 0);
  int status = 0;
  bool childDone = false;
  while (!reap(child, &status, &childDone)) {
    parentDied = 0; // a wake-up only: the parent thread's end need not be the engine's
    if (getppid() != engine)
      endBuild();
    pollfd fds[2] = {{enginefd, POLLIN, 0}, {childfd, POLLIN, 0}};
    // Orphans of the build end here too: SIGCHLD is not waited for, so
    // without the child's pidfd the guard looks every kParentPollMs.
    int waitMs = enginefd >= 0 && childfd >= 0 ? -1 : kParentPollMs;
    if (poll(fds, 2, waitMs) > 0 && enginefd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
      endBuild();
  }
  endAs(status);
}
