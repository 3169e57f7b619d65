#include "wrapper/LockKernels.h"

#include "common/LockMode.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <filesystem>

namespace ciq::wrapper {
namespace {

// The lock's unit (relative to its folder) and this compile's source are
// the same file: the same path once normalized, or, through a symbolic link
// or another spelling, the same file on disk.
bool sameSource(const std::string &unit, const std::string &lockDir, const std::string &source) {
  std::filesystem::path u(unit);
  if (u.is_relative())
    u = std::filesystem::path(lockDir.empty() ? "." : lockDir) / u;
  if (u.lexically_normal() == std::filesystem::path(source).lexically_normal())
    return true;
  bool same = false;
  return !llvm::sys::fs::equivalent(u.string(), source, same) && same;
}

bool sameFamily(const std::string &a, const std::string &b) { return archFamily(a) == archFamily(b); }

bool contains(const std::vector<std::string> &archs, const std::string &arch) {
  return std::any_of(archs.begin(), archs.end(), [&](const std::string &a) { return sameFamily(a, arch); });
}

// Which of `archs` (those the lock recorded here and this compile made) have
// `kernel` in their PTX: an outcome names it for that architecture.
void judge(const std::string &kernel, const std::vector<std::string> &recorded, const std::vector<std::string> &archs,
           const std::vector<DirectiveOutcome> &outcomes, LostKernel &k) {
  for (const auto &arch : archs) {
    bool here = std::any_of(outcomes.begin(), outcomes.end(),
                            [&](const DirectiveOutcome &o) { return o.kernel == kernel && sameFamily(o.arch, arch); });
    if (!here && contains(recorded, arch) && !contains(k.archs, arch))
      k.archs.push_back(arch);
    k.partly = k.partly || here;
  }
}

std::string join(const std::vector<std::string> &items, const std::string &sep) {
  std::string out;
  for (const auto &i : items)
    out += (out.empty() ? "" : sep) + i;
  return out;
}

// "sgemm_blocked (_ZN..._fPf: .minnctapersm 2)", with ", for sm_90" when
// another architecture's PTX of the compile still has it.
std::string describe(const LostKernel &k) {
  std::string what = k.kernel + ": " + join(k.directives, ", ");
  if (k.partly)
    what += ", for " + join(k.archs, ", ");
  return (k.label.empty() ? "" : k.label + " ") + "(" + what + ")";
}

} // namespace

std::vector<LostKernel> lostKernels(const KernelUnits &units, const std::string &lockDir, const std::string &source,
                                    const std::vector<std::string> &archs,
                                    const std::vector<DirectiveOutcome> &outcomes,
                                    const std::vector<KernelDirective> &ds) {
  // In the lock's order of its kernels (winner.rendered.kernels), each once.
  std::vector<LostKernel> kernels;
  for (const auto &d : ds) {
    auto k = std::find_if(kernels.begin(), kernels.end(), [&](const LostKernel &x) { return x.kernel == d.kernel; });
    if (k == kernels.end())
      k = kernels.insert(kernels.end(), LostKernel{d.kernel, d.label, {}, {}, false});
    k->directives.push_back(directivePtx(d));
  }
  std::vector<LostKernel> lost;
  for (auto &k : kernels) {
    auto byUnit = units.find(k.kernel);
    if (byUnit == units.end())
      continue;
    for (const auto &[unit, recorded] : byUnit->second)
      if (sameSource(unit, lockDir, source))
        judge(k.kernel, recorded, archs, outcomes, k);
    if (!k.archs.empty())
      lost.push_back(std::move(k));
  }
  return lost;
}

std::string lostKernelsLine(const std::vector<LostKernel> &lost, const std::string &lockPath, const std::string &source,
                            bool refuse, const std::string &warnOption) {
  std::vector<std::string> names;
  for (const auto &k : lost)
    names.push_back(describe(k));
  bool one = lost.size() == 1;
  std::string what = lockPath + ": " + (one ? "kernel " : "kernels ") + join(names, ", ") + (one ? " is" : " are") +
                     " no longer in " + source + " (renamed, its signature changed, or removed since the tune)";
  std::string its = one ? "its directive" : "their directives";
  if (refuse)
    return what + ", so the lock's " + (one ? "directive for it" : "directives for them") +
           " cannot be applied; tune again to lock the kernels as they are now, or use " + warnOption +
           " to build without " + its;
  return what + ": compiling without " + its +
         "; the rest of the lock still applies (lock policy warn); tune again to lock the kernels as they are now";
}

} // namespace ciq::wrapper
