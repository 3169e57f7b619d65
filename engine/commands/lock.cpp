// `ciq lock show|verify|acfs|env|render`: read a lockfile, prove a build matches it, apply it to run-time
// compiles, or check and render it for ciq_apply_lock() (docs/lockfile.md).
#include "common/AcfStaging.h"
#include "common/BuildMode.h"
#include "engine/compile/BuildDriver.h"
#include "engine/config/CMakeCache.h"
#include "engine/commands/Command.h"
#include "common/CompilerVersion.h"
#include "engine/config/Config.h"
#include "common/DeviceCode.h"
#include "common/EnvNames.h"
#include "common/JsonRead.h"
#include "engine/winner/LockWriter.h"
#include "engine/winner/LockApply.h"
#include "engine/winner/LockObjects.h"
#include "engine/compile/TorchRoute.h"
#include "engine/winner/SharedObjectCode.h"
#include "engine/winner/LockUnits.h"
#include "common/BuildMode.h"
#include "common/LockSections.h"
#include "engine/commands/LockSectionsPrint.h"
#include "engine/winner/LockSectionCheck.h"
#include "common/NumberFormat.h"
#include "common/Paths.h"
#include "engine/compile/RuntimeCompiles.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <optional>
#include <set>

using namespace llvm;

namespace {

cl::SubCommand LockCmd("lock", "Show a lockfile (show [ciq.lock]), verify that a build produces its device code "
                               "(verify [ciq.lock] --build-dir DIR [--target T] | --object FILE...), print the "
                               "paths its ACFs reach the compiler by (acfs [ciq.lock]), or print the variables that "
                               "apply it to run-time compiles (env [ciq.lock]: eval \"$(ciq lock env ciq.lock)\"), or check it "
                               "against a CMake target and print the arguments that apply it (render, for "
                               "ciq_apply_lock()), or add lock_sha256 to a lock without it (seal [ciq.lock])");
cl::opt<std::string> Action(cl::Positional, cl::desc("show|verify|acfs|env|render|seal"), cl::Required, cl::sub(LockCmd));
cl::opt<std::string> LockPath(cl::Positional, cl::desc("[lockfile]"), cl::init("ciq.lock"), cl::sub(LockCmd));
// verify --object a.o b.o c.o: the words after --object are objects too, as
// the usage line (--object FILE...) and verify's advice write them.
cl::list<std::string> MoreWords(cl::Positional, cl::desc("verify: more objects after --object"), cl::ZeroOrMore,
                                cl::sub(LockCmd));
cl::opt<std::string> BuildDir("build-dir", cl::desc("verify: the build tree that applied the lock; show: list the "
                                                   "options each CUDA compile of the target gets there; render: "
                                                   "the build tree applying it"), cl::sub(LockCmd));
cl::opt<std::string> Target("target", cl::desc("verify: the target (default: the lock's); render: the target "
                                               "applying it"), cl::sub(LockCmd));
// render: what CMake knows about the build (cmake-module/CompileIQ.cmake).
cl::opt<std::string> Policy("policy", cl::desc("render: error|warn"), cl::init("error"), cl::sub(LockCmd));
cl::opt<std::string> NvccPath("nvcc", cl::desc("render: CMAKE_CUDA_COMPILER"), cl::sub(LockCmd));
cl::opt<std::string> NvccVersion("nvcc-version", cl::desc("render: CMAKE_CUDA_COMPILER_VERSION (empty: CUDA is "
                                                          "not enabled)"), cl::sub(LockCmd));
cl::opt<std::string> PtxasVersion("ptxas-version", cl::desc("render: the version of the ptxas beside nvcc"),
                                  cl::sub(LockCmd));
cl::opt<std::string> Architectures("architectures", cl::desc("render: the target's CUDA_ARCHITECTURES, ';'-separated "
                                                             "(empty: nvcc's choice)"), cl::sub(LockCmd));
cl::opt<std::string> CudaFlags("cuda-flags", cl::desc("render: the CUDA flags CMake knows (CMAKE_CUDA_FLAGS, "
                                                     "CMAKE_CUDA_FLAGS_<CONFIG>, COMPILE_OPTIONS), ';'-separated"),
                               cl::sub(LockCmd));
cl::opt<std::string> Sources("sources", cl::desc("render: the target's CUDA sources, absolute, ';'-separated (each "
                                                   "unit of the lock must be one of them)"), cl::sub(LockCmd));
cl::opt<std::string> BuildType("build-type", cl::desc("render: CMAKE_BUILD_TYPE"), cl::sub(LockCmd));
cl::opt<bool> MultiConfig("multi-config", cl::desc("render: the generator chooses the configuration at build time"),
                          cl::sub(LockCmd));
cl::list<std::string> Objects("object", cl::desc("verify: an object (.o, .cubin, .fatbin) built with the lock, e.g. "
                                                 "through ciq-ptxas --lock; repeat for each CUDA object of the target"),
                              cl::sub(LockCmd));

// The lock's device-code SHA-256 against that of `objects` (the same
// combination of per-object hashes the tune recorded); 0 when they match.
int compareDeviceCode(const ciq::Lockfile &l, const std::vector<std::string> &objects, const std::string &what,
                      const std::string &hint, const std::string &overridden = "",
                      const std::vector<std::string> &sources = {}) {
  std::vector<std::string> hashes;
  std::string err;
  std::set<std::string> seen;
  for (const auto &o : objects)
    if (!seen.insert(o).second)
      return ciq::reportError(o + ": given twice; give each CUDA object of " + l.target + " once");
  // A lock tuned with narrow_architectures covers one architecture's SASS.
  int onlySm = 0;
  std::string narrowed = ciq::stringAt(l.extra, "device_code_architecture");
  if (narrowed.rfind("sm_", 0) == 0)
    onlySm = std::atoi(narrowed.c_str() + 3);
  // Each file as one output (what a tune's receipt hashed: an object, or the
  // executable of a one-call `nvcc x.cu -o app` build), and a module linked
  // from several CUDA objects (a PyTorch extension) container by container,
  // as each of its objects was hashed: either identity is the lock's.
  std::vector<std::string> whole, builtSections;
  for (const auto &o : objects) {
    auto dc = ciq::readDeviceCode(o, err, onlySm);
    if (!dc)
      return ciq::reportError(err + hint);
    if (!dc->isCuda)
      return ciq::reportError(o + ": not a CUDA object (no .nv_fatbin section, cubin or fatbin in it); give the "
                                  "objects nvcc -c or ptxas wrote");
    whole.push_back(dc->sha256);
    builtSections.insert(builtSections.end(), dc->sections.begin(), dc->sections.end());
    if (auto units = ciq::sharedObjectUnitHashes(o, err, onlySm))
      hashes.insert(hashes.end(), units->begin(), units->end());
    else if (!err.empty())
      return ciq::reportError(err);
    else
      hashes.push_back(dc->sha256);
  }
  std::string got = ciq::combineDeviceCodeHashes(hashes);
  if (got != l.deviceCodeSha256 && ciq::combineDeviceCodeHashes(whole) == l.deviceCodeSha256)
    got = l.deviceCodeSha256, hashes = whole;
  if (got != l.deviceCodeSha256 && got == ciq::stringAt(l.score, "baseline_device_code_sha256"))
    return ciq::reportError("device code of " + what + " is the default compile's (" + got.substr(0, 16) +
                            "...): the lock was not applied; " +
                            (overridden.empty() ? "add ciq_apply_lock(" + l.target +
                                                      ") or build through ciq-ptxas --lock, then rebuild"
                                                : overridden));
  if (got != l.deviceCodeSha256 && !overridden.empty()) // left out on purpose: say so, not "was it applied?"
    return ciq::reportError("device code of " + what + " is not the lock's winner's (" + got.substr(0, 16) +
                            "...): " + overridden);
  // Per translation unit, when the lock records them: say which differs.
  std::vector<std::pair<std::string, std::string>> built;
  for (size_t i = 0; i < sources.size() && i < hashes.size(); ++i)
    built.push_back({sources[i], hashes[i]});
  SmallString<256> lockAbs(LockPath.getValue());
  sys::fs::make_absolute(lockAbs);
  std::string units = ciq::unitDifferences(l, sys::path::parent_path(lockAbs).str(), built);
  // The sections that differ, where the lock keeps the rehearsed build's.
  std::string sections = ciq::deviceCodeSectionDifferences(ciq::lockedSectionLines(l), builtSections);
  // The same code under other file-local names (a form of nvcc's unit ids the
  // identity does not normalise): the lock was applied; say that, not "rebuild".
  if (got != l.deviceCodeSha256 && l.extra.contains("device_code_sections"))
    if (auto names = ciq::onlyFileLocalNamesDiffer(ciq::lockedSectionLines(l), builtSections))
      return ciq::reportError("device code of " + what + " is the lock's winner's section for section, but nvcc "
                              "named its file-local entities differently (" + *names + "): a form of nvcc's "
                              "per-unit names that ciq does not normalise (docs/lockfile.md, \"What the "
                              "device-code identity ignores\"); the lock was applied: report both names");
  if (got != l.deviceCodeSha256 && !units.empty())
    return ciq::reportError("device code of " + what + " is not the lock's winner's: " + units +
                            (sections.empty() ? "" : " (sections: " + sections + ")") +
                            "; those were built from another source, compiler or flags than the tuned ones (or "
                            "without the lock): rebuild them with the lock applied, or tune again");
  if (got != l.deviceCodeSha256 && !sections.empty() && l.extra.contains("device_code_sections"))
    return ciq::reportError("device code of " + what + " is not the lock's winner's: " + sections +
                            "; built from another source, compiler or flags than the tuned ones (or without the "
                            "lock): rebuild with the lock applied, or tune again");
  if (got != l.deviceCodeSha256)
    return ciq::reportError("device code of " + what + " is " + got + ", the lock's winner is " + l.deviceCodeSha256 +
                            "; was the lock applied (ciq_apply_lock, or ciq-ptxas --lock), the build up to date, and "
                            "every CUDA object of " + l.target + " given (the hash covers all of them)?");
  printf("device code matches %s: %s (%zu CUDA object%s)\n", LockPath.c_str(), got.c_str(), hashes.size(),
         hashes.size() == 1 ? "" : "s");
  return 0;
}

// Why a build tree that has ciq_apply_lock() built without the lock on
// purpose, with how to undo it; "" when nothing overrides it. CIQ_APPLY_LOCKS
// is the module's switch (docs/cmake.md, "Variables"), false by CMake's rules;
// CIQ_LOCK_LEFT_OUT_<target> says POLICY warn built the target without it.
std::string lockOverride(const std::string &buildDir, const std::string &target) {
  auto cache = ciq::readCMakeCache(buildDir);
  auto left = cache.find("CIQ_LOCK_LEFT_OUT_" + target);
  if (left != cache.end() && left->second.value == "build configuration")
    return "the configure of " + buildDir + " left it out: the lock was tuned in another build configuration "
           "(build type, -G or -lineinfo), so " + target + " was built with the compiler defaults; cmake " +
           ciq::shellQuote(buildDir) + " prints which";
  if (left != cache.end())
    return "the configure of " + buildDir + " left it out: it does not apply to this build and POLICY is warn "
           "(or CIQ_LOCK_POLICY=warn), so " + target + " was built with the compiler defaults; cmake " +
           ciq::shellQuote(buildDir) + " prints what differs: fix that or tune again, then rebuild";
  auto it = cache.find("CIQ_APPLY_LOCKS");
  if (it == cache.end())
    return "";
  std::string v = StringRef(it->second.value).upper();
  bool off = v.empty() || v == "0" || v == "OFF" || v == "NO" || v == "FALSE" || v == "N" || v == "IGNORE" ||
             v == "NOTFOUND" || StringRef(v).endswith("-NOTFOUND");
  if (!off)
    return "";
  return "it is overridden: CIQ_APPLY_LOCKS is " + it->second.value + " in " + buildDir +
         "/CMakeCache.txt, so ciq_apply_lock() applies nothing; undo it with cmake " + ciq::shellQuote(buildDir) +
         " -DCIQ_APPLY_LOCKS=ON, then rebuild";
}

// The lock's figures, each with where it was measured (issue 32 item 5): the
// tune's own figures (its attribution's interleaved runs for a runtime
// objective, the compile statistics for a compile one) on one line, `ciq
// validate`'s on another; validate overwrites score.speedup and p_value, so
// the tune's ratio is the ratio of its own medians.
std::optional<double> number(const nlohmann::json &o, const char *k) { return ciq::numberAt(o, k); }

std::string text(std::optional<double> v) { return v ? ciq::fmt::value(*v) : "?"; }

// "5.599 -> 5.18 ms (1.081x, p < 0.0001)"; the ratio only for a time, where
// a speedup is what the figure means.
std::string figures(std::optional<double> base, std::optional<double> win, const std::string &unit, bool time,
                    std::optional<double> p) {
  std::string line = text(base) + " -> " + text(win) + (unit.empty() ? "" : " " + unit);
  std::string extra;
  if (time && base && win && *win != 0)
    extra = ciq::fmt::ratio(*base / *win);
  if (p)
    extra += (extra.empty() ? "" : ", ") + ciq::fmt::pValue(*p);
  return line + (extra.empty() ? "" : " (" + extra + ")");
}

void printScore(const nlohmann::json &s) {
  if (!s.is_object() || s.empty()) {
    printf("score:         (none recorded)\n");
    return;
  }
  // The score is free-form JSON in a file anyone may edit: every member read typed.
  std::string unit = ciq::stringAt(s, "unit"), objective = ciq::stringAt(s, "objective", "score");
  bool time = objective == "time_ms";
  printf("score:         %s (%s)\n", objective.c_str(), ciq::stringAt(s, "direction", "minimize").c_str());
  // The tune's verdict row: its attribution's last row (the winner as locked).
  const nlohmann::json *row = nullptr;
  if (s.contains("attribution") && s["attribution"].is_array() && !s["attribution"].empty() &&
      s["attribution"].back().is_object())
    row = &s["attribution"].back();
  std::optional<double> runs = row ? number(*row, "runs") : std::nullopt;
  std::string source = !time ? "compile statistics, exact"
                       : runs ? "the tune's attribution, " + ciq::fmt::value(*runs) + " interleaved runs each"
                              : "the tune's search";
  printf("  tune:        %s  [%s]\n",
         figures(number(s, "baseline"), number(s, "winner"), unit, time, row ? number(*row, "p_value") : std::nullopt)
             .c_str(),
         source.c_str());
  if (s.contains("validation") && s["validation"].is_object()) {
    const nlohmann::json &v = s["validation"];
    std::string when = ciq::stringAt(v, "validated_at");
    printf("  validate:    %s  [ciq validate, %s interleaved runs each%s]\n",
           figures(number(v, "baseline_median"), number(v, "winner_median"), ciq::stringAt(v, "unit", unit), time,
                   number(v, "p_value"))
               .c_str(),
           text(number(v, "runs")).c_str(), when.empty() ? "" : (", " + when).c_str());
  }
}

int show(const ciq::Lockfile &l) {
  printf("target:        %s\n", l.target.c_str());
  printf("winner:        %s (candidate hash %s)\n", l.candidateId.c_str(), l.candidateHash.substr(0, 16).c_str());
  std::string opts;
  for (const auto &o : l.ptxasOptions) opts += " -Xptxas " + o;
  for (const auto &o : l.nvccOptions) opts += " " + o;
  for (const auto &d : l.defines) opts += " -D" + d;
  for (const auto &a : l.acfs) opts += " --apply-controls(" + a.stage + ") " + a.file;
  printf("options:      %s\n", opts.empty() ? " (none)" : opts.c_str());
  // Per-kernel controls: PTX directives of one entry each, written by
  // ciq-ptxas --lock into every compile that has that kernel; the
  // translation unit is where the tune found it, which a build checks.
  for (const auto &k : l.kernelDirectives) {
    std::string units = ciq::kernelUnitsPhrase(l, k.kernel);
    printf("kernel:        %s: %s  [%s]  in %s\n", (k.label.empty() ? k.kernel : k.label).c_str(),
           ciq::directivePtx(k).c_str(), k.kernel.c_str(),
           units.empty() ? "every compile whose PTX has it (no translation unit recorded: a lock written by an older ciq)"
                         : units.c_str());
  }
  // Per-translation-unit controls: added by ciq-ptxas --lock to its compiles only.
  for (const auto &u : l.unitOptions) {
    std::string o;
    for (const auto &a : u.ptxas) o += " -Xptxas " + a;
    for (const auto &a : u.nvcc) o += " " + a;
    printf("unit:          %s:%s\n", u.unit.c_str(), o.c_str());
  }
  printf("nvcc:          %s (%s)\nptxas:         %s (%s)\n", l.nvccVersion.c_str(), l.nvccPath.c_str(),
         l.ptxasVersion.c_str(), l.ptxasPath.c_str());
  std::string archs;
  for (const auto &a : l.architectures) archs += (archs.empty() ? "" : " ") + a;
  printf("architectures: %s\n", archs.c_str());
  if (std::string t = ciq::stringAt(l.extra, "tuned_architecture"); !t.empty()) {
    std::string narrowed = ciq::stringAt(l.extra, "device_code_architecture");
    printf("tuned on:      %s%s\n", t.c_str(),
           narrowed.empty() ? "" : (" (narrow_architectures: the device code below is " + narrowed + "'s SASS)").c_str());
  }
  if (auto m = ciq::lockBuildMode(l))
    printf("tuned in:      %s\n", ciq::describeBuildMode(*m).c_str());
  printf("device code:   %s\n", l.deviceCodeSha256.c_str());
  printScore(l.score);
  printf("created:       %s by ciq %s\n", l.createdAt.c_str(), l.engineVersion.c_str());
  return 0;
}

// show --build-dir: the options each CUDA compile of the target gets, as the
// build tool runs it; through ciq-ptxas --lock they are in no compile line
// and not in compile_commands.json.
int showObjects(const ciq::Lockfile &l) {
  ciq::TuneConfig cfg;
  SmallString<256> dir(BuildDir);
  sys::fs::make_absolute(dir);
  cfg.buildDir = dir.str().str();
  cfg.target = Target.empty() ? l.target : Target;
  if (Target.empty() && l.extra.contains("tune_targets"))
    cfg.tuneTargets = ciq::stringsAt(l.extra, "tune_targets");
  SmallString<256> lock(LockPath.getValue());
  sys::fs::make_absolute(lock);
  std::string err;
  auto objects = ciq::lockAppliedObjects(l, lock.str().str(), cfg, err);
  std::string lockDir = sys::path::parent_path(lock.str()).str();
  if (!objects)
    return ciq::reportError("lock show --build-dir " + BuildDir + ": " + err);
  printf("compiles of %s in %s (%zu):\n", cfg.target.c_str(), cfg.buildDir.c_str(), objects->size());
  for (const auto &o : *objects) {
    std::string opts;
    for (const auto &a : o.options)
      opts += (opts.empty() ? "" : " ") + a;
    // Per-kernel controls go into every compile whose PTX has the kernel:
    // the lock names the translation unit it was tuned in (kernel_units);
    // without that record (an older lock) each is listed for every compile.
    for (const auto &k : l.kernelDirectives) {
      auto units = l.kernelUnits.find(k.kernel);
      bool here = units != l.kernelUnits.end() && units->second.count(ciq::lockRelative(o.source, lockDir));
      if (units == l.kernelUnits.end() || here)
        opts += (opts.empty() ? "" : " ") + std::string("[kernel ") + (k.label.empty() ? k.kernel : k.label) + ": " +
                ciq::directivePtx(k) + (here ? "]" : " where it is compiled]");
    }
    ciq::UnitOptions u = ciq::optionsForSource(l.unitOptions, o.source);
    for (const auto &a : u.ptxas)
      opts += (opts.empty() ? "" : " ") + std::string("[-Xptxas ") + a + " for this unit]";
    for (const auto &a : u.nvcc)
      opts += (opts.empty() ? "" : " ") + std::string("[") + a + " for this unit]";
    // A lock whose options all belong to other units or kernels is no
    // baseline win: this compile alone keeps the defaults.
    bool othersOnly = !l.unitOptions.empty() || !l.kernelDirectives.empty();
    const char *none = othersOnly ? "the compiler defaults: the lock's controls are for other units or kernels"
                                  : "the compiler defaults: the baseline won";
    if (!o.note.empty())
      printf("  %s: none (%s)\n", o.source.c_str(), o.note.c_str());
    else
      printf("  %s: %s (%s)\n", o.source.c_str(), opts.empty() ? none : opts.c_str(),
             o.route == "compile options" ? "in its compile options and compile_commands.json"
                                          : (o.route + ", added per compile: not in compile_commands.json").c_str());
  }
  return 0;
}

// A lock whose device-code identity is not its one winner's over the whole
// build (several sections, or one from a tune that compiled others too):
// checked section by section, each against its architecture's SASS.
bool bySection(const ciq::LockSet &set) {
  if (set.oneWinner())
    return false;
  const auto &s = set.sections.front();
  return set.sections.size() > 1 || (!ciq::identityIsOwnArchitecture(s) && !ciq::lockedSectionLines(s).empty());
}

int verify(const ciq::Lockfile &l, const ciq::LockSet &set) {
  auto compare = [&](const std::vector<std::string> &objects, const std::string &what, const std::string &hint,
                     const std::string &overridden, const std::vector<std::string> &sources) {
    if (!bySection(set))
      return compareDeviceCode(l, objects, what, hint, overridden, sources);
    if (!overridden.empty())
      return ciq::reportError("the lock was not applied to " + what + ": " + overridden);
    return ciq::verifySections(set, LockPath, objects, what);
  };
  int bad = 0;
  std::string lockDir = sys::path::parent_path(LockPath).str();
  if (lockDir.empty())
    lockDir = ".";
  for (const auto &a : l.acfs) {
    std::string p = lockDir + "/" + a.file;
    auto h = ciq::sha256File(p);
    if (!h || *h != a.sha256) {
      ciq::reportError(LockPath + ": ACF " + p + (h ? " has SHA-256 " + *h + ", the lock says " + a.sha256 : " is missing") +
                       "; restore it from version control or tune again");
      ++bad;
    }
  }
  if (!Objects.empty())
    return bad + compare(Objects,
                         Objects.size() == 1 ? Objects[0] : "the " + std::to_string(Objects.size()) + " objects given",
                         "", "", {});
  if (!sys::fs::is_directory(BuildDir))
    return ciq::reportError("--build-dir " + BuildDir + ": no such directory; give the build tree that applied the lock");
  // A lock of a build: command (a Makefile) has no CMake tree to read: its
  // outputs are what to verify (issue 48 item 5e).
  if (!sys::fs::exists(BuildDir + "/CMakeCache.txt"))
    return ciq::reportError("--build-dir " + BuildDir + ": not a CMake build tree (no CMakeCache.txt); for a lock "
                            "tuned with a build: command (a Makefile), build with the lock applied (eval \"$(ciq lock "
                            "env " + LockPath.getValue() + ")\") and give what it built: ciq lock verify " +
                            LockPath.getValue() + " --object FILE...");
  ciq::TuneConfig cfg;
  SmallString<256> dir(BuildDir);
  sys::fs::make_absolute(dir);
  cfg.buildDir = dir.str().str();
  // The lock's device code covers its target and its tune targets: --target
  // naming any of them verifies them all; another name is the target that
  // applies the lock (a renamed one), with the lock's tune targets.
  std::vector<std::string> lockTargets = {l.target};
  if (l.extra.contains("tune_targets"))
    for (const auto &t : ciq::stringsAt(l.extra, "tune_targets"))
      if (std::find(lockTargets.begin(), lockTargets.end(), t) == lockTargets.end())
        lockTargets.push_back(t);
  bool named = !Target.empty() && std::find(lockTargets.begin(), lockTargets.end(), Target) == lockTargets.end();
  cfg.target = named ? Target.getValue() : l.target;
  cfg.path = named ? std::string("--target") : LockPath.getValue(); // named by errors about the target
  for (const auto &t : lockTargets)
    if (t != cfg.target)
      cfg.tuneTargets.push_back(t);
  std::string verErr;
  std::string nvcc = ciq::cudaCompilerOf(cfg.buildDir);
  std::string ver = ciq::compilerVersion(nvcc, verErr).value_or("");
  if (ver.empty())
    ciq::reportWarning("cannot read the version of the build tree's CUDA compiler " + nvcc + " (" + verErr +
                       "); the device code below is compared all the same");
  else if (!l.nvccVersion.empty() && ver != l.nvccVersion) {
    ciq::reportError("the build tree's nvcc is " + ver + ", the lock was frozen with " + l.nvccVersion +
                     "; tune again with this compiler");
    ++bad;
  }
  ciq::CMakeBuild driver(cfg);
  std::string err;
  if (!driver.discover(err))
    return ciq::reportError(err);
  std::vector<std::string> objects, sources;
  bool targetSeen = false;
  for (const auto &o : driver.objects()) {
    objects.push_back(o.object);
    sources.push_back(o.source);
    targetSeen = targetSeen || o.target == cfg.target;
  }
  // A typo in a CI line must not verify the lock's other targets and pass.
  if (named && !targetSeen)
    return ciq::reportError("--target " + Target + ": no CUDA compile of that target in " + cfg.buildDir +
                            "/compile_commands.json; give the target that applies the lock (the lock's: " +
                            llvm::join(lockTargets, ", ") + ")");
  return bad + compare(objects, cfg.target + " in " + cfg.buildDir,
                       " (build the target first: cmake --build " + ciq::shellQuote(cfg.buildDir) + ")",
                       lockOverride(cfg.buildDir, cfg.target), sources);
}

// One "<stage> <path>" line per ACF of the winner: the path nvcc passes on
// whole (a copy named by its SHA-256 when the lock's folder holds spaces or
// commas). ciq_apply_lock() renders --apply-controls from it.
int acfs(const ciq::Lockfile &l) {
  for (const auto &a : ciq::lockToCandidate(l, LockPath).acfs) {
    std::string err;
    auto p = ciq::plainAcfPath(a.path, err);
    if (!p)
      return ciq::reportError(LockPath + ": " + err);
    printf("%s %s\n", a.stage.c_str(), p->c_str());
  }
  return 0;
}

// The shell lines that make run-time compiles (Triton's ptxas, a program
// that runs ptxas by name) go through ciq-ptxas with this lock: the ptxas
// stand-in in lock mode is `ciq-ptxas --lock`, for tools that take a path.
int env(const ciq::Lockfile &l) {
  std::string err;
  auto cache = ciq::cacheDir(err);
  if (!cache)
    return ciq::reportError(err);
  std::string standin = *cache + "/standin";
  if (!ciq::makeStandinDir(standin, err))
    return ciq::reportError(err);
  SmallString<256> lock(LockPath.getValue());
  sys::fs::make_absolute(lock);
  printf("# %s (%s) for compiles made at run time and PyTorch extension builds; apply with: eval \"$(ciq lock env %s)\"\n",
         LockPath.c_str(), l.candidateId.c_str(), ciq::shellQuote(LockPath).c_str());
  printf("export %s=%s\n", ciq::env::Lock, ciq::shellQuote(lock.str().str()).c_str());
  if (!l.ptxasPath.empty())
    printf("export %s=%s\n", ciq::env::RealPtxas, ciq::shellQuote(l.ptxasPath).c_str());
  // A build or program that runs ptxas or nvcc by name, as in a tune.
  printf("export PATH=%s:\"$PATH\"\n", ciq::shellQuote(standin).c_str());
  printf("export TRITON_PTXAS_PATH=%s\n", ciq::shellQuote(standin + "/ptxas").c_str());
  printf("export TRITON_PTXAS_BLACKWELL_PATH=%s\n", ciq::shellQuote(standin + "/ptxas").c_str());
  // PyTorch extensions (pip install ., setup.py build_ext, load()): PyTorch
  // runs nvcc by a path; the nvcc stand-in in lock mode applies the lock.
  std::string nvcc = !l.nvccPath.empty() ? l.nvccPath
                     : l.ptxasPath.empty() ? "" : (sys::path::parent_path(l.ptxasPath) + "/nvcc").str();
  if (!nvcc.empty())
    printf("export %s=%s\n", ciq::env::RealNvcc, ciq::shellQuote(nvcc).c_str());
  std::string note;
  for (const auto &kv : ciq::torchEnv(*cache, standin, nvcc, note))
    printf("export %s=%s\n", kv.first.c_str(), ciq::shellQuote(kv.second).c_str());
  if (!note.empty())
    printf("# %s\n", note.c_str());
  return 0;
}

// ciq_apply_lock()'s questions answered, one "<kind> <value>" line each:
// problem (every way the lock does not apply), candidate, lock-architectures
// (';'-separated), through-wrapper, option, define, depends, tune-target.
// The module only turns these lines into target properties.
int render() {
  ciq::LockBuild b;
  b.target = Target;
  b.buildDir = BuildDir;
  b.policy = Policy;
  b.nvccPath = NvccPath;
  b.nvccVersion = NvccVersion;
  b.ptxasVersion = PtxasVersion;
  auto split = [](StringRef rest, std::vector<std::string> &out) {
    while (!rest.empty()) {
      auto [a, tail] = rest.split(';');
      if (!a.empty())
        out.push_back(a.str());
      rest = tail;
    }
  };
  split(Architectures, b.architectures);
  split(CudaFlags, b.cudaFlags);
  split(Sources, b.sources);
  b.buildType = BuildType;
  b.multiConfig = MultiConfig;
  SmallString<256> lock(LockPath.getValue());
  sys::fs::make_absolute(lock);
  ciq::LockRender r = ciq::renderLockForBuild(lock.str().str(), b);
  auto line = [](const char *kind, const std::string &v) { printf("%s %s\n", kind, v.c_str()); };
  for (const auto &p : r.problems) line("problem", p);
  if (!r.candidate.empty()) line("candidate", r.candidate);
  std::string archs;
  for (const auto &a : r.lockArchitectures) archs += (archs.empty() ? "" : ";") + a;
  if (!archs.empty()) line("lock-architectures", archs);
  if (!r.skip.empty()) line("skip", r.skip);
  if (!r.warning.empty()) line("warning", r.warning);
  for (const auto &w : r.warnings) line("warning", w);
  for (const auto &n : r.notes) line("note", n);
  if (r.throughWrapper) printf("through-wrapper\n");
  if (!r.wrapperReason.empty()) line("wrapper-reason", r.wrapperReason);
  for (const auto &o : r.options) line("option", o);
  for (const auto &d : r.defines) line("define", d);
  for (const auto &d : r.depends) line("depends", d);
  for (const auto &t : r.tuneTargets) line("tune-target", t);
  return 0;
}

// Words after the first --object (the lock path among them, when it came
// last) join the objects: `--object FILE...` as written. "" or the error line.
std::string gatherObjects() {
  bool verifying = Action == "verify" && !Objects.empty();
  unsigned first = verifying ? Objects.getPosition(0) : 0;
  for (unsigned i = 0; i < MoreWords.size(); ++i)
    if (!verifying || MoreWords.getPosition(i) < first)
      return "lock " + Action + ": unexpected argument '" + MoreWords[i] + "'; give one lockfile" +
             (Action == "verify" ? " (objects follow --object)" : "");
  if (!verifying)
    return "";
  if (LockPath.getNumOccurrences() && LockPath.getPosition() > first) {
    Objects.push_back(LockPath.getValue());
    LockPath.setValue("ciq.lock");
  }
  for (const auto &w : MoreWords)
    Objects.push_back(w);
  return "";
}

// What verify was asked to compare, or the one error line about it.
std::string verifyUsageProblem() {
  if (!Objects.empty() && (!BuildDir.empty() || !Target.empty()))
    return "lock verify: give either --object FILE... or --build-dir DIR [--target T], not both";
  if (Objects.empty() && BuildDir.empty())
    return "lock verify: nothing to compare; give --build-dir DIR (a CMake build that applied the lock) or "
           "--object FILE for each object built with it";
  return "";
}

// A lock without lock_sha256 (an older ciq's, or edited on purpose) gets
// one, once it reads as every reader reads it.
int seal() {
  std::string err;
  bool already = false;
  if (!ciq::sealLockfile(LockPath, already, err))
    return ciq::reportError(err);
  printf("%s: %s\n", LockPath.c_str(), already ? "carries lock_sha256 already, left as it was"
                                                : "sealed (lock_sha256 added; nothing else changed)");
  return 0;
}

int run() {
  if (Action != "show" && Action != "verify" && Action != "acfs" && Action != "env" && Action != "render" &&
      Action != "seal")
    return ciq::reportError("lock: unknown action '" + Action + "'; expected show, verify, acfs, env, render or seal");
  if (std::string p = gatherObjects(); !p.empty())
    return ciq::reportError(p);
  if (Action == "seal")
    return seal();
  if (Action == "render") {
    if (Target.empty() || BuildDir.empty())
      return ciq::reportError("lock render: give --target (the CMake target applying the lock) and --build-dir");
    return render();
  }
  if (Action == "verify")
    if (std::string p = verifyUsageProblem(); !p.empty())
      return ciq::reportError(p);
  std::string err;
  auto set = ciq::readLockSet(LockPath, err);
  if (!set)
    return ciq::reportError(err);
  if (!set->sealed)
    ciq::reportWarning(ciq::unsealedLockWarning(LockPath));
  // The commands of one winner read the first section; a lock of several
  // says so, and verify checks every one (bySection).
  const ciq::Lockfile &l = set->sections.front();
  if (Action == "show") {
    bool many = set->sections.size() > 1;
    if (many)
      ciq::printSectionSummary(*set);
    int rc = 0;
    for (const auto &s : set->sections) {
      if (many)
        printf("\nsection %s:\n", s.section.c_str());
      rc += show(s);
    }
    if (!many)
      ciq::printSectionSummary(*set);
    return BuildDir.empty() ? rc : rc + showObjects(l);
  }
  if (Action == "acfs") {
    int rc = 0;
    for (const auto &s : set->sections)
      rc += acfs(s);
    return rc;
  }
  if (Action == "env")
    return env(l);
  return verify(l, *set) ? 1 : 0;
}

ciq::RegisterCommand reg(LockCmd, run);

} // namespace
