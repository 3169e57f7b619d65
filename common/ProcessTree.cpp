#include "common/ProcessTree.h"
#include "common/EnvNames.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ciq {
namespace {

struct ProcRow {
  int pid = 0, ppid = 0;
  char state = '?';
  bool ours = false; // a descendant of this process
};

// As the kernel lays out what getdents64 returns.
struct Dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Appends the decimal digits of v (>= 0) at p; returns the end.
char *appendInt(char *p, long v) {
  char digits[24];
  int n = 0;
  do
    digits[n++] = char('0' + v % 10);
  while ((v /= 10) > 0);
  while (n > 0)
    *p++ = digits[--n];
  return p;
}

// The decimal number at s (no sign, no locale).
int parseInt(const char *s) {
  int v = 0;
  while (*s >= '0' && *s <= '9')
    v = v * 10 + (*s++ - '0');
  return v;
}

char *appendStr(char *p, const char *s) {
  while (*s)
    *p++ = *s++;
  return p;
}

// State and parent of one process from /proc/<pid>/stat: "pid (comm) S ppid ...".
bool readStat(int pid, ProcRow &row) {
  char path[48];
  char *e = appendStr(appendInt(appendStr(path, "/proc/"), pid), "/stat");
  *e = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[512];
  ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0)
    return false;
  buf[got] = 0;
  char *close = nullptr; // the command name may hold spaces and ')'
  for (char *c = buf; *c; ++c)
    if (*c == ')')
      close = c;
  if (!close || close[1] != ' ' || !close[2] || close[3] != ' ')
    return false;
  row.pid = pid;
  row.state = close[2];
  row.ppid = parseInt(close + 4);
  row.ours = false;
  return true;
}

// Every process's pid, parent and state (at most cap of them).
int readProcTable(ProcRow *rows, int cap) {
  int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return 0;
  alignas(8) char buf[8192];
  int n = 0;
  long got;
  while (n < cap && (got = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
    for (long off = 0; off < got && n < cap;) {
      auto *d = reinterpret_cast<Dirent64 *>(buf + off);
      off += d->reclen;
      if (d->name[0] < '1' || d->name[0] > '9')
        continue;
      if (readStat(parseInt(d->name), rows[n]))
        ++n;
    }
  }
  close(dfd);
  return n;
}

// Marks the descendants of this process (rows sorted by pid, for lookups).
void markDescendants(ProcRow *rows, int n) {
  std::sort(rows, rows + n, [](const ProcRow &a, const ProcRow &b) { return a.pid < b.pid; });
  int self = getpid();
  auto ours = [&](int pid) {
    if (pid == self)
      return true;
    ProcRow key;
    key.pid = pid;
    auto it = std::lower_bound(rows, rows + n, key, [](const ProcRow &a, const ProcRow &b) { return a.pid < b.pid; });
    return it != rows + n && it->pid == pid && it->ours;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = 0; i < n; ++i)
      if (!rows[i].ours && rows[i].pid != self && ours(rows[i].ppid))
        rows[i].ours = changed = true;
  }
}

bool dead(const ProcRow &r) { return r.state == 'Z' || r.state == 'X' || r.state == 'x'; }

double monotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleepMs(long ms) {
  timespec ts{0, ms * 1000 * 1000};
  nanosleep(&ts, nullptr);
}

// Does the process's environment (as it was at its exec) carry `tag` in
// CIQ_PROCESS_TAGS? False when it cannot be read (gone, a zombie).
bool carriesTag(int pid, const std::string &tag) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string key = std::string(env::ProcessTags) + "=";
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos)
      end = env.size();
    if (env.compare(at, key.size(), key) == 0) {
      std::string words = " " + env.substr(at + key.size(), end - at - key.size()) + " ";
      return words.find(" " + tag + " ") != std::string::npos;
    }
    at = end + 1;
  }
  return false;
}

constexpr int kTableRows = 32768;
constexpr double kTaggedGiveUpSeconds = 10;

} // namespace

void becomeSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }
void stopBeingSubreaper() { prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); }

std::string newRunTag() {
  static std::atomic<unsigned> next{0};
  return std::to_string(getpid()) + "." + std::to_string(++next);
}

std::string runTagsValue(const std::string &tag) {
  const char *inherited = std::getenv(env::ProcessTags);
  return inherited && *inherited ? std::string(inherited) + " " + tag : tag;
}

bool haveChildren() {
  siginfo_t info{};
  return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0;
}

int endTaggedDescendants(const std::string &tag, bool (*isLiveSpawn)(int pid)) {
  std::unique_ptr<ProcRow[]> rows(new ProcRow[kTableRows]);
  std::set<int> killed;
  int self = getpid();
  double giveUp = monotonicSeconds() + kTaggedGiveUpSeconds;
  while (true) {
    int n = readProcTable(rows.get(), kTableRows);
    markDescendants(rows.get(), n);
    bool found = false;
    for (int i = 0; i < n; ++i)
      if (rows[i].ours && !dead(rows[i]) && carriesTag(rows[i].pid, tag)) {
        kill(rows[i].pid, SIGKILL);
        killed.insert(rows[i].pid);
        found = true;
      }
    // Orphans come back to this process: reap the ended ones, except a
    // running child of another run (it reaps its own).
    for (int i = 0; i < n; ++i)
      if (rows[i].ppid == self && (dead(rows[i]) || killed.count(rows[i].pid)) && !isLiveSpawn(rows[i].pid))
        waitpid(rows[i].pid, nullptr, WNOHANG);
    if (!found || monotonicSeconds() > giveUp)
      break;
    sleepMs(2);
  }
  return (int)killed.size();
}

int signalAllDescendants(int sig) {
  static ProcRow rows[kTableRows];
  int n = readProcTable(rows, kTableRows);
  markDescendants(rows, n);
  int sent = 0;
  for (int i = 0; i < n; ++i)
    if (rows[i].ours && !dead(rows[i]) && kill(rows[i].pid, sig) == 0)
      ++sent;
  return sent;
}

void endAllDescendants(double seconds) {
  // One table for the handler and the end of main, never both at once.
  static std::atomic<bool> busy{false};
  static ProcRow rows[kTableRows];
  if (busy.exchange(true))
    return;
  double giveUp = monotonicSeconds() + seconds;
  while (true) {
    int n = readProcTable(rows, kTableRows);
    markDescendants(rows, n);
    for (int i = 0; i < n; ++i)
      if (rows[i].ours && !dead(rows[i]))
        kill(rows[i].pid, SIGKILL);
    int status;
    pid_t r;
    while ((r = waitpid(-1, &status, WNOHANG)) > 0)
      ;
    if ((r < 0 && errno == ECHILD) || monotonicSeconds() > giveUp)
      break;
    sleepMs(5);
  }
  busy = false;
}

} // namespace ciq
