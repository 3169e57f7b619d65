#include "common/Subprocess.h"
#include "common/EnvNames.h"
#include "common/ProcessTree.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <mutex>
#include <set>
#include <thread>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ciq {
namespace {

using Clock = std::chrono::steady_clock;

// After the child exited, how long a descendant that holds its pipes may
// still write to them before it is ended.
constexpr double kPipeGraceSeconds = 0.5;
// How long the termination handler waits for the processes it killed.
constexpr double kEndAllSeconds = 10;

// The children being waited for (each the leader of its process group), for
// the signal handler (lock-free atomics) and for the sweep of a run's
// orphans (which must not reap another run's child).
constexpr int kActive = 256;
std::atomic<int> activeGroups[kActive];
std::mutex spawnMu; // a child is spawned and entered in activeGroups as one step

// Groups of compiles started below the running child but outside its group
// (ninja gives every command its own): see trackGroup.
constexpr int kTracked = 1024;
std::atomic<int> trackedGroups[kTracked];
std::atomic<void (*)()> cleanupHook{nullptr};
// Set by the termination handler: no thread starts a process or acts on the
// end of one it was waiting for (killed by the handler, not by its own
// doing) while the handler ends them all.
std::atomic<bool> terminating{false};

[[noreturn]] void waitForTheEnd() {
  for (;;)
    pause();
}

bool enter(std::atomic<int> *slots, int n, int value) {
  for (int i = 0; i < n; ++i) {
    int expected = 0;
    if (slots[i].compare_exchange_strong(expected, value))
      return true;
  }
  return false;
}

void leave(std::atomic<int> *slots, int n, int value) {
  for (int i = 0; i < n; ++i) {
    int expected = value;
    if (slots[i].compare_exchange_strong(expected, 0))
      return;
  }
}

bool isLiveSpawn(int pid) {
  std::lock_guard<std::mutex> g(spawnMu);
  for (auto &a : activeGroups)
    if (a.load() == pid)
      return true;
  return false;
}

bool anyTrackedAlive() {
  for (auto &t : trackedGroups) {
    int g = t.load();
    if (g > 0 && kill(-g, 0) == 0)
      return true;
  }
  return false;
}

// Async-signal-safe only: kill, nanosleep, the /proc walk of
// endAllDescendants, and the hook's unlink calls. The termination signals
// are blocked while it runs (sa_mask), so it is never entered twice on one
// thread; another thread that gets one waits for this one to end the process.
void onTerminationSignal(int sig) {
  if (terminating.exchange(true))
    waitForTheEnd();
  for (auto &a : activeGroups)
    if (int g = a.load(); g > 0)
      kill(-g, SIGKILL);
  // A compile's wrapper ends its compiler's group on SIGTERM; give it 2 s,
  // then end whatever is left outright.
  for (auto &t : trackedGroups)
    if (int tg = t.load(); tg > 0)
      kill(-tg, SIGTERM);
  for (int i = 0; i < 200 && anyTrackedAlive(); ++i) {
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
    // A wrapper whose ninja was killed above is re-parented here: reaped, it
    // leaves its group (a zombie would keep the group "alive").
    while (waitpid(-1, nullptr, WNOHANG) > 0)
      ;
  }
  for (auto &t : trackedGroups)
    if (int tg = t.load(); tg > 0)
      kill(-tg, SIGKILL);
  // What left the groups (setsid) or lost its parent is still below this
  // process (a subreaper): this process ends only once all of it is gone.
  endAllDescendants(kEndAllSeconds);
  if (auto hook = cleanupHook.load())
    hook();
  signal(sig, SIG_DFL);
  raise(sig);
}

// The child's environment: this process's, as the options change it, with
// the run's tag added to CIQ_PROCESS_TAGS (ProcessTree.h).
std::vector<std::string> buildEnv(const SubprocessOptions &o, const std::string &tag) {
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    bool drop = o.setEnv.count(key) != 0 || key == env::ProcessTags;
    for (const auto &u : o.unsetEnv)
      drop = drop || u == key;
    if (!drop)
      env.push_back(kv);
  }
  for (const auto &[k, v] : o.setEnv)
    env.push_back(k + "=" + v);
  env.push_back(std::string(env::ProcessTags) + "=" + runTagsValue(tag));
  return env;
}

