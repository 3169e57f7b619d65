// Per-kernel controls are checked, not assumed (common/KernelDirective.h):
// each directive a candidate renders must have been written into its
// kernel's PTX by some compile of the build and kept by ptxas there.
#pragma once
#include "common/Protocol.h"
#include "engine/record/Rendered.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ciq {

// Which directives a set of receipts must account for: the kernels the
// build compiles, or those compiled while the benchmark runs (Triton): the
// build's receipts never see the latter, the run's never the former.
struct KernelScope {
  std::set<std::string> runtimeKeys;   // kernelKey() of the kernels compiled at run time
  bool runtime = false;                // true: check those only; false: every other kernel
  bool covers(const std::string &key) const { return runtimeKeys.count(key) == (runtime ? 1u : 0u); }
};

// "" when every directive of `r` in `scope` was applied somewhere; else one
// line naming the first kernel, directive and what the wrapper or ptxas said.
std::string kernelControlProblem(const Rendered &r, const std::vector<Receipt> &receipts,
                                 const KernelScope &scope = {});

// The kernels whose per-kernel control took effect in this compile, each with
// the architectures of the PTX it was written into (sorted), for
// ObjectRecord::directiveKernels: the lock records them per translation unit
// (kernel_units), so a later build notices a kernel renamed or removed there.
std::map<std::string, std::vector<std::string>> appliedKernels(const Receipt &rc);

} // namespace ciq
