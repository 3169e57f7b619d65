#include "wrapper/LockMode.h"

#include "common/CompilerVersion.h"
#include "common/Lockfile.h"
#include "common/Sha256.h"

#include <llvm/Support/Path.h>

#include <algorithm>

namespace ciq::wrapper {

std::optional<LockPolicy> parseLockPolicy(const std::string &s) {
  if (s == "error")
    return LockPolicy::Error;
  if (s == "warn")
    return LockPolicy::Warn;
  return std::nullopt;
}

// Triton passes --gpu-name=sm_90a on Hopper.
std::string archFamily(const std::string &arch) {
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f'))
    return arch.substr(0, arch.size() - 1);
  return arch;
}

namespace {

// Every ACF present with the recorded bytes; "" or the first problem.
std::string checkAcfs(const CandidateMessage &c, const std::string &lockPath) {
  for (const auto &a : c.acfs) {
    auto sha = sha256File(a.path);
    if (!sha)
      return lockPath + ": ACF " + a.path + " is missing; restore ciq-acf/ from version control beside the lockfile";
    if (*sha != a.sha256)
      return lockPath + ": ACF " + a.path + " has SHA-256 " + *sha + " but the lock recorded " + a.sha256 +
             "; the file was changed: restore it, or tune again";
  }
  return "";
}

// "" or why this compiler is not the one the lock was frozen with.
std::string checkVersion(const std::string &tool, const std::string &path, const std::string &locked,
                         const std::string &lockPath) {
  if (path.empty() || locked.empty())
    return "";
  std::string err;
  auto v = compilerVersion(path, err);
  if (!v) // the lock applies to one release only: an unknown release is not that one
    return lockPath + ": the version of " + tool + " could not be read (" + err + "), so the lock frozen with " +
           tool + " " + locked + " cannot be checked against it; make `" + path +
           " --version` print its release";
  if (*v != locked)
    return lockPath + ": frozen with " + tool + " " + locked + " but " + path + " is " + *v +
           "; tune again with this compiler";
  return "";
}

std::string checkArchs(const std::vector<std::string> &archs, const std::vector<std::string> &locked,
                       const std::string &lockPath) {
  auto known = [&](const std::string &a) {
    return std::any_of(locked.begin(), locked.end(), [&](const std::string &l) { return archFamily(l) == archFamily(a); });
  };
  for (const auto &a : archs)
    if (!known(a)) {
      std::string list;
      for (const auto &l : locked)
        list += (list.empty() ? "" : ", ") + l;
      return lockPath + ": this compile targets " + a + " but the lock was frozen for " +
             (list.empty() ? "no architecture" : list) +
             "; tune again for " + a;
    }
  return "";
}

} // namespace

LockDecision checkLock(const std::string &lockPath, LockPolicy policy, const std::string &nvccPath,
                       const std::string &ptxasPath, const std::vector<std::string> &sassArchs,
                       const std::string &warnOption, const BuildMode &mode, const std::string &source) {
  LockDecision d;
  std::string err;
  auto lock = readLockfile(lockPath, err);
  if (!lock) {
    d.fail = true;
    d.message = err;
    return d;
  }
  d.candidate = lockToCandidate(*lock, lockPath);
  d.kernelUnits = lock->kernelUnits;
  d.lockDir = llvm::sys::path::parent_path(lockPath).str();
  if (std::string e = checkAcfs(d.candidate, lockPath); !e.empty()) {
    d.fail = true;
    d.message = e;
    return d;
  }
  if (auto tuned = lockBuildMode(*lock)) {
    if (modePerSource(*tuned))
      tuned = buildModeOfSource(*tuned, source, d.lockDir);
    BuildMode here = mode;
    here.buildType = ""; // a compile line does not say which configuration it belongs to
    tuned->buildType = "";
    if (std::string diff = buildModeDifference(*tuned, here); !diff.empty()) {
      d.skip = true;
      d.message = lockPath + ": " + diff + ", so this compile goes without the lock (tune a lock for this "
                  "configuration, with its own LOCKFILE)";
      return d;
    }
  }
  std::string problem = checkVersion("nvcc", nvccPath, lock->nvccVersion, lockPath);
  if (problem.empty())
    problem = checkVersion("ptxas", ptxasPath, lock->ptxasVersion, lockPath);
  if (problem.empty())
    problem = checkArchs(sassArchs, lock->architectures, lockPath);
  if (problem.empty()) {
    d.apply = true;
    return d;
  }
  d.fail = policy == LockPolicy::Error;
  d.message = problem + (d.fail ? " (or use " + warnOption + " to build without the lock)" : "");
  return d;
}

} // namespace ciq::wrapper
