// The INVALID reasons: one descriptor table (name, description, likely
// cause, next step), read by the engine (what it records), the summary
// ("3 INVALID: compile_error x2, run_timeout x1"), `ciq diagnose` and the
// docs test (docs/search-space.md "Outcomes" lists exactly these rows).
// A new reason is one row here.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace ciq {

struct InvalidReason {
  const char *name;         // as recorded in the journal and results.csv
  const char *description;  // what happened
  const char *cause;        // the likely cause
  const char *next;         // what to do next
};

// Every reason, in the order the docs list them.
const std::vector<InvalidReason> &invalidReasons();
// The row of `name`, or nullptr for a name this version does not know.
const InvalidReason *findInvalidReason(const std::string &name);
// "3 INVALID: compile_error x2, run_timeout x1" (most frequent first; ""
// when `counts` is empty).
std::string invalidSummary(const std::map<std::string, int> &counts);

namespace reason {
inline const char *CompileError = "compile_error";
inline const char *CompilerCrash = "compiler_crash";
inline const char *CompileTimeout = "compile_timeout";
inline const char *LinkError = "link_error";
inline const char *StaleBuild = "stale_build";
// A per-kernel control (common/KernelDirective.h) that reached no compile of
// its kernel, or that ptxas's report shows it did not take.
inline const char *KernelControlIgnored = "kernel_control_ignored";
// The winner's rehearsal (engine/winner/Rehearsal.h): the build the lock
// makes (full compile, assembled objects, device link and link, through the
// lock route) failed, or its device code is not what was tuned. The lock is
// never written for it; the next finalist is rehearsed.
inline const char *RehearsalFailed = "rehearsal_failed";
// Not the candidate's fault: retried once, never recorded; the search stops
// if it happens again.
inline const char *BuildInterrupted = "build_interrupted";
// Not the candidate's fault either: a write the disk refused (full, read-only,
// failing; common/DiskFault.h). Never recorded; the search stops at once.
inline const char *DiskFault = "disk_fault";
// Not the candidate's either: the GPU lock could not be taken (a lock file
// or folder another user planted or holds; engine/measure/GpuLock.h). Never
// recorded; the search stops at once and resumes once the lock is free.
inline const char *GpuLockRefused = "gpu_lock";
// Not the candidate's either: the engine's socket was replaced during the
// build (another user's in its place, refused by the wrapper). Never
// recorded; the search stops at once.
inline const char *SocketReplaced = "socket_replaced";
inline const char *NotMeasurable = "not_measurable";
inline const char *RunCrash = "run_crash";
inline const char *RunTimeout = "run_timeout";
inline const char *WrongAnswer = "wrong_answer";
inline const char *ParseError = "parse_error";
inline const char *InvalidValue = "invalid_value";
inline const char *NoFreshResult = "no_fresh_result";
// benchmark.metric kernel_time: the run gave no kernel times (KernelTrace.h).
inline const char *NoKernelTimes = "no_kernel_times";
// benchmark.cases: one case slower than the baseline by more than
// benchmark.max_regression_percent, whatever the geometric mean.
inline const char *CaseRegression = "case_regression";
// executor: slurm (docs/cluster.md): the node failed the job twice (it was
// requeued once on another node), or the worker could not run at all.
inline const char *NodeFailure = "node_failure";
inline const char *Preempted = "preempted";
inline const char *TimeLimit = "time_limit";
inline const char *GpuLost = "gpu_lost";
inline const char *WorkerFailed = "worker_failed";
} // namespace reason

// The reasons that are the environment's, never the candidate's: not
// recorded, and the search stops (build_interrupted after its one retry).
bool stopsTheSearch(const std::string &reason);

} // namespace ciq
