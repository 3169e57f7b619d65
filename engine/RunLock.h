// One search per run directory at a time. `ciq tune` and `ciq resume` hold an
// exclusive flock(2) on <run dir>/engine.lock for their whole life; the kernel
// drops it when the process ends, kill -9 included, so a stale lock cannot
// exist. A second search of the same run directory stops before it touches
// anything (journal, results.csv, socket, build tree).
#pragma once
#include <string>

namespace ciq {

class RunLock {
public:
  RunLock() = default;
  RunLock(const RunLock &) = delete;
  RunLock &operator=(const RunLock &) = delete;
  ~RunLock();

  // False with error (one line: who holds it, what to do) when another
  // process holds the lock; `what` names the search for that line.
  bool acquire(const std::string &runDir, const std::string &what, std::string &error);

private:
  int fd_ = -1;
};

} // namespace ciq