// The file to run for `program` when the child's PATH is not this
// process's: a name is found on the child's PATH, as the child's shell or
// its own execvp would find it (posix_spawnp reads this process's PATH).
// Otherwise a tune's benchmark, whose PATH puts ciq's stand-ins first, ran
// the real nvcc under the name "nvcc", and nvcc, which finds its toolkit by
// looking its own name up on PATH, took the stand-ins' folder for its own:
// no nvcc.profile there, "sh: cicc: not found" (`nvcc x.cu -o x --run`).
// nullopt: posix_spawnp as usual (no '/' and the PATH unchanged).
std::optional<std::string> programOnChildPath(const std::string &program, const SubprocessOptions &o) {
  if (program.find('/') != std::string::npos)
    return std::nullopt;
  if (auto it = o.setEnv.find("PATH"); it != o.setEnv.end())
    return findExecutableOn(program, it->second).value_or("");
  if (std::find(o.unsetEnv.begin(), o.unsetEnv.end(), "PATH") != o.unsetEnv.end())
    return findExecutableOn(program, "/bin:/usr/bin").value_or(""); // glibc's default search path
  return std::nullopt;
}

std::vector<char *> cArgv(std::vector<std::string> &v) {
  std::vector<char *> out;
  for (auto &s : v)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void killGroup(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}

// posix_spawn, not fork: glibc starts the child with CLONE_VFORK, so the cost
// does not grow with this process's address space (fork copies its page
// tables, a measurable part of ciq-ptxas's added time per compile).
struct Spawn {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  Spawn() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~Spawn() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  Spawn(const Spawn &) = delete;
  Spawn &operator=(const Spawn &) = delete;
};

// The child: its own process group (so a timeout ends nvcc, cicc and ptxas
// together), SIGPIPE back to default, and the redirections asked for.
void describeChild(Spawn &sp, const SubprocessOptions &o, int outW, int errW, int inR) {
  sigset_t def;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  posix_spawnattr_setsigdefault(&sp.attr, &def);
  posix_spawnattr_setpgroup(&sp.attr, 0);
  posix_spawnattr_setflags(&sp.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  if (inR >= 0)
    posix_spawn_file_actions_adddup2(&sp.actions, inR, 0);
  if (outW >= 0)
    posix_spawn_file_actions_adddup2(&sp.actions, outW, 1);
  if (o.mergeStderrIntoStdout && outW >= 0)
    posix_spawn_file_actions_adddup2(&sp.actions, outW, 2);
  else if (errW >= 0)
    posix_spawn_file_actions_adddup2(&sp.actions, errW, 2);
  if (!o.cwd.empty())
    posix_spawn_file_actions_addchdir_np(&sp.actions, o.cwd.c_str());
}

// One read from each of the child's stdout/stderr pipes that poll marked
// ready; a pipe at its end (or broken) is closed and set to -1.
void drainReady(pollfd (&fds)[4], SubprocessResult &r) {
  char buf[65536];
  for (int k = 0; k < 2; ++k) {
    if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
      continue;
    ssize_t got = read(fds[k].fd, buf, sizeof buf);
    if (got > 0) {
      (k == 0 ? r.out : r.err).append(buf, got);
      continue;
    }
    if (got < 0 && errno == EINTR)
      continue;
    close(fds[k].fd);
    fds[k].fd = -1;
  }
}

// The time limit of one child: at the deadline its group gets SIGTERM (a
// compiler's own cleanup runs), after the grace period SIGKILL.
struct Limit {
  Clock::time_point deadline, killAt;
  double seconds = 0, graceSeconds = 0;
  bool killed = false;

  // Sends what is due; returns how long poll may wait (ms, -1: no limit).
  int step(pid_t pid, SubprocessResult &r) {
    if (seconds <= 0 || killed)
      return r.timedOut ? 10 : -1; // killed: its pipes close and it is reaped shortly
    auto now = Clock::now();
    if (!r.timedOut && now >= deadline) {
      r.timedOut = true;
      kill(-pid, SIGTERM);
      kill(pid, SIGTERM);
      killAt = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(graceSeconds));
    }
    if (r.timedOut && now >= killAt) {
      killGroup(pid);
      killed = true;
      return 10;
    }
    auto until = r.timedOut ? killAt : deadline;
    return (int)std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1);
  }
};

