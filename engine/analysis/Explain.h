// `ciq explain`: why one candidate differs from another (the baseline by
// default): per kernel, what ptxas reported (registers, spill stores/loads,
// stack frame, shared memory) and the theoretical occupancy that follows, plus
// the device-code size of each object. Everything comes from the journal's
// `kernels` and `objects` of the two evaluations; nothing is rebuilt.
#pragma once
#include "engine/analysis/RunData.h"

#include <llvm/Support/raw_ostream.h>
#include <string>

namespace ciq {

struct ExplainOptions {
  int threadsPerBlock = 256;       // launch block size used for occupancy
  long dynamicSharedBytes = 0;     // dynamic shared memory per block, bytes
  std::string arch;                // override the architecture ptxas reported
};

// Prints the comparison; false with a one-line error when the journal lacks
// kernel statistics for either evaluation.
bool explainCandidates(const RecordedEval &cand, const RecordedEval &against,
                       const ExplainOptions &opts, llvm::raw_ostream &os, std::string &error);

// Nsight Compute part (`--ncu`): runs `ncu` on `command` (argv, in `cwd`)
// and returns, for the first launch of each kernel, label -> value with unit:
// duration, SM/memory/DRAM throughput, theoretical and achieved occupancy,
// and the warp stall reasons (warps stalled per issued instruction).
struct NcuKernel {
  std::string name;
  std::map<std::string, std::string> metrics;   // label ("achieved occupancy (%)") -> "83.78 %"
};
// The ncu command: CSV raw page, those metrics only, `--kernel-id :::1`, and
// `--clock-control none` (ncu otherwise locks the GPU clocks to base while it
// profiles; ciq reports clock state and never changes it).
std::vector<std::string> ncuArgv(const std::string &ncu, const std::vector<std::string> &command);
// ncu's CSV output (after the application's own) -> kernels; nullopt + error.
std::optional<std::vector<NcuKernel>> parseNcuCsv(const std::string &out, std::string &error);
std::optional<std::vector<NcuKernel>> runNcu(const std::string &ncu,
                                             const std::vector<std::string> &command,
                                             const std::string &cwd, std::string &error);
void printNcuComparison(const std::vector<NcuKernel> &a, const std::vector<NcuKernel> &b,
                        const std::string &labelA, const std::string &labelB,
                        llvm::raw_ostream &os);

} // namespace ciq
