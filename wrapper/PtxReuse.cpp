#include "wrapper/PtxReuse.h"
#include "common/LockSections.h"

#include "common/DeviceCode.h"
#include "common/EnvNames.h"
#include "common/FindExecutable.h"
#include "common/Subprocess.h"
#include "wrapper/UserKeep.h"

#include <llvm/Support/Allocator.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/StringSaver.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <set>
#include <thread>
#include <unistd.h>

namespace ciq::wrapper {
namespace {

// nvcc options under which the output is not one object built by the usual
// steps, or nvcc writes more than the object, its depfile and the
// intermediates -keep asks for (UserKeep.h moves those).
const std::set<std::string> kUnsupported = {
    "dryrun", "verbose", "time", "lib", "link", "run", "ptx", "cubin",
    "fatbin", "preprocess", "generate-dependencies", "generate-nonsystem-dependencies", "dlink-time-opt",
    "device-link", "ltoir", "optix-ir", "fdevice-time-trace", "output-directory", "split-compile",
    "split-compile-extended", "dlto", "lto", "optimization-info"};

std::string dirOf(const std::string &p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

std::string baseOf(const std::string &p) {
  auto s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

bool disabled() {
  const char *v = std::getenv(env::PtxReuse);
  return v && (std::string(v) == "0" || std::string(v) == "off");
}

// One step of `nvcc --dryrun`, split like a shell would.
struct Step {
  std::vector<std::string> argv;
  std::string tool() const { return argv.empty() ? "" : baseOf(argv[0]); }
};

// nvcc --dryrun prints each step as "#$ cmd args" on stderr; lines that
// only set a variable (#$ PATH=...) are not steps.
std::vector<Step> parseDryRun(const std::string &text) {
  std::vector<Step> steps;
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver(alloc);
  llvm::StringRef rest(text);
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    if (!line.consume_front("#$ "))
      continue;
    auto eq = line.find('='), sp = line.find(' ');
    if (eq != llvm::StringRef::npos && (sp == llvm::StringRef::npos || eq < sp))
      continue;
    llvm::SmallVector<const char *, 64> toks;
    llvm::cl::TokenizeGNUCommandLine(line, saver, toks);
    Step s;
    // With --threads N nvcc sends each step's output to files of its own
    // (`> /tmp/tmpxft_<pid>_..._stdout 2>/tmp/..._stderr`), named after its
    // process: a redirection is no argument of the step, and kept it made
    // every candidate's steps differ from the kept compile's (issue 48).
    for (size_t i = 0; i < toks.size(); ++i) {
      if (!toks[i])
        continue;
      llvm::StringRef t(toks[i]);
      if (t == ">" || t == "2>" || t == "1>") {
        ++i;   // the file named next
        continue;
      }
      if (t.startswith(">") || t.startswith("2>") || t.startswith("1>"))
        continue;
      s.argv.push_back(t.str());
    }
    if (!s.argv.empty())
      steps.push_back(std::move(s));
  }
  return steps;
}

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  if (from.empty())
    return;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

// The steps other than ptxas and fatbinary, the kept folder written as <KEEP>,
// sorted: what must be identical for the kept files to be this candidate's.
std::vector<std::string> frontEndSteps(const std::vector<Step> &steps, const std::string &keepDir) {
  std::vector<std::string> out;
  for (const auto &s : steps) {
    if (s.tool() == "ptxas" || s.tool() == "fatbinary")
      continue;
    std::string line = shellJoin(s.argv);
    replaceAll(line, keepDir, "<KEEP>");
    out.push_back(line);
  }
  // As a set: with --threads N nvcc lists the steps of each architecture in
  // the order its threads reach them, which changes from run to run; only
  // ptxas and fatbinary are run from the list, so its order is not compared.
  std::sort(out.begin(), out.end());
  return out;
}

// Which step differs, shortly: "step 3 (cicc): ... -arch compute_90 ..." around
// the first differing character, so a refusal names what differs.
std::string firstDifference(const std::vector<std::string> &now, const std::vector<std::string> &kept) {
  size_t i = 0;
  while (i < now.size() && i < kept.size() && now[i] == kept[i])
    ++i;
  if (i >= now.size() || i >= kept.size())
    return std::to_string(now.size()) + " steps now, " + std::to_string(kept.size()) + " kept";
  const std::string &a = now[i], &b = kept[i];
  size_t c = 0;
  while (c < a.size() && c < b.size() && a[c] == b[c])
    ++c;
  size_t from = c > 40 ? c - 40 : 0;
  auto tool = a.substr(0, a.find(' '));
  return "step " + std::to_string(i + 1) + " (" + baseOf(tool) + "): '..." + a.substr(from, 100) + "' now, '..." +
         b.substr(from, 100) + "' kept";
}

struct ToolRun {
  SubprocessResult r;
  std::vector<std::string> argv;
};

ToolRun runTool(std::vector<std::string> argv, double timeout) {
  SubprocessOptions o;
  o.captureStdout = true;
  o.captureStderr = true;
  o.timeoutSeconds = timeout;
  ToolRun t;
  t.argv = argv;
  t.r = runSubprocess(argv, o);
  return t;
}

// GNU objcopy first: it comes with the host compiler nvcc needs anyway, and
// llvm-objcopy 14 breaks the symbols of an updated section (they get
// SHN_XINDEX without an SHT_SYMTAB_SHNDX table, and ld refuses the object).
// The objcopys to try, in order: the one CIQ_OBJCOPY (or CIQ_LLVM_OBJCOPY)
// names alone, else GNU's, then LLVM's. GNU objcopy moves the section groups
// of a clang-made object and leaves its .llvm_addrsig naming the old
// indices; llvm-objcopy keeps them, so a clang host compiler's objects take
// the second (issue 48: every per-kernel compile of a clang build failed).
std::vector<std::string> objcopyCandidates() {
  for (const char *var : {env::Objcopy, env::LlvmObjcopy})
    if (const char *v = std::getenv(var); v && *v) {
      auto p = findExecutable(v);
      return p ? std::vector<std::string>{*p} : std::vector<std::string>{};
    }
  std::vector<std::string> out;
  for (const char *name : {"objcopy", "llvm-objcopy-14", "llvm-objcopy"})
    if (auto p = findExecutable(name))
      out.push_back(*p);
  return out;
}

bool moveFile(const std::string &from, const std::string &to) {
  if (!llvm::sys::fs::rename(from, to))
    return true;
  return !llvm::sys::fs::copy_file(from, to);
}

// Runs nvcc's ptxas steps at once (one per architecture), into `res`.
void runPtxasSteps(const std::vector<Step> &ptxas, double timeout, ReuseResult &res) {
  std::vector<ToolRun> runs(ptxas.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ptxas.size(); ++i)
    threads.emplace_back([&, i] { runs[i] = runTool(ptxas[i].argv, timeout); });
  for (auto &t : threads)
    t.join();
  res.reused = true;
  for (const auto &r : runs) {
    res.err += r.r.err;
    res.finalArgv.push_back(shellJoin(r.argv));
    res.timedOut = res.timedOut || r.r.timedOut;
    if (!res.crash.signal)
      res.crash = detectCompilerCrash(r.r, "ptxas");
    if (res.exitCode == 0)
      res.exitCode = r.r.spawnFailed ? 127 : r.r.exitCode;
  }
}

// nvcc's fatbinary step over this candidate's cubins (and PTX), writing
// `fatbinFile`; the kept fatbin it replaces joins `moved`.
std::vector<std::string> fatbinaryArgv(const Step &step, const std::string &bin, const std::string &fatbinFile,
                                       std::vector<std::pair<std::string, std::string>> &moved) {
  std::vector<std::string> fb = {bin + "/fatbinary"};
  std::string kept;
  for (size_t i = 1; i < step.argv.size(); ++i) {
    std::string t = step.argv[i];
    if (t.rfind("--embedded-fatbin=", 0) == 0)
      continue;
    if (t.rfind("--create=", 0) == 0) {
      kept = t.substr(9);
      t = "--create=" + fatbinFile;
    }
    for (const auto &[from, to] : moved)
      replaceAll(t, "file=" + from, "file=" + to);
    fb.push_back(t);
  }
  if (!kept.empty())
    moved.push_back({kept, fatbinFile});
  return fb;
}

} // namespace

std::string PtxReuse::assembleObject(const std::string &fatbinFile, const DeviceCode &fatbin,
                                     const std::string &object) const {
  auto tools = objcopyCandidates();
  if (tools.empty())
    return "no objcopy, llvm-objcopy-14 or llvm-objcopy on PATH (or CIQ_OBJCOPY)";
  std::string why, hostErr;
  auto kept = objectsCodeSha256({entry_->objectPath()}, hostErr);
  for (const auto &tool : tools) {
    llvm::sys::fs::remove(object);
    ToolRun oc = runTool({tool, "--update-section", entry_->fatbinSection + "=" + fatbinFile, entry_->objectPath(),
                          object},
                         ctx_.timeoutSeconds);
    std::string err;
    auto objDc = oc.r.exitCode == 0 ? readDeviceCode(object, err) : std::nullopt;
    if (!objDc || objDc->sha256 != fatbin.sha256 || objDc->bytes != fatbin.bytes) {
      why = "the object " + baseOf(tool) + " assembled does not carry the fatbin ptxas and fatbinary made" +
            (oc.r.err.empty() ? std::string() : ": " + oc.r.err.substr(0, 200));
      continue;
    }
    // Everything but the fatbin must be the kept object's, symbols included:
    // an objcopy that damages them makes an object the linker refuses.
    if (objectsCodeSha256({object}, hostErr) == kept)
      return "";
    why = baseOf(tool) + " changed more than the fatbin section of the kept object";
  }
  return why;
}

bool ptxasOnly(const CandidateMessage &c) {
  for (const auto &a : c.acfs)
    if (a.stage != "ptxas")
      return false;
  return c.nvccOptions.empty() && c.defines.empty();
}

PtxReuse::PtxReuse(ReuseContext ctx) : ctx_(std::move(ctx)) {
  const NvccCommand &cmd = *ctx_.cmd;
  bool compiles = false, depsWithCompile = false;
  for (Arg *a : const_cast<NvccCommand &>(cmd).flat()) {
    if (!a->isOption)
      continue;
    const std::string &n = a->opt.name;
    std::string spelled = a->tokens.empty() ? n : a->tokens[0];
    if (kUnsupported.count(n))
      unsupported_ = "nvcc option " + spelled;
    compiles = compiles || n == "compile" || n == "device-c";
    depsWithCompile = depsWithCompile || n == "generate-dependencies-with-compile" ||
                      n == "generate-nonsystem-dependencies-with-compile";
    if (n == "dependency-output" && !a->opt.value.empty())
      userDepfile_ = a->opt.value[0] == '/' ? a->opt.value : ctx_.cwd + "/" + a->opt.value;
  }
  userKeep_ = userKeepOf(const_cast<NvccCommand &>(cmd), ctx_.cwd);
  if (!userKeep_.problem.empty())
    unsupported_ = userKeep_.problem;
  if (disabled())
    unsupported_ = "CIQ_PTX_REUSE=0";
  else if (ctx_.runDir.empty())
    unsupported_ = "no CIQ_RUN_DIR";
  else if (cmd.inputs.size() != 1)
    unsupported_ = std::to_string(cmd.inputs.size()) + " inputs";
  else if (!compiles || !cmd.ptxasRuns)
    unsupported_ = "not a compile to an object (-c or -dc)";
  else if (depsWithCompile != !userDepfile_.empty())
    unsupported_ = "a dependency file without -MF";
  if (!unsupported_.empty())
    return;
  key_ = frontEndKey({ctx_.nvccPath, ctx_.cwd, ctx_.userArgs});
  dir_ = entryDir(ctx_.runDir, key_);
}

PtxReuse::~PtxReuse() {
  if (keeping_)
    llvm::sys::fs::remove_directories(tmpDir_); // gone already when the entry was committed
}

// Read only for ptxas-only candidates: checking the entry re-hashes every
// header, which a candidate that takes the full compile anyway need not pay.
const std::optional<KeptEntry> &PtxReuse::entry() {
  if (!loaded_) {
    entry_ = loadEntry(dir_, stale_);
    loaded_ = true;
  }
  return entry_;
}

std::vector<std::string> PtxReuse::dryRunArgs(const std::vector<std::string> &candArgs,
                                              const std::string &keepDir) const {
  // The user's own keep options go: nvcc takes the last --keep-dir (with a
  // warning), and ciq moves their files to where the user asked afterwards.
  std::vector<std::string> a = withoutKeepOptions(candArgs);
  a.insert(a.end(), {"--keep", "--keep-dir", keepDir});
  if (userDepfile_.empty())
    a.insert(a.end(), {"-MD", "-MF", keepDir + "/ciq.deps"});
  return a;
}

std::vector<std::string> PtxReuse::keepingArgs(const CandidateMessage &c, const std::vector<std::string> &candArgs) {
  if (!mayKeep(c))
    return {};
  tmpDir_ = dir_ + ".tmp" + std::to_string(getpid());
  llvm::sys::fs::remove_directories(tmpDir_);
  if (llvm::sys::fs::create_directories(tmpDir_ + "/keep"))
    return {};
  keeping_ = true;
  return dryRunArgs(candArgs, tmpDir_ + "/keep");
}

std::string PtxReuse::keepForUser(const std::string &keepDir,
                                  const std::vector<std::pair<std::string, std::string>> &built) const {
  if (userKeep_.dir.empty())
    return "";
  std::string why = copyKeptFiles(keepDir, userKeep_.dir, {keepDir + "/ciq.deps"}, built);
  return why.empty() ? "" : "the intermediates -keep asks for: " + why;
}

std::string PtxReuse::keep(const std::vector<std::string> &candArgs) {
  if (!keeping_)
    return "";
  std::string keepDir = tmpDir_ + "/keep";
  std::vector<std::string> argv = {ctx_.nvccPath, "--dryrun"};
  auto a = dryRunArgs(candArgs, keepDir);
  argv.insert(argv.end(), a.begin(), a.end());
  ToolRun dry = runTool(argv, ctx_.timeoutSeconds);
  std::string why;
  KeptEntry e;
  std::string err;
  auto dc = readDeviceCode(ctx_.output, err);
  if (dry.r.exitCode != 0)
    why = "nvcc --dryrun failed";
  else if (!dc || !dc->isCuda)
    why = "no device code in " + ctx_.output;
  else if (std::string bad = keepForUser(keepDir, {}); !bad.empty())
    why = bad;
  else {
    e.frontEndSteps = frontEndSteps(parseDryRun(dry.r.err), keepDir);
    e.fatbinSection = dc->section.substr(0, dc->section.find(' '));
    why = commitEntry(tmpDir_, dir_, e, ctx_.output, userDepfile_.empty() ? keepDir + "/ciq.deps" : userDepfile_,
                      ctx_.cwd, /*keepPreprocessed=*/!userKeep_.dir.empty());
  }
  if (!why.empty())
    llvm::sys::fs::remove_directories(tmpDir_);
  loaded_ = false; // the entry on disk is this one now (or none): read it again
  keeping_ = false;
  return why.empty() ? "" : "PTX reuse: kept nothing for " + ctx_.output + ": " + why;
}

std::vector<PtxEntry> PtxReuse::keptEntries() {
  std::vector<PtxEntry> out;
  if (!unsupported_.empty())
    return out;
  auto kept = loadEntry(dir_, stale_);
  if (!kept)
    return out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(kept->keepDir(), ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).endswith(".ptx")) {
      std::string err;
      for (auto &e : readPtxFile(it->path(), err))
        out.push_back(e);
    }
  return out;
}

// The ptxas step's PTX input, read for its entries and, for a candidate with
// per-kernel controls, edited into this candidate's folder (and the fatbin's
// embedded PTX with it, so a JIT compile of it gets the same directives).
// The architecture a ptxas command compiles for ("sm_90"), "" when it names none.
static std::string ptxasArch(const std::vector<std::string> &v) {
  std::string arch;
  for (size_t k = 1; k < v.size(); ++k)
    if (llvm::StringRef(v[k]).startswith("-arch="))
      arch = v[k].substr(6);
    else if (v[k] == "-arch" && k + 1 < v.size())
      arch = v[k + 1];
  return arch;
}

// The candidate of one ptxas step. With a lock's sections (ctx_.perArch):
// its architecture's, whose ptxas options and ACFs are added to the step
// here (the shared nvcc run had none); an architecture without one compiles
// with the defaults.
const CandidateMessage &PtxReuse::stepCandidate(std::vector<std::string> &v, const CandidateMessage &c) const {
  if (!ctx_.perArch)
    return c;
  static const CandidateMessage none;
  auto it = ctx_.perArch->find(archFamilyOf(ptxasArch(v)));
  const CandidateMessage &own = it == ctx_.perArch->end() ? none : it->second;
  std::vector<std::string> add = own.ptxasOptions;
  for (const auto &a : own.acfs)
    if (a.stage == "ptxas")
      add.insert(add.end(), {"--apply-controls", a.path});
  v.insert(v.begin() + 1, add.begin(), add.end());
  return own;
}

std::string PtxReuse::editPtx(std::vector<std::string> &v, const CandidateMessage &c, const std::string &work,
                              size_t index, ReuseResult &res,
                              std::vector<std::pair<std::string, std::string>> &moved) {
  std::string arch = ptxasArch(v);
  size_t input = 0;
  for (size_t k = 1; k < v.size(); ++k)
    if (llvm::StringRef(v[k]).endswith(".ptx") && (k == 0 || v[k - 1] != "-o"))
      input = k;
  if (input == 0)
    return c.kernelDirectives.empty() ? "" : "nvcc's ptxas step names no .ptx input, so per-kernel controls cannot be written";
  if (c.kernelDirectives.empty()) {
    std::string err;
    for (auto &e : readPtxFile(v[input], err))
      res.entries.push_back(e);
    return "";
  }
  std::string edited = work + "/" + std::to_string(index) + "." + baseOf(v[input]);
  if (std::string bad = editPtxFile(v[input], edited, c.kernelDirectives, arch, res.entries, res.directives);
      !bad.empty())
    return bad;
  moved.push_back({v[input], edited});
  v[input] = edited;
  res.editedArchs.push_back(arch);
  return "";
}

std::string PtxReuse::writeObject(const std::string &fatbinFile, const DeviceCode &fatbin, const std::string &object,
                                  bool needObject) const {
  if (!needObject) {
    // Compile-only objectives read the statistics and the hash; the build
    // only needs an object to link, and the kept one is that.
    llvm::sys::fs::copy_file(entry_->objectPath(), object);
  } else if (std::string why = assembleObject(fatbinFile, fatbin, object); !why.empty()) {
    return why;
  }
  if (!moveFile(object, ctx_.output) ||
      (!userDepfile_.empty() && llvm::sys::fs::copy_file(entry_->depfilePath(), userDepfile_)))
    return "cannot write " + ctx_.output + " or its dependency file";
  return "";
}

// One ptxas step of nvcc's, run by the toolkit's own ptxas: its cubin goes
// into this candidate's folder, never the kept one, and its PTX is edited.
std::string PtxReuse::ptxasStep(std::vector<std::string> &v, const std::string &bin, const CandidateMessage &c,
                                const std::string &work, size_t index, ReuseResult &res,
                                std::vector<std::pair<std::string, std::string>> &moved) {
  v[0] = bin + "/ptxas";
  for (size_t k = 0; k + 1 < v.size(); ++k)
    if (v[k] == "-o") {
      std::string to = work + "/" + std::to_string(index) + "." + baseOf(v[k + 1]);
      moved.push_back({v[k + 1], to});
      v[k + 1] = to;
    }
  return editPtx(v, stepCandidate(v, c), work, index, res, moved);
}

ReuseResult PtxReuse::tryReuse(const CandidateMessage &c, const std::vector<std::string> &candArgs,
                               bool needObject) {
  ReuseResult res;
  if (!mayKeep(c))
    return res;
  auto fallBack = [&](const std::string &why) {
    res.note = "PTX reuse: full compile of " + ctx_.output + ": " + why;
    return res;
  };
  if (!entry())
    return stale_.empty() ? res : fallBack(stale_ + " changed since its PTX was kept");
  auto t0 = std::chrono::steady_clock::now();
  std::string keepDir = entry_->keepDir();
  std::vector<std::string> argv = {ctx_.nvccPath, "--dryrun"};
  auto a = dryRunArgs(candArgs, keepDir);
  argv.insert(argv.end(), a.begin(), a.end());
  ToolRun dry = runTool(argv, ctx_.timeoutSeconds);
  if (dry.r.exitCode != 0)
    return fallBack("nvcc --dryrun failed: " + dry.r.err.substr(0, 200));
  auto steps = parseDryRun(dry.r.err);
  if (auto front = frontEndSteps(steps, keepDir); front != entry_->frontEndSteps)
    return fallBack("nvcc's front-end or host steps for this candidate differ from those of the kept compile (" +
                    firstDifference(front, entry_->frontEndSteps) + ")");
  std::vector<Step> ptxas, fatbin;
  for (auto &s : steps) {
    if (s.tool() == "ptxas")
      ptxas.push_back(s);
    else if (s.tool() == "fatbinary")
      fatbin.push_back(s);
  }
  if (ptxas.empty() || fatbin.size() != 1)
    return fallBack("nvcc's steps have no ptxas run or not one fatbinary run");

  std::string bin = dirOf(resolvedPath(ctx_.nvccPath));
  std::string work = dir_ + "/cand" + std::to_string(getpid());
  llvm::sys::fs::remove_directories(work);
  llvm::sys::fs::create_directories(work);
  std::vector<std::pair<std::string, std::string>> moved;
  for (size_t i = 0; i < ptxas.size(); ++i)
    if (std::string bad = ptxasStep(ptxas[i].argv, bin, c, work, i, res, moved); !bad.empty()) {
      llvm::sys::fs::remove_directories(work);
      return fallBack(bad);
    }
  runPtxasSteps(ptxas, ctx_.timeoutSeconds, res);
  auto finish = [&] {
    llvm::sys::fs::remove_directories(work);
    res.wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return res;
  };
  if (res.exitCode != 0 || res.timedOut)
    return finish(); // ptxas itself failed: the candidate's own error, as a full compile would give

  std::string fatbinFile = work + "/out.fatbin";
  ToolRun f = runTool(fatbinaryArgv(fatbin[0], bin, fatbinFile, moved), ctx_.timeoutSeconds);
  res.err += f.r.err;
  std::string err;
  auto fatDc = f.r.exitCode == 0 ? readDeviceCode(fatbinFile, err) : std::nullopt;
  if (!fatDc) {
    res.reused = false;
    finish();
    return fallBack("fatbinary failed: " + f.r.err.substr(0, 200));
  }
  res.deviceCodeSha256 = fatDc->sha256;
  res.deviceCodeBytes = fatDc->bytes;
  if (std::string why = writeObject(fatbinFile, *fatDc, work + "/out.o", needObject); !why.empty()) {
    res.reused = false;
    finish();
    return fallBack(why);
  }
  // The user's -keep gets the files this object was built from.
  if (std::string bad = keepForUser(keepDir, moved); !bad.empty()) {
    res.exitCode = 1;
    res.err += "ciq: error: " + bad + "\n";
  }
  return finish();
}

} // namespace ciq::wrapper
