#include "wrapper/Runs.h"

#include "wrapper/CompileRun.h"
#include "wrapper/KernelControls.h"
#include "wrapper/LockMode.h"
#include "wrapper/PtxReuse.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>

namespace ciq::wrapper {
namespace {

// A lock with per-kernel controls: its directives must be in the object, or
// the build fails (a locked build never quietly lacks part of its winner).
// nvcc's compile is split as a tuning run splits it (KernelControls.h), in a
// private folder; ptxas compiles an edited copy of its input.
int lockWithKernelControls(const Invocation &inv, const Prepared &prep, Parsed &parsed, CandidateMessage &c,
                           Injection &inj, const std::string &cwd, double limit) {
  auto refuse = [&](const std::string &why) {
    return fail("the lock " + inv.lockPath + " has per-kernel controls, and they cannot be written into the compile of " +
                prep.source + ": " + why + "; rebuild without the lock (or ciq_apply_lock(... POLICY warn)) to compile without them");
  };
  if (inv.kind == "ptxas") {
    PtxInputEdit edit;
    if (std::string bad = edit.apply(prep.source, parsed.ptxas.input, parsed.ptxas.arch, c.kernelDirectives, inj.argv);
        !bad.empty())
      return refuse(bad);
    Outcome out = runCompiler(inj, limit, false, prep.namedOutputs);
    if (out.run.spawnFailed)
      return fail(out.run.errorMessage, 127);
    return out.timedOut ? timeoutError(prep.source, c, limit) : out.run.exitCode;
  }
  PrivateRunDir dir;
  NvccCommand cmd = parsed.nvcc;
  PtxReuse reuse(ReuseContext{prep.nvccPath, cwd, dir.path(), prep.output, inv.args, &cmd, limit, true});
  if (!reuse.unsupported().empty())
    return refuse("it cannot be split for PTX edits (" + reuse.unsupported() + ")");
  std::vector<std::string> candArgs(inj.argv.begin() + inv.prefix.size(), inj.argv.end());
  Injection run = inj;
  run.argv = {prep.nvccPath};
  run.argv.insert(run.argv.end(), candArgs.begin(), candArgs.end());
  for (auto &a : reuse.keepArgs(c))
    run.argv.push_back(a);
  Outcome out = runCompiler(run, limit, false, prep.namedOutputs);
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  if (out.timedOut)
    return timeoutError(prep.source, c, limit);
  if (out.run.exitCode != 0)
    return out.run.exitCode;
  if (std::string n = reuse.keep(candArgs); !n.empty())
    return refuse(n);
  ReuseResult rr = reuse.tryReuse(c, candArgs, true);
  writeAll(2, rr.err);
  if (!rr.reused)
    return refuse(rr.note.empty() ? "no PTX was kept" : rr.note);
  return rr.timedOut ? timeoutError(prep.source, c, limit) : rr.exitCode;
}

} // namespace

int lockRun(const Invocation &inv) {
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
                             warnOption, prep.mode);
  if (d.fail)
    return fail(d.message);
  if (d.skip) {
    llvm::WithColor::note(llvm::errs(), "ciq-ptxas") << d.message << "\n";
    return passThrough();
  }
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
  // The tuning run's rendering without its -v: statistics are not needed here,
  // and -v changes only ptxas's record of its own command line, never the
  // SASS that the lock's device-code SHA-256 covers.
  Injection inj = prep.inject(d.candidate, false);
  if (!inj.error.empty())
    return fail(inj.error);
  double limit = compileTimeout(d.candidate);
  if (!d.candidate.kernelDirectives.empty())
    return lockWithKernelControls(inv, prep, parsed, d.candidate, inj, cwd, limit);
  if (limit <= 0)
    return execArgv(inj.argv); // nothing to watch: the compiler takes this process's place
  Outcome out = runCompiler(inj, limit, false, prep.namedOutputs);
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  if (out.timedOut)
    return timeoutError(prep.source, d.candidate, limit);
  return out.run.exitCode;
}


} // namespace ciq::wrapper
