// Tracking the processes of a tuning run's compiles, so that none outlives
// the search that started them. ninja puts every command in a process group
// of its own and ciq-ptxas starts the compiler in another, so ending the
// build's group (cmake, ninja) does not reach them.
//
// - Each ciq-ptxas of a tuning run writes <run dir>/procs/<its pid>: one line
//   "<pgid> <start time of the group's leader>" per group it belongs to or
//   starts (its own, then the compiler's), and removes the file when done.
// - The engine ends every group listed there after each build and before it
//   starts (a kill -9 of the previous engine), so `ciq resume` runs nothing
//   until the killed search's compiles are gone.
// - While a compile is connected, the engine also keeps its group in memory,
//   where its SIGTERM/SIGINT handler can reach it (trackGroup).
#pragma once
#include <string>

namespace ciq {

// The wrapper's side: registers this process's group on construction,
// addGroup() adds the compiler's, the destructor removes the file.
class CompileRegistration {
public:
  explicit CompileRegistration(const std::string &runDir);
  ~CompileRegistration();
  void addGroup(int pgid);
  CompileRegistration(const CompileRegistration &) = delete;
  CompileRegistration &operator=(const CompileRegistration &) = delete;

private:
  std::string file_;
};

// Kills (SIGKILL) every registered group still alive under runDir/procs, waits
// up to waitSeconds for them to go, and removes the records. Returns the
// number of groups that were still alive.
int reapCompiles(const std::string &runDir, double waitSeconds = 5);

// Whether the group recorded as (pgid, its leader's start time) is still
// that group: alive, not ours, and its leader the recorded process (or gone,
// when Linux keeps the id for the members left).
bool sameGroupAlive(int pgid, unsigned long long start);

// The start time of a process (clock ticks since boot, /proc/<pid>/stat), 0
// when it does not exist: with the pid it names one process, never a later
// one that reuses the number.
unsigned long long processStartTime(int pid);

} // namespace ciq
