// `ciq explain`: why one candidate differs from another (the baseline by
// default): per kernel, what ptxas reported (registers, spill stores/loads,
// stack frame, shared memory) and the theoretical occupancy that follows, plus
// the device-code size of each object. Everything comes from the journal's
// `kernels` and `objects` of the two evaluations; nothing is rebuilt.
#pragma once
#include "RunData.h"

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
// and returns metric name -> value for each kernel launch it profiled
// (achieved occupancy, memory throughput, warp stall reasons).
struct NcuKernel {
  std::string name;
  std::map<std::string, std::string> metrics;   // name -> value with unit
};
std::optional<std::vector<NcuKernel>> runNcu(const std::string &ncu,
                                             const std::vector<std::string> &command,
                                             const std::string &cwd, std::string &error);
void printNcuComparison(const std::vector<NcuKernel> &a, const std::vector<NcuKernel> &b,
                        const std::string &labelA, const std::string &labelB,
                        llvm::raw_ostream &os);

} // namespace ciq
