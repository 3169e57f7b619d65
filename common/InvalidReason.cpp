#include "common/InvalidReason.h"

#include <algorithm>

namespace ciq {

const std::vector<InvalidReason> &invalidReasons() {
  static const std::vector<InvalidReason> table = {
      {reason::CompileError, "a compile of the target failed",
       "a control value the compiler rejects, or a -D value that hits an #error",
       "replay the candidate (`ciq replay ID`), read its log, and remove the failing value from the space"},
      {reason::CompilerCrash, "the compiler (nvcc, cicc, ptxas) was killed by a signal",
       "a compiler fault or the machine (out of memory, killed by the OOM killer), not the control value",
       "replay the candidate once more; if it crashes again, report the reproducer command in its log to NVIDIA"},
      {reason::CompileTimeout, "one compile ran past timeouts.compile_s, or the build past timeouts.build_s",
       "a control that makes the compiler search far longer (high opt levels, huge unrolls)",
       "raise timeouts.compile_s, or narrow the control's domain"},
      {reason::LinkError, "every CUDA translation unit compiled, the build still failed",
       "an undefined reference or a host-side error the candidate causes",
       "read the log; remove the -D value or option that breaks the link"},
      {reason::StaleBuild, "a CUDA translation unit, or a kernel compiled while the benchmark ran, sent no receipt for this candidate",
       "the configuration did not reach the compiler: ciq-ptxas is not the launcher (nor the stand-in on PATH or TRITON_PTXAS_PATH), or a cache answered",
       "run `ciq canary` and `ciq doctor`; this stops the search"},
      {reason::KernelControlIgnored, "a per-kernel control (a PTX directive of one kernel) was not written, or ptxas did not take it",
       "an entry that cannot take the directive, a compile that cannot be split for PTX edits, or ptxas keeping its own limit",
       "read the message: it names the kernel, the directive and ptxas's report; leave that kernel out (kernel_controls.kernels)"},
      {reason::RehearsalFailed, "the build the lock would make (every object assembled, device link and link, through "
                                "the lock route) failed, or made other device code than the tuned build",
       "a shortcut of the search (PTX reuse, an object never assembled or linked) hid what the full build does: an "
       "nvlink check across translation units, an object objcopy cannot update, run-specific symbols",
       "nothing to do: no lock is written for it and the next finalist is rehearsed; the message has the first error "
       "line and the log (report a device-code difference to ciq)"},
      {reason::BuildInterrupted, "the build died of a signal or lost its compiles, twice",
       "something outside the candidate ended the build (a kill, an out-of-memory kill, a lost engine connection)",
       "nothing is recorded for it; find what killed the build, then `ciq resume`"},
      {reason::DiskFault, "a write of the candidate's build failed because the disk is full, read-only or failing (ENOSPC, EDQUOT, EROFS, EIO)",
       "the file system of the build tree, the run directory or the temporary folder, not the candidate",
       "nothing is recorded for it and the search stops; do what its line says for the errno (free space, remount "
       "it read-write, check the disk), then `ciq resume`"},
      {reason::GpuLockRefused, "the GPU lock could not be taken before the candidate's measurement",
       "the lock file or its folder is another user's (planted, or not one to trust), or cannot be opened: the "
       "environment, not the candidate",
       "nothing is recorded for it and the search stops; do what its line says (remove the planted file, or set "
       "CIQ_GPU_LOCK_DIR to a folder of your own), then `ciq resume`"},
      {reason::SocketReplaced, "the engine's socket was removed or replaced during the build, and its compiles refused the socket in its place",
       "another user can write to the run directory (or the socket's folder) and put a socket of theirs there",
       "nothing is recorded for it and the search stops; make the folder the line names yours alone (chmod o-w), "
       "then `ciq resume`"},
      {reason::NotMeasurable, "the compile metric cannot be measured here",
       "ptxas did not run at compile time (-dlto, PTX only) or printed no statistics for a kernel",
       "compile SASS at compile time (drop -dlto for tuning), or use a runtime metric"},
      {reason::RunCrash, "the benchmark or correctness command crashed or exited non-zero",
       "a candidate that breaks the program at run time (bad launch shape, out-of-bounds access)",
       "run the candidate's benchmark by hand (`ciq replay ID`) and read its log"},
      {reason::RunTimeout, "the benchmark or correctness command ran past benchmark.timeout_s",
       "a much slower candidate, or a hang", "raise benchmark.timeout_s if the baseline is close to it"},
      {reason::WrongAnswer, "the correctness gate failed",
       "a control that changes the program's results (fmad, ftz, -D values outside the valid range)",
       "exclude the control, or fix the correctness check's tolerance"},
      {reason::ParseError, "the metric could not be read from the benchmark's output",
       "benchmark.metric does not match what the benchmark prints",
       "fix benchmark.metric in ciq.yaml (the log shows the pattern and the output)"},
      {reason::InvalidValue, "the benchmark reported a value its unit does not allow (not finite, zero or negative)",
       "a timer that did not run (an empty loop, a skipped kernel) or a parse of the wrong number",
       "run the benchmark by hand; make it time the kernels and print a positive, finite value"},
      {reason::NoFreshResult, "the benchmark wrote no fresh result file (benchmark.metric.file) in this run",
       "a branch of the program that skips writing the file; an old file is never read as this run's result",
       "make every run of the benchmark write the file, or read the metric from stdout"},
      {reason::NoKernelTimes, "the run gave no kernel times (benchmark.metric kernel_time)",
       "the benchmark launched no kernel (or none matching benchmark.kernels), ciq's injection library did not load "
       "or could not trace (CUPTI missing, another profiler attached), or a process exited without exit handlers",
       "read the candidate's log line: it says which; docs/troubleshooting.md \"No kernel times\""},
      {reason::CaseRegression, "one case of benchmark.cases is slower than the baseline by more than benchmark.max_regression_percent",
       "a configuration that speeds up some inputs and slows another (a tile that suits large sizes only)",
       "nothing to do: the search keeps the candidates that slow no case; raise max_regression_percent to accept the trade"},
      {reason::NodeFailure, "the Slurm job's node failed twice (NODE_FAIL, BOOT_FAIL, or the job vanished), the second time on another node",
       "dying or unreachable nodes (executor: slurm), not the candidate",
       "check the nodes named in the message (`sinfo -R`), then `ciq resume`"},
      {reason::Preempted, "the Slurm job was preempted twice, the second time on another node",
       "a partition where higher-priority jobs preempt ciq's (executor: slurm)",
       "use a partition without preemption (slurm.partition), or resume when the cluster is quieter"},
      {reason::TimeLimit, "the Slurm job reached its time limit twice, the second time on another node",
       "slurm.time_limit_min shorter than build, check and benchmark of one candidate",
       "raise slurm.time_limit_min"},
      {reason::GpuLost, "the GPU the Slurm job was given was not visible to nvidia-smi, twice, the second time on another node",
       "a GPU that fell off the bus or a node whose driver failed",
       "check the nodes named in the message (`nvidia-smi` there), drain them, then `ciq resume`"},
      {reason::WorkerFailed, "the Slurm job ended without a result record, or `ciq worker` could not evaluate (sbatch refused the job, no workspace)",
       "sbatch options the cluster refuses, ciq or the sources not on shared storage, a worker killed for memory",
       "read the job's output file named in the message (docs/cluster.md: what must be on shared storage)"},
  };
  return table;
}

const InvalidReason *findInvalidReason(const std::string &name) {
  for (const auto &r : invalidReasons())
    if (name == r.name)
      return &r;
  return nullptr;
}

bool stopsTheSearch(const std::string &r) {
  return r == reason::BuildInterrupted || r == reason::DiskFault || r == reason::GpuLockRefused ||
         r == reason::SocketReplaced;
}

std::string invalidSummary(const std::map<std::string, int> &counts) {
  std::vector<std::pair<int, std::string>> top;
  int total = 0;
  for (const auto &[r, n] : counts) {
    top.emplace_back(-n, r);
    total += n;
  }
  if (total == 0)
    return "";
  std::sort(top.begin(), top.end());
  std::string s = std::to_string(total) + " INVALID: ";
  for (size_t i = 0; i < top.size(); ++i)
    s += (i ? ", " : "") + top[i].second + " x" + std::to_string(-top[i].first);
  return s;
}

} // namespace ciq
