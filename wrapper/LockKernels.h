// A lock's per-kernel controls against what one compile's PTX holds now
// (docs/lockfile.md, "Kernels renamed or gone"). The lock records, per
// kernel, the translation units whose PTX had it when it was tuned, and for
// which architectures (kernel_units). A compile of such a unit whose PTX for
// one of those architectures has no entry of that name any more compiles
// other code than the tune measured: the kernel was renamed, its signature
// changed (which changes its mangled name), or it was removed, and its
// directive can no longer be applied. The lock policy decides what follows:
// `error` fails the compile, `warn` compiles without that directive.
#pragma once
#include "common/KernelDirective.h"
#include "common/Lockfile.h"

#include <string>
#include <vector>

namespace ciq::wrapper {

struct LostKernel {
  std::string kernel;                  // kernelKey, as the lock names it
  std::string label;                   // the short name, "" when the lock has none
  std::vector<std::string> directives; // as PTX spells them: ".minnctapersm 2"
  std::vector<std::string> archs;      // the architectures whose PTX lacks it
  bool partly = false;                 // another architecture's PTX of this compile still has it
};

// The kernels that `units` (Lockfile::kernelUnits, units relative to
// `lockDir`) records in `source` for one of `archs` (the architectures whose
// PTX this compile edited) and that no outcome of this compile names for
// that architecture (applyDirectives gives one for every directive whose
// kernel is an entry of the PTX). Kernels the lock records for other
// architectures only, or in other sources, are not this compile's to judge.
std::vector<LostKernel> lostKernels(const KernelUnits &units, const std::string &lockDir, const std::string &source,
                                    const std::vector<std::string> &archs,
                                    const std::vector<DirectiveOutcome> &outcomes,
                                    const std::vector<KernelDirective> &ds);

// The one line that names them: what (each kernel's short and mangled name
// and its directives, the lock, the source), and what to do. refuse: policy
// error, with `warnOption` ("--lock-policy=warn" or "CIQ_LOCK_POLICY=warn")
// as the way to build without them; else the warning of policy warn.
std::string lostKernelsLine(const std::vector<LostKernel> &lost, const std::string &lockPath, const std::string &source,
                            bool refuse, const std::string &warnOption);

} // namespace ciq::wrapper
