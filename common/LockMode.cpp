#include "common/LockMode.h"

#include "common/CompilerVersion.h"
#include "common/FoldUnitOptions.h"
#include "common/LockSections.h"
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

// The checks of one winner (a schema-1 lock, or one section) for this
// compile: ACFs, configuration, compiler releases; `archs` against its
// architectures only for a schema-1 lock. "" when it applies, else `d` says
// what follows (fail or skip) or the problem is returned for the policy.
std::string checkWinner(const Lockfile &lock, const std::string &lockPath, const std::string &nvccPath,
                        const std::string &ptxasPath, const std::vector<std::string> &sassArchs, const BuildMode &mode,
                        const std::string &source, LockDecision &d) {
  CandidateMessage c = lockToCandidate(lock, lockPath);
  if (std::string e = checkAcfs(c, lockPath); !e.empty()) {
    d.fail = true;
    return d.message = e;
  }
  if (auto tuned = lockBuildMode(lock)) {
    if (modePerSource(*tuned))
      tuned = buildModeOfSource(*tuned, source, d.lockDir);
    BuildMode here = mode;
    here.buildType = ""; // a compile line does not say which configuration it belongs to
    tuned->buildType = "";
    if (std::string diff = buildModeDifference(*tuned, here); !diff.empty()) {
      d.skip = true;
      return d.message = lockPath + ": " + diff + ", so this compile goes without the lock (tune a lock for this "
                         "configuration, with its own LOCKFILE)";
    }
  }
  std::string problem = checkVersion("nvcc", nvccPath, lock.nvccVersion, lockPath);
  if (problem.empty())
    problem = checkVersion("ptxas", ptxasPath, lock.ptxasVersion, lockPath);
  if (problem.empty() && lock.section.empty())
    problem = checkArchs(sassArchs, lock.architectures, lockPath);
  return problem;
}

// What one nvcc run of a fat compile shares between its architectures.
CandidateMessage sharedPart(const CandidateMessage &c) {
  CandidateMessage s;
  s.nvccOptions = c.nvccOptions;
  s.defines = c.defines;
  for (const auto &a : c.acfs)
    if (a.stage == "nvcc")
      s.acfs.push_back(a);
  return s;
}

std::vector<std::string> acfHashes(const CandidateMessage &c) {
  std::vector<std::string> out;
  for (const auto &a : c.acfs)
    out.push_back(a.stage + ":" + a.sha256);
  return out;
}

// Per architecture: the sections of a fat compile whose architectures do not
// all share one winner. "" or why one nvcc run cannot apply them.
std::string splitByArchitecture(const LockSet &set, const std::string &lockPath, const std::vector<std::string> &archs,
                                const std::string &source, LockDecision &d) {
  std::string firstArch;
  for (const auto &a : archs) {
    const Lockfile *s = set.sectionFor(a);
    CandidateMessage c = s ? lockToCandidate(*s, lockPath) : CandidateMessage{};
    foldUnitOptions(c, source);
    CandidateMessage shared = sharedPart(c);
    // An architecture without a section shares the run's front end (the
    // -D parameters, the same in every section, and nvcc's options): only
    // its ptxas run is the defaults'.
    if (s && firstArch.empty()) {
      d.candidate = shared;
      d.candidate.candidateId = "lock:sections";
      firstArch = a;
    } else if (s && (shared.nvccOptions != d.candidate.nvccOptions || shared.defines != d.candidate.defines ||
                     acfHashes(shared) != acfHashes(d.candidate))) {
      return lockPath + ": this compile builds " + firstArch + " and " + a +
             " in one nvcc run, and their sections differ in nvcc options or nvcc ACFs, which one "
             "run cannot apply per architecture (ptxas options and per-kernel controls it can); compile each "
             "architecture in its own compile, or tune both with the same nvcc controls";
    }
    CandidateMessage own;
    own.candidateId = s ? "lock:" + s->candidateId : "defaults";
    own.ptxasOptions = c.ptxasOptions;
    own.kernelDirectives = c.kernelDirectives;
    for (const auto &acf : c.acfs)
      if (acf.stage == "ptxas")
        own.acfs.push_back(acf);
    d.perArch[archFamilyOf(a)] = own;
    if (s)
      d.perArchUnits[archFamilyOf(a)] = s->kernelUnits;
  }
  return "";
}

} // namespace

LockDecision checkLock(const std::string &lockPath, LockPolicy policy, const std::string &nvccPath,
                       const std::string &ptxasPath, const std::vector<std::string> &sassArchs,
                       const std::string &warnOption, const BuildMode &mode, const std::string &source) {
  LockDecision d;
  std::string err;
  auto set = readLockSet(lockPath, err);
  if (!set) {
    d.fail = true;
    d.message = err;
    return d;
  }
  d.lockDir = llvm::sys::path::parent_path(lockPath).str();
  // The winners this compile's architectures get, each once.
  std::vector<const Lockfile *> used;
  bool everyArch = true;
  for (const auto &a : sassArchs) {
    const Lockfile *s = set->sectionFor(a);
    everyArch = everyArch && s;
    if (s && std::find(used.begin(), used.end(), s) == used.end())
      used.push_back(s);
  }
  if (set->oneWinner() || (sassArchs.empty() && set->sections.size() == 1))
    used = {&set->sections[0]}, everyArch = true;
  if (used.empty()) {
    d.defaults = true; // no section for what this compile builds: as if there were no lock
    return d;
  }
  std::string problem;
  for (const Lockfile *s : used) {
    problem = checkWinner(*s, lockPath, nvccPath, ptxasPath, sassArchs, mode, source, d);
    if (d.fail || d.skip)
      return d;
    if (!problem.empty())
      break;
  }
  bool oneCandidate = everyArch && std::all_of(used.begin(), used.end(), [&](const Lockfile *s) {
                        return s->candidateHash == used[0]->candidateHash;
                      });
  if (problem.empty() && oneCandidate) {
    d.candidate = lockToCandidate(*used[0], lockPath);
    d.kernelUnits = used[0]->kernelUnits;
  } else if (problem.empty()) {
    problem = splitByArchitecture(*set, lockPath, sassArchs, source, d);
  }
  if (problem.empty()) {
    d.apply = true;
    return d;
  }
  d.perArch.clear();
  d.fail = policy == LockPolicy::Error;
  d.message = problem + (d.fail ? " (or use " + warnOption + " to build without the lock)" : "");
  return d;
}

} // namespace ciq::wrapper
