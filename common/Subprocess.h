// Running a child process in its own process group, with a hard time limit.
//
// LLVM's sys::ExecuteAndWait kills only the direct child at a timeout; a compile
// (nvcc -> cicc -> ptxas) or a benchmark that forks must die as a whole group,
// leaving nothing behind, so ciq owns this small piece.
#pragma once
#include "common/FindExecutable.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct SubprocessOptions {
  std::string cwd;                               // empty: inherit
  std::map<std::string, std::string> setEnv;     // added or replaced variables
  std::vector<std::string> unsetEnv;             // removed variables
  double timeoutSeconds = 0;                     // 0: no limit
  // At the limit the group gets SIGTERM (the program's own cleanup runs),
  // then SIGKILL after this many seconds.
  double killGraceSeconds = 2;
  bool captureStdout = true;                     // else inherited
  bool captureStderr = true;                     // else inherited
  bool mergeStderrIntoStdout = false;            // one interleaved stream
  std::string stdoutFile;                        // write stdout here instead (truncate)
  std::string stdinData;                         // fed to the child; empty: /dev/null
  bool inheritStdin = false;
  // Added to the child's nice value (and so to everything it starts): a
  // build beside a measurement runs at a lower priority than the benchmark.
  int niceness = 0;
  // Called with the child's pid (= its process group id) once it runs.
  std::function<void(int)> onStart;
  // A descriptor whose readability ends the run at once (its group gets
  // SIGKILL): the wrapper's connection to the engine, which the kernel
  // closes when the engine dies, so a killed search's compile stops with it
  // (nvcc went on to its host compile). -1: none.
  int endWhenReadable = -1;
  // A build guard (ciq-build-guard, common/build_guard_main.cpp) to run the
  // command under: it leads the process group in the command's place and
  // ends everything below it when this process dies, a kill -9 included,
  // which no handler here can. It applies `niceness` to the command only.
  // Empty: the command leads its group itself.
  std::string guard;
};

// The run ends when the child exits: what it started (in its group or not,
// setsid included) is ended then, after a short grace for output still on
// its way through the pipes; nothing of it outlives the call.
struct SubprocessResult {
  int exitCode = -1;        // exit status, or 128+signal when killed by a signal
  int termSignal = 0;       // signal that ended it, 0 if it exited
  bool timedOut = false;    // ended (with its whole group: TERM, then KILL) at the limit
  bool spawnFailed = false; // could not exec; errorMessage says why
  bool endedByWatch = false; // endWhenReadable became readable: ended with its group
  std::string errorMessage;
  std::string out;          // captured stdout (or merged output)
  std::string err;          // captured stderr
  double wallMs = 0;        // until the child exited
};

SubprocessResult runSubprocess(const std::vector<std::string> &argv,
                               const SubprocessOptions &opts = {});

// Children run in their own process group (so a timeout can end the whole
// group), which puts them out of reach of the terminal's Ctrl-C. After this
// call, SIGINT, SIGTERM and SIGHUP to this process first end the running
// children's groups and every other descendant (this process becomes their
// subreaper: ProcessTree.h) and wait until they are gone, then end this
// process, as the signal would have.
void forwardTerminationSignals();

// At the end of main: ends and reaps what is still running below this
// process (a descendant that cleared its environment, so no run's tag
// reached it). Nothing ciq started outlives it.
void endLeftoverProcesses();

// Further process groups the termination signals reach (SIGTERM, then
// SIGKILL 2 s later): the compiles a build runs in groups of their own.
void trackGroup(int pgid);
void untrackGroup(int pgid);
// Called from the signal handler after every group has ended: only
// async-signal-safe work (unlink of prepared paths).
void setTerminationCleanup(void (*hook)());

// Descriptors this process inherited (3 and up) are not passed on to the
// programs it runs. ninja waits for EOF on a pipe it gives every command; a
// daemon started inside a build (sccache's server) would otherwise inherit it
// and keep `cmake --build --target ciq-tune-...` waiting until the daemon
// idles out. make's jobserver descriptors (MAKEFLAGS --jobserver-auth=R,W)
// stay inheritable, so nested makes keep their parallelism.
void keepInheritedDescriptorsToSelf();

// Shell-quotes one argument for a replayable command line.
std::string shellQuote(const std::string &arg);
std::string shellJoin(const std::vector<std::string> &argv);

// "SIGKILL" for 9, "SIGSEGV" for 11, ...; "signal N" for others.
std::string signalName(int signal);

} // namespace ciq
