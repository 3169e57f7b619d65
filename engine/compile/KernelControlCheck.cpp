#include "engine/compile/KernelControlCheck.h"

#include <algorithm>

namespace ciq {

std::string kernelControlProblem(const Rendered &r, const std::vector<Receipt> &receipts, const KernelScope &scope) {
  for (const auto &d : r.kernels) {
    if (!scope.covers(d.kernel))
      continue;
    bool applied = false;
    const DirectiveOutcome *bad = nullptr;
    std::string where;
    for (const auto &rc : receipts)
      for (const auto &o : rc.directives)
        if (o.kernel == d.kernel && o.directive == d.directive && o.value == d.value) {
          // An architecture where ptxas ignored it is a failure even if
          // another took it: the program would run that code somewhere.
          if (o.status == "applied")
            applied = true;
          else if (!bad || o.status == "ignored") {
            bad = &o;
            where = rc.source;
          }
        }
    std::string name = "kernel " + (d.label.empty() ? d.kernel : d.label) + ": " + directivePtx(d);
    if (bad && (bad->status == "ignored" || !applied))
      return name + " " + (bad->status == "ignored" ? "was ignored by ptxas" : "was not written") +
             (bad->arch.empty() ? "" : " (" + bad->arch + ")") + " compiling " + where + ": " + bad->note;
    if (!applied)
      return name + " reached no compile: " +
             (scope.runtime ? "no compile while the benchmark ran had that kernel in its PTX"
                            : "no translation unit of the build has that kernel in its PTX") +
             " (renamed or removed since the baseline?)";
  }
  return "";
}

std::map<std::string, std::vector<std::string>> appliedKernels(const Receipt &rc) {
  std::map<std::string, std::vector<std::string>> out;
  // Only "applied" with an architecture: "not_applicable" may stand for a
  // compile that could not be split (no PTX read, the kernel maybe absent).
  for (const auto &o : rc.directives)
    if (o.status == "applied" && !o.arch.empty()) {
      auto &archs = out[o.kernel];
      if (std::find(archs.begin(), archs.end(), o.arch) == archs.end())
        archs.push_back(o.arch);
    }
  for (auto &[kernel, archs] : out)
    std::sort(archs.begin(), archs.end());
  return out;
}

} // namespace ciq