// Reads the child's pipes and reaps it, ending its group at the deadline.
// The run ends when the child exits, not when its pipes close: a descendant
// that keeps them open (a helper a benchmark left running) gets
// kPipeGraceSeconds to finish writing, then the caller ends it. The child's
// exit is watched through a pidfd in the same poll as the pipes, so the call
// returns as soon as both are done (no sleep loop). Returns the wait status
// and sets r.wallMs at the child's exit.
int waitForChild(pid_t pid, Clock::time_point start, const SubprocessOptions &o, int (&pipeFds)[2],
                 SubprocessResult &r) {
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0); // -1 before Linux 5.3: see below
  Limit limit;
  limit.seconds = o.timeoutSeconds;
  limit.graceSeconds = o.killGraceSeconds;
  limit.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeoutSeconds));
  pollfd fds[4] = {{pipeFds[0], POLLIN, 0}, {pipeFds[1], POLLIN, 0}, {pidfd, POLLIN, 0}, {o.endWhenReadable, POLLIN, 0}};
  int status = 0;
  bool reaped = false;
  Clock::time_point pipesUntil;
  while (!(reaped && fds[0].fd < 0 && fds[1].fd < 0)) {
    if (terminating)
      waitForTheEnd(); // the handler reaps the child; its status is not this run's
    int waitMs = reaped ? (int)std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     pipesUntil - Clock::now()).count())
                        : limit.step(pid, r); // until a pipe or the pidfd has news, or the limit acts
    if (reaped && waitMs == 0)
      break; // what keeps the pipes open is not the child: the caller ends it
    if (!reaped && pidfd < 0)
      waitMs = waitMs < 0 ? 2 : std::min(waitMs, 2); // no pidfd: look at the child every 2 ms
    for (auto &f : fds)
      f.revents = 0; // poll leaves them as they were when interrupted
    if (fds[0].fd >= 0 || fds[1].fd >= 0 || fds[2].fd >= 0 || fds[3].fd >= 0) {
      if (poll(fds, 4, waitMs) < 0 && errno != EINTR)
        break;
    } else {
      usleep(waitMs * 1000);
    }
    drainReady(fds, r);
    if (fds[3].fd >= 0 && fds[3].revents) { // the watched descriptor: the run ends now
      fds[3].fd = -1;
      if (!reaped) {
        ::kill(-pid, SIGKILL);
        r.endedByWatch = true;
      }
    }
    if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      r.wallMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      pipesUntil = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(kPipeGraceSeconds));
      if (pidfd >= 0)
        close(pidfd);
      fds[2].fd = pidfd = -1;
    }
  }
  if (!reaped) {
    waitpid(pid, &status, 0);
    r.wallMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (pidfd >= 0)
      close(pidfd);
  }
  pipeFds[0] = fds[0].fd;
  pipeFds[1] = fds[1].fd;
  return status;
}

