// One search per run directory at a time. `ciq tune` and `ciq resume` hold an
// exclusive flock(2) on <run dir>/engine.lock for their whole life; the kernel
// drops it when the process ends, kill -9 included, so a stale lock cannot
// exist. A second search of the same run directory stops before it touches
// anything (journal, results.csv, socket, build tree).
//
// One search per build tree, too: two searches with run directories of their
// own (two ciq.yaml, or one build tree reached through a symbolic link and
// directly) built candidates in the same tree at once, each cleaning and
// compiling the objects the other then linked, so that a candidate was
// measured with code its configuration did not reach. ciq tune, resume,
// replay and validate hold <build>/CMakeFiles/ciq-engine.lock while they build.
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
  // The build tree's lock, held beside the run directory's; `runDir` is
  // named to whoever finds it taken. A tree without CMakeFiles/ (a command
  // build in a plain folder) is not locked: nothing of ciq's is written there.
  bool acquireBuildTree(const std::string &buildDir, const std::string &runDir, std::string &error);

private:
  // Locks `path` and writes `mine` (pid first) into it; false with `holder`
  // (the holder's text) when another open file holds it.
  bool lockFile(const std::string &path, const std::string &mine, std::string &holder, std::string &error);
  int fd_ = -1;
};

} // namespace ciq
