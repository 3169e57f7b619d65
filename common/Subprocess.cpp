#include "Subprocess.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

extern char **environ;

namespace ciq {
namespace {

using Clock = std::chrono::steady_clock;

// The process group of the child being waited for (0: none); read by the
// signal handler, so a lock-free atomic.
std::atomic<int> activeGroup{0};

void onTerminationSignal(int sig) {
  int g = activeGroup.load();
  if (g > 0)
    kill(-g, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}

std::vector<std::string> buildEnv(const SubprocessOptions &o) {
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    bool drop = o.setEnv.count(key) != 0;
    for (const auto &u : o.unsetEnv)
      drop = drop || u == key;
    if (!drop)
      env.push_back(kv);
  }
  for (const auto &[k, v] : o.setEnv)
    env.push_back(k + "=" + v);
  return env;
}

std::vector<char *> cArgv(std::vector<std::string> &v) {
  std::vector<char *> out;
  for (auto &s : v)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs in the forked child: new process group, redirections, exec.
[[noreturn]] void execChild(std::vector<std::string> argv, std::vector<std::string> env,
                            const SubprocessOptions &o, int outW, int errW, int inR,
                            int errPipeW) {
  setpgid(0, 0);
  signal(SIGPIPE, SIG_DFL);
  if (inR >= 0)
    dup2(inR, 0);
  if (outW >= 0)
    dup2(outW, 1);
  if (o.mergeStderrIntoStdout && outW >= 0)
    dup2(outW, 2);
  else if (errW >= 0)
    dup2(errW, 2);
  if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) {
    int e = errno;
    (void)!write(errPipeW, &e, sizeof e);
    _exit(127);
  }
  auto a = cArgv(argv);
  auto en = cArgv(env);
  execvpe(a[0], a.data(), en.data());
  int e = errno;
  (void)!write(errPipeW, &e, sizeof e);
  _exit(127);
}

void killGroup(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
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
  int outP[2] = {-1, -1}, errP[2] = {-1, -1}, inP[2] = {-1, -1}, exP[2];
  int outFileFd = -1;
  if (!o.stdoutFile.empty()) {
    outFileFd = open(o.stdoutFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (outFileFd < 0) {
      r.spawnFailed = true;
      r.errorMessage = "cannot write " + o.stdoutFile + ": " + strerror(errno);
      return r;
    }
  } else if (o.captureStdout && pipe2(outP, O_CLOEXEC) != 0) {
    r.spawnFailed = true;
    r.errorMessage = strerror(errno);
    return r;
  }
  if (o.captureStderr && !o.mergeStderrIntoStdout)
    (void)pipe2(errP, O_CLOEXEC);
  int devNull = -1;
  if (!o.inheritStdin) {
    if (!o.stdinData.empty())
      (void)pipe2(inP, O_CLOEXEC);
    else
      devNull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  (void)pipe2(exP, O_CLOEXEC);
  auto env = buildEnv(o);
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int outW = outFileFd >= 0 ? outFileFd : outP[1];
    execChild(argv, env, o, outW, errP[1], inP[0] >= 0 ? inP[0] : devNull, exP[1]);
  }
  close(exP[1]);
  for (int fd : {outP[1], errP[1], inP[0], outFileFd, devNull})
    if (fd >= 0)
      close(fd);
  if (pid < 0) {
    r.spawnFailed = true;
    r.errorMessage = std::string("fork failed: ") + strerror(errno);
    return r;
  }
  setpgid(pid, pid); // also from the parent, so a kill at once cannot miss the group
  activeGroup = pid;
  if (o.onStart)
    o.onStart(pid);
  int childErrno = 0;
  if (read(exP[0], &childErrno, sizeof childErrno) == sizeof childErrno) {
    r.spawnFailed = true;
    r.errorMessage = "cannot run '" + argv[0] + "': " + strerror(childErrno);
  }
  close(exP[0]);
  if (inP[1] >= 0) {
    (void)!write(inP[1], o.stdinData.data(), o.stdinData.size());
    close(inP[1]);
  }

  auto deadline = start + std::chrono::duration<double>(o.timeoutSeconds);
  std::vector<pollfd> fds;
  if (outP[0] >= 0)
    fds.push_back({outP[0], POLLIN, 0});
  if (errP[0] >= 0)
    fds.push_back({errP[0], POLLIN, 0});
  char buf[65536];
  int status = 0;
  bool reaped = false;
  while (true) {
    int waitMs = 100;
    if (o.timeoutSeconds > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0 && !r.timedOut) {
        r.timedOut = true;
        killGroup(pid);
      }
      waitMs = (int)std::max<long>(0, std::min<long>(left, 100));
    }
    bool open = false;
    for (auto &p : fds)
      open = open || p.fd >= 0;
    if (open) {
      int n = poll(fds.data(), fds.size(), waitMs);
      if (n < 0 && errno != EINTR)
        break;
      for (auto &p : fds) {
        if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR)))
          continue;
        ssize_t k = read(p.fd, buf, sizeof buf);
        if (k <= 0) {
          close(p.fd);
          p.fd = -1;
          continue;
        }
        (p.fd == outP[0] ? r.out : r.err).append(buf, k);
      }
    }
    if (!reaped) {
      pid_t w = waitpid(pid, &status, open ? WNOHANG : 0);
      if (w == pid)
        reaped = true;
      else if (!open && o.timeoutSeconds > 0) {
        // Nothing to read: poll the child with a short sleep so the deadline holds.
        usleep(std::min(waitMs, 20) * 1000);
      }
    }
    if (reaped && !open)
      break;
    if (reaped) {
      // The child is gone; grandchildren may still hold the pipes. Give them
      // until the deadline (or a short grace) and then end the group.
      if (r.timedOut)
        killGroup(pid);
    }
  }
  if (!reaped)
    waitpid(pid, &status, 0);
  killGroup(pid); // nothing of the group outlives the call
  activeGroup = 0;
  r.wallMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (WIFEXITED(status))
    r.exitCode = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) {
    r.termSignal = WTERMSIG(status);
    r.exitCode = 128 + r.termSignal;
  }
  return r;
}

void forwardTerminationSignals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = onTerminationSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

std::optional<std::string> findExecutable(const std::string &name, const std::string &skip) {
  auto real = [](const std::string &p) {
    char buf[PATH_MAX];
    return realpath(p.c_str(), buf) ? std::string(buf) : p;
  };
  std::string skipReal = skip.empty() ? "" : real(skip);
  auto usable = [&](const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0 &&
           (skipReal.empty() || real(p) != skipReal);
  };
  if (name.find('/') != std::string::npos)
    return usable(name) ? std::optional<std::string>(name) : std::nullopt;
  const char *path = getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= p.size()) {
    size_t end = p.find(':', pos);
    if (end == std::string::npos)
      end = p.size();
    std::string dir = p.substr(pos, end - pos);
    if (dir.empty())
      dir = ".";
    std::string cand = dir + "/" + name;
    if (usable(cand))
      return cand;
    pos = end + 1;
  }
  return std::nullopt;
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

} // namespace ciq
