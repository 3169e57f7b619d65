#include "wrapper/Runs.h"

#include "common/FoldUnitOptions.h"
#include "common/DeviceCode.h"
#include "common/DiskFault.h"
#include "common/EnvNames.h"
#include "common/InvalidReason.h"
#include "common/ProcessTrack.h"
#include "common/Sha256.h"
#include "wrapper/CompileRun.h"
#include "wrapper/CompilerCrash.h"
#include "wrapper/EngineClient.h"
#include "wrapper/KernelControls.h"
#include "wrapper/NarrowArch.h"
#include "wrapper/PtxReuse.h"
#include "wrapper/PtxasStats.h"
#include "wrapper/RegisterCap.h"

#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

namespace ciq::wrapper {
namespace {

// The receipt of a candidate built by PTX reuse: its ptxas statistics, the
// device code of the fatbin it made, and the full command it stands for.
void fillReusedReceipt(const ReuseResult &rr, const Injection &inj, Receipt &rc) {
  writeAll(2, inj.addedVerbose ? stripPtxasVerbose(rr.err) : rr.err);
  rc.exitStatus = rr.exitCode;
  rc.status = rr.timedOut           ? reason::CompileTimeout
              : rr.crash.signal != 0 ? reason::CompilerCrash
              : rr.exitCode == 0     ? "ok"
                                     : reason::CompileError;
  rc.crashSignal = rr.crash.signal;
  rc.crashedTool = rr.crash.tool;
  rc.wallMs = rr.wallMs;
  rc.ptxasRan = true;
  // The same statistics as a full compile, the register cap's overrides
  // included: nothing about a candidate's record may depend on whether its
  // PTX was reused.
  if (rc.status == "ok")
    rc.kernels = parsePtxasVerbose(rr.err);
  rc.capOverridesUnattributed = markRegisterCapOverrides(rr.err, rc.kernels);
  rc.finalArgv = inj.argv;
  rc.overriddenUserOptions = inj.overridden;
  rc.skippedControls = inj.skipped;
  rc.deviceCodeSha256 = rr.deviceCodeSha256;
  rc.deviceCodeBytes = rr.deviceCodeBytes;
  rc.ptxReuse = "reused";
}

// A compile (or PTX reuse) that failed, or kept nothing, because a folder it
// writes is full, read-only or failing: the receipt says so, and the engine
// records nothing for the candidate and stops the search (common/DiskFault.h).
void noteDiskFault(Receipt &rc, const std::string &toolOutput, const std::vector<std::string> &folders) {
  if (rc.ioErrno != 0)
    return;
  if (auto f = diskFaultOfFailedTool(toolOutput, folders)) {
    rc.ioErrno = f->err;
    rc.ioPath = f->path;
  }
}

// The receipt goes to the engine that asked for the object. When that engine
// is gone the object must not stay in the build tree with a candidate's
// device code in it, however it was made (full compile or PTX reuse).
bool sendReceiptOrRemove(EngineClient &engine, const Receipt &rc, const std::string &output) {
  if (engine.sendReceipt(rc))
    return true;
  if (!output.empty())
    ::unlink(output.c_str());
  return false;
}

// Nothing to send a receipt to: the compile stopped with its engine.
int engineEnded() {
  return fail("the ciq engine ended during this compile (its connection closed), so the compiler was stopped "
              "with it; `ciq resume` builds the candidate again");
}

// One candidate's compile: what every step of it reads and fills.
struct CandidateCompile {
  const Invocation &inv;
  Prepared &prep;
  Parsed &parsed;
  CandidateMessage &cand;
  Receipt &rc;
  CompileRegistration &registration;
  int engineFd;                         // the engine's connection, watched while compilers run
  std::string cwd;
  std::vector<std::string> reuseArgs;   // the user's arguments, as PTX reuse keys them
  NvccCommand reuseCmd;                 // those parsed, before the injection edits them
};

// The tokens ciq_apply_lock() added for an earlier winner are not part of
// this candidate (the baseline must be the default compile), and
// narrow_architectures compiles SASS for the measured architecture only
// (NarrowArch.h): the command is parsed again without them.
bool restate(const Invocation &inv, const CandidateMessage &cand, const std::string &cwd, Invocation &stripped,
             Parsed &parsed, Prepared &prep, std::string &err) {
  if (!cand.stripArgs.empty()) {
    std::set<std::string> drop(cand.stripArgs.begin(), cand.stripArgs.end());
    stripped.args.clear();
    for (const auto &a : inv.args)
      if (!drop.count(a))
        stripped.args.push_back(a);
    parsed = Parsed{};
    prep = prepare(stripped, parsed, cwd);
    if (!prep.error.empty()) {
      err = prep.error;
      return false;
    }
  }
  if (!cand.narrowTo.empty() && inv.kind == "nvcc") {
    std::vector<std::string> narrowed;
    if (!narrowNvccArgs(stripped.args, cand.narrowTo, cwd, narrowed, err))
      return false;
    stripped.args = narrowed;
    parsed = Parsed{};
    prep = prepare(stripped, parsed, cwd);
    if (!prep.error.empty()) {
      err = prep.error;
      return false;
    }
  }
  return true;
}

// The receipt of a compile that ran the compiler (not PTX reuse).
void fillCompiledReceipt(CandidateCompile &cc, const Outcome &out, const Injection &inj, PtxReuse *reuse) {
  Receipt &rc = cc.rc;
  rc.exitStatus = out.run.exitCode;
  CompilerCrash crash = detectCompilerCrash(out.run, baseName(cc.inv.compilerPath));
  rc.status = out.timedOut             ? reason::CompileTimeout
              : crash.signal != 0     ? reason::CompilerCrash
              : out.run.exitCode == 0 ? "ok"
                                      : reason::CompileError;
  rc.crashSignal = crash.signal;
  rc.crashedTool = crash.tool;
  rc.wallMs = out.run.wallMs;
  // Only a report ptxas printed is evidence that it ran (with -dlto it
  // does not, at compile time); only a compile that succeeded has stats.
  rc.ptxasRan = out.ptxasReported;
  rc.cached = out.cacheHit;
  if (rc.status == "ok")
    rc.kernels = out.kernels;
  else if (rc.status == reason::CompileError)
    noteDiskFault(rc, out.run.err, cc.prep.folders(reuse ? reuse->folder() : ""));
  rc.capOverridesUnattributed = out.capOverridesUnattributed;
  rc.finalArgv = inj.argv;
  rc.overriddenUserOptions = inj.overridden;
  rc.skippedControls = inj.skipped;
  if (rc.status == "ok") {
    std::string err;
    if (auto dc = readDeviceCode(cc.prep.output, err)) {
      rc.deviceCodeSha256 = dc->sha256;
      rc.deviceCodeBytes = dc->bytes;
    }
  }
}

// A candidate built by PTX reuse: its receipt, with the per-kernel controls
// checked against ptxas's report. Returns the exit status.
int reusedCompile(CandidateCompile &cc, const ReuseResult &rr, const Injection &inj, PtxReuse &reuse, double limit,
                  double earlierMs) {
  fillReusedReceipt(rr, inj, cc.rc);
  cc.rc.wallMs += earlierMs;
  if (cc.rc.status == reason::CompileError)
    noteDiskFault(cc.rc, rr.err, cc.prep.folders(reuse.folder()));
  recordDirectives(cc.rc, rr.entries, rr.directives);
  return rr.timedOut ? timeoutError(cc.prep.source, cc.cand, limit) : rr.exitCode;
}

// What the engine decides a kernel's per-kernel controls from, beside its
// PTX (KernelSpace.h): whether this compile can take PTX edits at all, and
// the flags under which ptxas refuses shared-memory spilling.
void noteCompileFacts(Receipt &rc, const NvccCommand &cmd, const std::string &splitProblem) {
  for (auto &k : rc.kernels) {
    k.relocatable = cmd.relocatable;
    k.deviceDebug = cmd.deviceDebug;
    k.splitProblem = splitProblem;
  }
}

// nvcc: PTX reuse where it applies, else the full compile (keeping the front
// end for later candidates, and for this one's per-kernel controls).
// `splitProblem`: why this compile cannot take PTX edits ("" when it can).
int compileNvccRun(CandidateCompile &cc, const Injection &inj, double limit, std::string &splitProblem) {
  const auto &ds = cc.cand.kernelDirectives;
  // Per-kernel controls of a candidate that changes the front end: a private
  // entry, kept and reused within this compile only.
  std::optional<PrivateRunDir> privateDir;
  bool privateEntry = !ds.empty() && !ptxasOnly(cc.cand);
  if (privateEntry)
    privateDir.emplace();
  PtxReuse reuse(ReuseContext{cc.prep.nvccPath, cc.cwd, privateEntry ? privateDir->path() : getEnv(env::RunDir),
                              cc.prep.output, cc.reuseArgs, &cc.reuseCmd, limit, privateEntry});
  splitProblem = reuse.unsupported();
  std::vector<std::string> candArgs(inj.argv.begin() + cc.inv.prefix.size(), inj.argv.end());
  ReuseResult rr = reuse.tryReuse(cc.cand, candArgs, cc.cand.needObject);
  if (rr.reused)
    return reusedCompile(cc, rr, inj, reuse, limit, 0);
  if (!rr.note.empty()) {
    note(rr.note);
    noteDiskFault(cc.rc, rr.note, {reuse.folder(), folderOf(cc.prep.output)});
  }
  Injection run = inj;
  if (auto keeping = reuse.keepingArgs(cc.cand, candArgs); !keeping.empty()) {
    // The kept files come from nvcc itself: a compiler cache in front of it
    // could answer from its cache and keep nothing.
    run.argv = {cc.prep.nvccPath};
    run.argv.insert(run.argv.end(), keeping.begin(), keeping.end());
    cc.rc.ptxReuse = "kept";
  }
  // OpenSSL's first SHA-256 sets up its provider: do that on another core
  // while the compiler runs, not after it.
  std::thread warmHash([] { sha256Hex(""); });
  Outcome out = runCompiler(run, limit, true, cc.prep.namedOutputs, &cc.registration, cc.engineFd);
  warmHash.join();
  if (out.run.endedByWatch)
    return engineEnded();
  if (cc.rc.ptxReuse == "kept" && out.run.exitCode == 0 && !out.timedOut)
    if (std::string n = reuse.keep(candArgs); !n.empty()) {
      note(n);
      noteDiskFault(cc.rc, n, {reuse.folder()});
      cc.rc.ptxReuse = "full";
    }
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  fillCompiledReceipt(cc, out, inj, &reuse);
  if (cc.rc.status == "ok" && !ds.empty()) {
    // The object nvcc made has no directives yet: ptxas again on the kept,
    // edited PTX. Without a kept front end they cannot be written.
    ReuseResult again = reuse.tryReuse(cc.cand, candArgs, cc.cand.needObject);
    if (again.reused)
      return reusedCompile(cc, again, inj, reuse, limit, out.run.wallMs);
    std::string why = !reuse.unsupported().empty() ? "this compile cannot be split for PTX edits (" +
                                                         reuse.unsupported() + ")"
                                                   : again.note.empty() ? "no PTX was kept" : again.note;
    recordDirectives(cc.rc, {}, unappliedDirectives(ds, why));
  } else if (cc.rc.status == "ok" && cc.rc.ptxReuse == "kept") {
    recordDirectives(cc.rc, reuse.keptEntries(), {});
  }
  return out.timedOut ? timeoutError(cc.prep.source, cc.cand, limit) : out.run.exitCode;
}

int compileNvcc(CandidateCompile &cc, const Injection &inj, double limit) {
  std::string splitProblem;
  int status = compileNvccRun(cc, inj, limit, splitProblem);
  noteCompileFacts(cc.rc, cc.reuseCmd, splitProblem);
  return status;
}

// ptxas called directly: the per-kernel controls go into a copy of its input.
int compilePtxas(CandidateCompile &cc, Injection &inj, double limit) {
  PtxInputEdit edit;
  if (std::string bad = edit.apply(cc.prep.source, cc.parsed.ptxas.input, cc.parsed.ptxas.arch,
                                   cc.cand.kernelDirectives, inj.argv);
      !bad.empty())
    edit.outcomes() = unappliedDirectives(cc.cand.kernelDirectives, bad);
  std::thread warmHash([] { sha256Hex(""); });
  Outcome out = runCompiler(inj, limit, true, cc.prep.namedOutputs, &cc.registration, cc.engineFd);
  warmHash.join();
  if (out.run.endedByWatch)
    return engineEnded();
  if (out.run.spawnFailed)
    return fail(out.run.errorMessage, 127);
  fillCompiledReceipt(cc, out, inj, nullptr);
  recordDirectives(cc.rc, edit.entries(), edit.outcomes());
  return out.timedOut ? timeoutError(cc.prep.source, cc.cand, limit) : out.run.exitCode;
}

// What the engine's answer decided: the candidate compiled, its receipt sent.
int compileCandidate(CandidateCompile &cc, EngineClient &engine, const std::vector<std::string> &userArgv) {
  Receipt &rc = cc.rc;
  CandidateMessage &cand = cc.cand;
  int status = 0;
  if (cc.prep.versionQuery) {
    status = versionWithCandidate(cc.inv, cand);
    rc.exitStatus = status;
    rc.status = status == 0 ? "ok" : reason::CompileError;
    rc.finalArgv = userArgv;
  } else if (std::string bad = stageAcfs(cand, "candidate " + cand.candidateId); !bad.empty()) {
    // Checked before launch: ptxas would only say it cannot open the file.
    rc.exitStatus = 1;
    rc.status = reason::CompileError;
    rc.reason = bad;
    rc.finalArgv = userArgv;
    engine.sendReceipt(rc);
    return fail(bad);
  } else {
    Injection inj = cc.prep.inject(cand, true);
    if (!inj.error.empty())
      return fail(inj.error);
    double limit = compileTimeout(cand);
    status = cc.inv.kind == "nvcc" ? compileNvcc(cc, inj, limit) : compilePtxas(cc, inj, limit);
    if (status == 127 && rc.status.empty())
      return status; // the compiler could not be started: said already
  }
  return sendReceiptOrRemove(engine, rc, cc.prep.output) ? status : fail(engine.error());
}

} // namespace

int tuningRun(const Invocation &inv, const std::string &socket) {
  std::string cwd = currentDir();
  Parsed parsed;
  Prepared prep = prepare(inv, parsed, cwd);
  if (!prep.error.empty())
    return fail(prep.error);
  if (!prep.ptxasRuns && !prep.versionQuery)
    return execArgv([&] { auto a = inv.prefix; a.insert(a.end(), inv.args.begin(), inv.args.end()); return a; }());
  if (std::string p = cacheParentProblem(); !p.empty())
    return fail(p);

  CompileRequest req;
  req.compiler = inv.kind;
  req.mode = inv.mode;
  req.cwd = cwd;
  req.source = prep.source;
  req.output = prep.output;
  req.argv = inv.prefix;
  req.argv.insert(req.argv.end(), inv.args.begin(), inv.args.end());
  req.pid = getpid();
  req.engineToken = getEnv(env::EngineToken);
  // Written before the engine is even asked: if it was killed, its successor
  // ends this process (and the compiler it starts) before building anything.
  CompileRegistration registration(getEnv(env::RunDir));
  EngineClient engine(socket, socketTimeoutFromEnv());
  auto cand = engine.requestCandidate(req);
  if (!cand && engine.compileUnchanged()) {
    if (!engine.notice().empty())
      warn(engine.notice());
    return execArgv(req.argv);
  }
  if (!cand)
    return fail(engine.error());
  foldUnitOptions(*cand, prep.source);
  Invocation stripped = inv;
  std::string err;
  if (!restate(inv, *cand, cwd, stripped, parsed, prep, err))
    return fail(err);

  Receipt rc;
  rc.candidateId = cand->candidateId;
  rc.candidateHash = cand->candidateHash;
  rc.engineToken = cand->engineToken;
  rc.source = prep.source;
  rc.output = prep.output;
  // PTX reuse reads the user's command as it was, before the injection edits it.
  CandidateCompile cc{inv, prep, parsed, *cand, rc, registration, engine.connectionFd(), cwd,
                      cand->stripArgs.empty() ? inv.args : stripped.args, parsed.nvcc};
  return compileCandidate(cc, engine, req.argv);
}

} // namespace ciq::wrapper
