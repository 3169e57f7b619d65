#include "wrapper/Runs.h"

#include "wrapper/CompileRun.h"
#include "wrapper/KernelControls.h"
#include "wrapper/LockKernels.h"
#include "common/FoldUnitOptions.h"
#include "common/LockMode.h"
#include "common/LockSections.h"
#include "wrapper/PtxReuse.h"
#include "wrapper/PtxasStats.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <set>

namespace ciq::wrapper {
namespace {

// One compile of a lock with per-kernel controls.
struct LockCompile {
  const Invocation &inv;
  const Prepared &prep;
  Parsed &parsed;
  LockDecision &d;
  Injection &inj;
  std::string cwd;
  double limit;
};

// What the compile wrote: its directives' outcomes, and the architecture of
// each PTX they went into (lostKernels compares them with kernel_units).
struct Written {
  std::vector<DirectiveOutcome> outcomes;
  std::vector<std::string> archs;
};

// The compile fails for the lock's sake. Its object, when nvcc's own run
// left one (without the directives), goes too: a build tool that finds it
// newer than its source would take it as built next time.
int refuseLocked(const Prepared &prep, const std::string &line) {
  if (!prep.output.empty())
    llvm::sys::fs::remove(prep.output);
  return fail(line);
}

int cannotWrite(const LockCompile &lc, const std::string &why) {
  std::string what = lc.d.perArch.empty() ? " has per-kernel controls, and they cannot be written into"
                                          : " has a section per architecture, which cannot be applied each to its "
                                            "architecture's ptxas run in";
  return refuseLocked(lc.prep, "the lock " + lc.inv.lockPath + what + " the compile of " + lc.prep.source + ": " + why +
                               "; rebuild without the lock (or ciq_apply_lock(... POLICY warn)) to compile without them");
}

// ptxas called directly: it compiles an edited copy of its PTX input.
int lockPtxasInput(const LockCompile &lc, Written &w) {
  CandidateMessage &c = lc.d.candidate;
  PtxInputEdit edit;
  if (std::string bad = edit.apply(lc.prep.source, lc.parsed.ptxas.input, lc.parsed.ptxas.arch, c.kernelDirectives,
                                   lc.inj.argv);
      !bad.empty())
    return cannotWrite(lc, bad);
  w.outcomes = edit.outcomes();
  w.archs = {lc.parsed.ptxas.arch};
  Outcome out = runCompiler(lc.inj, lc.limit, false, lc.prep.namedOutputs);
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  return out.timedOut ? timeoutError(lc.prep.source, c, lc.limit) : out.run.exitCode;
}

// nvcc: the compile is split as a tuning run splits it (KernelControls.h),
// in a private folder.
int lockNvccSplit(const LockCompile &lc, Written &w) {
  const Invocation &inv = lc.inv;
  CandidateMessage &c = lc.d.candidate;
  PrivateRunDir dir;
  NvccCommand cmd = lc.parsed.nvcc;
  PtxReuse reuse(ReuseContext{lc.prep.nvccPath, lc.cwd, dir.path(), lc.prep.output, inv.args, &cmd, lc.limit, true,
                              lc.d.perArch.empty() ? nullptr : &lc.d.perArch});
  if (!reuse.unsupported().empty())
    return cannotWrite(lc, "it cannot be split for PTX edits (" + reuse.unsupported() + ")");
  std::vector<std::string> candArgs(lc.inj.argv.begin() + inv.prefix.size(), lc.inj.argv.end());
  auto keeping = reuse.keepingArgs(c, candArgs);
  if (keeping.empty())
    return cannotWrite(lc, "cannot make a folder in " + dir.path() + " to keep its PTX in");
  Injection run = lc.inj;
  run.argv = {lc.prep.nvccPath};
  run.argv.insert(run.argv.end(), keeping.begin(), keeping.end());
  Outcome out = runCompiler(run, lc.limit, false, lc.prep.namedOutputs);
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  if (out.timedOut)
    return timeoutError(lc.prep.source, c, lc.limit);
  if (out.run.exitCode != 0)
    return out.run.exitCode;
  if (std::string n = reuse.keep(candArgs); !n.empty())
    return cannotWrite(lc, n);
  ReuseResult rr = reuse.tryReuse(c, candArgs, true);
  writeAll(2, lc.inj.addedVerbose ? stripPtxasVerbose(rr.err) : rr.err);
  if (!rr.reused)
    return cannotWrite(lc, rr.note.empty() ? "no PTX was kept" : rr.note);
  w.outcomes = rr.directives;
  w.archs = rr.editedArchs;
  return rr.timedOut ? timeoutError(lc.prep.source, c, lc.limit) : rr.exitCode;
}

// A lock with per-kernel controls: its directives must be in the object, or
// the build fails (a locked build never quietly lacks part of its winner).
// A kernel the lock recorded in this source and no longer in its PTX
// (renamed or removed since the tune) follows the lock policy: error fails
// the compile, warn says so in one line and keeps the object, which has
// every other directive.
int lockWithKernelControls(const LockCompile &lc, bool refuse, const std::string &warnOption) {
  Written w;
  int status = lc.inv.kind == "ptxas" ? lockPtxasInput(lc, w) : lockNvccSplit(lc, w);
  if (status != 0)
    return status;
  auto lost = lostKernels(lc.d.kernelUnits, lc.d.lockDir, lc.prep.source, w.archs, w.outcomes,
                          lc.d.candidate.kernelDirectives);
  // Sections per architecture: each judged by its own kernels, in its own PTX.
  for (const auto &[arch, c] : lc.d.perArch) {
    auto units = lc.d.perArchUnits.find(arch);
    if (units == lc.d.perArchUnits.end() || c.kernelDirectives.empty())
      continue;
    std::vector<std::string> archs;
    for (const auto &a : w.archs)
      if (archFamilyOf(a) == arch)
        archs.push_back(a);
    auto more = lostKernels(units->second, lc.d.lockDir, lc.prep.source, archs, w.outcomes, c.kernelDirectives);
    lost.insert(lost.end(), more.begin(), more.end());
  }
  if (lost.empty())
    return 0;
  std::string line = lostKernelsLine(lost, absolute(lc.inv.lockPath, lc.cwd), lc.prep.source, refuse, warnOption);
  if (refuse)
    return refuseLocked(lc.prep, line);
  warn(line);
  return 0;
}

// A rehearsal (Invocation::replacesLock): the arguments an earlier lock's
// ciq_apply_lock() put on this compile line go, as a tuning run removes them,
// so the compile is what the lock about to be written makes once configure
// has rendered it instead.
Invocation withoutReplacedLock(const Invocation &inv) {
  if (inv.replacesLock.empty())
    return inv;
  std::string err;
  auto old = readLockSet(inv.replacesLock, err, /*checkIntegrity=*/false);
  if (!old)
    return inv; // nothing of it can be on the line: ciq_apply_lock() refuses a lock that does not read
  auto tokens = lockSetCompileArgs(*old, inv.replacesLock);
  std::set<std::string> drop(tokens.begin(), tokens.end());
  Invocation out = inv;
  out.args.clear();
  for (const auto &a : inv.args)
    if (!drop.count(a))
      out.args.push_back(a);
  return out;
}

} // namespace

int lockRun(const Invocation &given) {
  Invocation inv = withoutReplacedLock(given);
  auto policy = parseLockPolicy(inv.lockPolicy);
  if (!policy)
    return fail("lock policy '" + inv.lockPolicy + "' is not one of error, warn (--lock-policy or CIQ_LOCK_POLICY)");
  std::string cwd = currentDir();
  Parsed parsed;
  Prepared prep = prepare(inv, parsed, cwd);
  auto passThrough = [&] {
    auto a = inv.prefix;
    a.insert(a.end(), inv.args.begin(), inv.args.end());
    return execArgv(a);
  };
  if (!prep.error.empty())
    return fail(prep.error);
  if (!prep.ptxasRuns && !prep.versionQuery)
    return passThrough();
  std::string warnOption = inv.mode == "launcher" ? "--lock-policy=warn" : "CIQ_LOCK_POLICY=warn";
  LockDecision d = checkLock(absolute(inv.lockPath, cwd), *policy, prep.nvccPath, prep.ptxasPath, prep.sassArchs,
                             warnOption, prep.mode, prep.source.empty() ? "" : absolute(prep.source, cwd));
  if (d.fail)
    return fail(d.message);
  if (d.skip) {
    llvm::WithColor::note(llvm::errs(), "ciq-ptxas") << d.message << "\n";
    return passThrough();
  }
  if (d.defaults)
    return passThrough(); // the lock has no section for this compile's architectures (said at configure, lock show)
  if (!d.apply) {
    warn(d.message + " (lock policy warn: compiling without the lock)");
    return passThrough();
  }
  foldUnitOptions(d.candidate, prep.source);
  if (prep.versionQuery)
    return versionWithCandidate(inv, d.candidate, "lock");
  if (std::string p = cacheParentProblem(); !p.empty())
    return fail(p);
  if (std::string bad = stageAcfs(d.candidate, "the lock " + inv.lockPath); !bad.empty())
    return fail(bad);
  for (auto &[arch, c] : d.perArch)
    if (std::string bad = stageAcfs(c, "the lock " + inv.lockPath + " (" + arch + ")"); !bad.empty())
      return fail(bad);
  // The tuning run's rendering, its -v included: ptxas records its own
  // command line in every cubin (.note.nv.tkinfo), so a lock build without
  // the -v the search compiled with gives a cubin of other bytes, and a
  // fatbinary of another size shifts every section after it: the program the
  // finalists measured would not be the program the lock builds. Its output
  // is removed as in a tuning run (runCompiler).
  Injection inj = prep.inject(d.candidate, true);
  if (!inj.error.empty())
    return fail(inj.error);
  double limit = compileTimeout(d.candidate);
  // Sections per architecture: nvcc's one run is split, and each
  // architecture's ptxas run gets its own section (PtxReuse's perArch).
  if (!d.candidate.kernelDirectives.empty() || !d.perArch.empty())
    return lockWithKernelControls(LockCompile{inv, prep, parsed, d, inj, cwd, limit}, *policy == LockPolicy::Error,
                                  warnOption);
  if (limit <= 0 && !inj.addedVerbose)
    return execArgv(inj.argv); // nothing to watch or filter: the compiler takes this process's place
  Outcome out = runCompiler(inj, limit, false, prep.namedOutputs);
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  if (out.timedOut)
    return timeoutError(prep.source, d.candidate, limit);
  return out.run.exitCode;
}


} // namespace ciq::wrapper