// After the run's processes are gone: what they wrote is still in the pipes.
void drainRest(int (&pipeFds)[2], SubprocessResult &r) {
  char buf[65536];
  for (int k = 0; k < 2; ++k) {
    if (pipeFds[k] < 0)
      continue;
    fcntl(pipeFds[k], F_SETFL, fcntl(pipeFds[k], F_GETFL) | O_NONBLOCK);
    ssize_t got;
    while ((got = read(pipeFds[k], buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
      if (got > 0)
        (k == 0 ? r.out : r.err).append(buf, got);
    close(pipeFds[k]);
    pipeFds[k] = -1;
  }
}

// The child's standard streams: pipes the caller reads (or a file for its
// output), and stdin from the caller's data, /dev/null, or inherited.
struct ChildStdio {
  int outP[2] = {-1, -1}, errP[2] = {-1, -1}, inP[2] = {-1, -1};
  int outFileFd = -1;
  int devNull = -1;
};

// Opens the streams `o` asks for; false with r.errorMessage when the output
// file or pipe cannot be made.
bool openChildStdio(const SubprocessOptions &o, ChildStdio &io, SubprocessResult &r) {
  if (!o.stdoutFile.empty()) {
    io.outFileFd = open(o.stdoutFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (io.outFileFd < 0) {
      r.errorMessage = "cannot write " + o.stdoutFile + ": " + strerror(errno);
      return false;
    }
  } else if (o.captureStdout && pipe2(io.outP, O_CLOEXEC) != 0) {
    r.errorMessage = strerror(errno);
    return false;
  }
  if (o.captureStderr && !o.mergeStderrIntoStdout)
    (void)pipe2(io.errP, O_CLOEXEC);
  if (!o.inheritStdin) {
    if (!o.stdinData.empty())
      (void)pipe2(io.inP, O_CLOEXEC);
    else
      io.devNull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  return true;
}

// Starts the child (`file`: where it is on the child's PATH, nullopt for
// posix_spawnp's own search) in a process group of its own; returns 0 or the
// errno of the failed spawn.
int spawnChild(std::vector<char *> &cargs, std::vector<char *> &cenv, const std::optional<std::string> &file,
               const SubprocessOptions &o, const ChildStdio &io, pid_t &pid) {
  int spawnErr = 0;
  Spawn sp;
  int outW = io.outFileFd >= 0 ? io.outFileFd : io.outP[1];
  describeChild(sp, o, outW, io.errP[1], io.inP[0] >= 0 ? io.inP[0] : io.devNull);
  std::lock_guard<std::mutex> g(spawnMu);
  auto spawn = [&] {
    if (!file)
      spawnErr = posix_spawnp(&pid, cargs[0], &sp.actions, &sp.attr, cargs.data(), cenv.data());
    else if (file->empty())
      spawnErr = ENOENT; // on no folder of the child's PATH
    else // argv[0] stays as written: the program finds itself on that PATH
      spawnErr = posix_spawn(&pid, file->c_str(), &sp.actions, &sp.attr, cargs.data(), cenv.data());
  };
  if (o.niceness > 0 && o.guard.empty()) {
    // Linux keeps a nice value per thread and a child starts with its
    // creator's: spawned from a thread of its own that raised its value,
    // the child and everything it starts run lower, while this thread
    // (which may measure next) keeps its own.
    std::thread t([&] {
      setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)) + o.niceness);
      spawn();
    });
    t.join();
  } else
    spawn();
  if (spawnErr == 0)
    enter(activeGroups, kActive, pid);
  return spawnErr;
}

} // namespace

SubprocessResult runSubprocess(const std::vector<std::string> &argv,
                               const SubprocessOptions &o) {
  SubprocessResult r;
  if (argv.empty()) {
    r.spawnFailed = true;
    r.errorMessage = "empty command";
    return r;
  }
  ChildStdio io;
  if (!openChildStdio(o, io, r)) {
    r.spawnFailed = true;
    return r;
  }
  // Orphans of the run come back here, where its end can reach them.
  static std::once_flag subreaper;
  std::call_once(subreaper, becomeSubreaper);
  std::string tag = newRunTag();
  auto env = buildEnv(o, tag);
  std::vector<std::string> args = argv;
  if (!o.guard.empty()) {
    args = {o.guard, std::to_string(getpid()), std::to_string(std::max(0, o.niceness))};
    args.insert(args.end(), argv.begin(), argv.end());
  }
  auto cargs = cArgv(args);
  auto cenv = cArgv(env);
  // (A guard, named by its path, runs the command with execvp on the child's PATH itself.)
  auto file = programOnChildPath(args[0], o);
  if (terminating)
    waitForTheEnd();
  auto start = Clock::now();
  pid_t pid = -1;
  int spawnErr = spawnChild(cargs, cenv, file, o, io, pid);
  for (int fd : {io.outP[1], io.errP[1], io.inP[0], io.outFileFd, io.devNull})
    if (fd >= 0)
      close(fd);
  if (spawnErr != 0) {
    for (int fd : {io.outP[0], io.errP[0], io.inP[1]})
      if (fd >= 0)
        close(fd);
    r.spawnFailed = true;
    r.exitCode = 127;
    r.errorMessage = "cannot run '" + args[0] + "': " + strerror(spawnErr);
    return r;
  }
  if (o.onStart)
    o.onStart(pid);
  if (io.inP[1] >= 0) {
    (void)!write(io.inP[1], o.stdinData.data(), o.stdinData.size());
    close(io.inP[1]);
  }
  int pipeFds[2] = {io.outP[0], io.errP[0]};
  int status = waitForChild(pid, start, o, pipeFds, r);
  // Nothing the run started outlives the call: its group, and what left the
  // group or lost its parent (re-parented here, ProcessTree.h).
  killGroup(pid);
  leave(activeGroups, kActive, pid);
  if (haveChildren())
    endTaggedDescendants(tag, isLiveSpawn);
  drainRest(pipeFds, r);
  if (terminating)
    waitForTheEnd();
  if (WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) {
    r.termSignal = WTERMSIG(status);
    r.exitCode = 128 + r.termSignal;
  }
  return r;
}

namespace {

// The descriptors of make's jobserver named in MAKEFLAGS, if any.
std::set<int> jobserverDescriptors() {
  std::set<int> fds;
  const char *flags = std::getenv("MAKEFLAGS");
  if (!flags)
    return fds;
  std::string f = flags;
  for (const char *opt : {"--jobserver-auth=", "--jobserver-fds="}) {
    size_t at = f.find(opt);
    if (at == std::string::npos)
      continue;
    int r = -1, w = -1;
    if (std::sscanf(f.c_str() + at + std::strlen(opt), "%d,%d", &r, &w) == 2)
      fds.insert({r, w});
  }
  return fds;
}

} // namespace

void keepInheritedDescriptorsToSelf() {
  std::set<int> keep = jobserverDescriptors();
  DIR *dir = opendir("/proc/self/fd");
  if (!dir)
    return;
  int own = dirfd(dir);
  while (dirent *e = readdir(dir)) {
    int fd = std::atoi(e->d_name);
    if (e->d_name[0] == '.' || fd < 3 || fd == own || keep.count(fd))
      continue;
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0)
      fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
  closedir(dir);
}

void trackGroup(int pgid) {
  if (pgid > 1 && pgid != getpgrp())
    enter(trackedGroups, kTracked, pgid);
}

void untrackGroup(int pgid) { leave(trackedGroups, kTracked, pgid); }

void setTerminationCleanup(void (*hook)()) { cleanupHook = hook; }

void forwardTerminationSignals() {
  becomeSubreaper();
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = onTerminationSignal;
    sigemptyset(&sa.sa_mask);
    for (int block : {SIGINT, SIGTERM, SIGHUP})
      sigaddset(&sa.sa_mask, block);
    sigaction(sig, &sa, nullptr);
  }
}

void endLeftoverProcesses() {
  if (haveChildren())
    endAllDescendants(kEndAllSeconds);
}

std::string shellQuote(const std::string &a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") == std::string::npos)
    return a;
  std::string q = "'";
  for (char c : a)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shellJoin(const std::vector<std::string> &argv) {
  std::string s;
  for (const auto &a : argv)
    s += (s.empty() ? "" : " ") + shellQuote(a);
  return s;
}

std::string signalName(int signal) {
  switch (signal) {
  case SIGKILL: return "SIGKILL";
  case SIGSEGV: return "SIGSEGV";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGILL: return "SIGILL";
  case SIGTERM: return "SIGTERM";
  default: return "signal " + std::to_string(signal);
  }
}

} // namespace ciq
