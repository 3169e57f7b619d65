#include "engine/winner/LockApply.h"
#include "common/UnitOptions.h"

#include "common/AcfStaging.h"
#include "common/BuildMode.h"
#include "common/JsonRead.h"
#include "common/LockSections.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"
#include "common/CommandLine.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace ciq {
namespace {

std::string join(const std::vector<std::string> &v, const char *sep) {
  std::string out;
  for (const auto &s : v)
    out += (out.empty() ? "" : sep) + s;
  return out;
}

// "90" of "sm_90", "compute_90", "lto_90", "90-real" or "90-virtual": the
// architectures the lock and the target name, as one sorted set.
std::vector<std::string> archNumbers(const std::vector<std::string> &archs) {
  static const std::regex prefix("^(sm|compute|lto)_"), suffix("-(real|virtual)$");
  std::set<std::string> nums;
  for (const auto &a : archs)
    nums.insert(std::regex_replace(std::regex_replace(a, prefix, ""), suffix, ""));
  return {nums.begin(), nums.end()};
}

// The lock's JSON and schema, as far as CMake needs to tell "not a lock"
// from "a lock of another version"; false with the problem added.
bool checkShape(const std::string &lockPath, const std::string &retune, const std::string &policy,
                std::vector<std::string> &problems) {
  std::ifstream in(lockPath);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j;
  std::string err;
  if (!in || !parseJson(ss.str(), "", j, err) || !j.is_object() || !j.contains("schema_version")) {
    if (err.empty())
      err = !in ? "cannot be read" : !j.is_object() ? "not a JSON object" : "no schema_version";
    else if (err.rfind(": ", 0) == 0)
      err = err.substr(2);
    std::string orwarn = policy == "error" ? " (or configure with -DCIQ_LOCK_POLICY=warn)" : "";
    problems.push_back("it is not a ciq lockfile (" + err + "); restore it from version control, or delete it" +
                       orwarn + " and " + retune);
    return false;
  }
  const auto &s = j["schema_version"];
  std::string schema = s.is_string() ? s.get<std::string>() : s.dump();
  if (schema != std::to_string(kLockSchemaVersion) && schema != std::to_string(kLockSchemaOneWinner)) {
    problems.push_back("schema_version " + schema + " is not supported (this CompileIQ reads " +
                       std::to_string(kLockSchemaOneWinner) + " and " + std::to_string(kLockSchemaVersion) +
                       "); use the ciq that wrote it or " + retune);
    return false;
  }
  return true;
}

void checkTarget(const Lockfile &l, const LockBuild &b, LockRender &r) {
  r.tuneTargets = stringsAt(l.extra, "tune_targets");
  bool covered =
      l.target == b.target || std::find(r.tuneTargets.begin(), r.tuneTargets.end(), b.target) != r.tuneTargets.end();
  if (!l.target.empty() && !covered)
    r.problems.push_back("it was frozen for target '" + l.target + "', not '" + b.target + "'; give " + b.target +
                         " its own lockfile (ciq_apply_lock(" + b.target + " LOCKFILE <file>), default " + b.target +
                         ".ciq.lock) and tune it");
}

void checkCompilers(const Lockfile &l, const LockBuild &b, const std::string &retune, LockRender &r) {
  if (b.nvccVersion.empty())
    r.problems.push_back("the CUDA language is not enabled where " + b.target +
                         " is defined; add CUDA to project(LANGUAGES) or call enable_language(CUDA)");
  else if (!l.nvccVersion.empty() && l.nvccVersion != b.nvccVersion)
    r.problems.push_back("nvcc version: the lock was frozen with " + l.nvccVersion + ", this build uses " +
                         b.nvccVersion + " (" + b.nvccPath + "); " + retune +
                         ", or configure with -DCMAKE_CUDA_COMPILER=<the nvcc " + l.nvccVersion + ">");
  if (!l.ptxasVersion.empty() && !b.nvccVersion.empty() && l.ptxasVersion != b.ptxasVersion)
    r.problems.push_back("ptxas version: the lock was frozen with " + l.ptxasVersion + ", this build's ptxas is " +
                         b.ptxasVersion + "; " + retune);
}

// "90" of "sm_90a": the GPU family, as the wrapper compares them (LockMode.cpp).
std::string archFamily(std::string a) {
  a = archNumbers({a}).front();
  if (!a.empty() && (a.back() == 'a' || a.back() == 'f'))
    a.pop_back();
  return a;
}

// The nvcc line the target's compiles start from, as CMake writes it: its
// CUDA_ARCHITECTURES as --generate-code, then the flags CMake knows. The
// wrapper's parser says which SASS that line produces and whether it has -G.
wrapper::NvccCommand configuredLine(const LockBuild &b) {
  static const std::regex real("-real$"), virt("-virtual$");
  std::vector<std::string> args;
  for (const auto &a : b.architectures) {
    std::string n = archNumbers({a}).front();
    std::string code = std::regex_search(a, real)   ? "[sm_" + n + "]"
                       : std::regex_search(a, virt) ? "[compute_" + n + "]"
                                                    : "[compute_" + n + ",sm_" + n + "]";
    args.push_back("--generate-code=arch=compute_" + n + ",code=" + code);
  }
  for (const auto &f : b.cudaFlags)
    if (f.find("$<") == std::string::npos)
      args.push_back(f);
  args.insert(args.end(), {"-c", "ciq-configure-check.cu"});
  return wrapper::parseNvcc(args, "", "", "/");
}

// The flags' own architecture options (-arch, -gencode, -code), as spelled:
// those after the one --generate-code per CUDA_ARCHITECTURES entry.
std::vector<std::string> flagArchitectureOptions(const wrapper::NvccCommand &line, size_t generated) {
  std::vector<std::string> out;
  for (size_t i = generated; i < line.args.size(); ++i) {
    const auto &a = line.args[i];
    if (a.opt.name == "gpu-architecture" || a.opt.name == "generate-code" || a.opt.name == "gpu-code")
      out.push_back(join(a.tokens, " "));
  }
  return out;
}

// A flag CMake evaluates at build time that may set the architectures or -G:
// only the compile line knows, so the lock goes through ciq-ptxas --lock.
bool genexSetsMode(const LockBuild &b) {
  static const std::regex modal("arch|gencode|generate-code|-code|-G|lineinfo|device-debug");
  for (const auto &f : b.cudaFlags)
    if (f.find("$<") != std::string::npos && std::regex_search(f, modal))
      return true;
  return false;
}

void checkArchitectures(const Lockfile &l, const LockBuild &b, const wrapper::NvccCommand &line,
                        const std::string &retune, LockRender &r) {
  r.lockArchitectures = l.architectures;
  std::vector<std::string> target = archNumbers(b.architectures);
  if (target.empty() || genexSetsMode(b)) {
    // -arch=... in the flags (CMP0104 OLD) or nvcc's choice: only the real
    // compile lines know, so ciq-ptxas --lock checks each compile.
    r.throughWrapper = true;
    if (!target.empty())
      r.wrapperReason = "a generator expression in " + b.target + "'s CUDA flags may set its architectures or -G";
    return;
  }
  if (archNumbers(l.architectures) != target) {
    r.problems.push_back("architectures: the lock was frozen for " + join(l.architectures, " ") + ", " + b.target +
                         " builds for CUDA_ARCHITECTURES " + join(b.architectures, " ") + "; " + retune +
                         ", or set CUDA_ARCHITECTURES to match the lock");
    return;
  }
  // -arch or -gencode in the CUDA flags adds its own targets to the
  // --generate-code CMake writes for CUDA_ARCHITECTURES: nvcc compiles both.
  std::vector<std::string> spelled = flagArchitectureOptions(line, b.architectures.size());
  if (spelled.empty())
    return;
  std::set<std::string> locked;
  for (const auto &a : l.architectures)
    locked.insert(archFamily(a));
  std::vector<std::string> built = line.sassArchs(), foreign;
  std::sort(built.begin(), built.end());
  for (const auto &a : built)
    if (!locked.count(archFamily(a)))
      foreign.push_back(a);
  if (!foreign.empty())
    r.problems.push_back("architectures: " + b.target + "'s compiles produce SASS for " + join(built, ", ") +
                         " (CUDA_ARCHITECTURES " + join(b.architectures, " ") + " and " + join(spelled, " ") +
                         " in its CUDA flags), the lock was frozen for " + join(l.architectures, " ") +
                         "; remove " + join(spelled, " ") + " from the flags (CUDA_ARCHITECTURES sets them), or " +
                         retune + " for " + join(foreign, ", "));
}

// A lock tuned in another configuration (Release against Debug, without -G
// against with it) is left out, not refused: a colleague's Debug build must
// build (ptxas refuses -G with any optimisation level but 0).
void checkBuildMode(const Lockfile &l, const LockBuild &b, const wrapper::NvccCommand &line,
                    const std::string &lockPath, LockRender &r) {
  auto tuned = lockBuildMode(l);
  if (!tuned)
    return; // a lock written before the configuration was recorded
  if (modePerSource(*tuned)) {
    // -G or -lineinfo on some sources only: each compile is judged by its own.
    if (!r.throughWrapper)
      r.wrapperReason = "the lock was tuned in " + describeBuildMode(*tuned) + ", judged compile by compile";
    r.throughWrapper = true;
    return;
  }
  if (b.multiConfig || genexSetsMode(b)) {
    // Which configuration, and so -G, is known per compile only.
    if (!r.throughWrapper && b.multiConfig)
      r.wrapperReason = "the generator chooses the configuration at build time and the lock was tuned in " +
                        describeBuildMode(*tuned);
    r.throughWrapper = true;
    return;
  }
  BuildMode here{b.buildType, line.deviceDebug, line.lineinfo};
  if (std::string diff = buildModeDifference(*tuned, here); !diff.empty())
    r.skip = lockPath + " does not apply: " + diff + ", so " + b.target +
             " builds with the compiler defaults (a lock applies to the configuration it was tuned in)";
}

// A CMake list cannot carry a ';' (nor a line of `ciq lock render` a newline).
void checkListable(const Lockfile &l, LockRender &r) {
  for (const auto *list : {&l.ptxasOptions, &l.nvccOptions, &l.defines})
    for (const auto &v : *list)
      if (v.find(';') != std::string::npos || v.find('\n') != std::string::npos)
        r.problems.push_back("'" + v +
                             "' holds a ';', which a CMake list cannot carry; tune again without that control");
}

// Every ACF: a known stage, present, with the bytes of the tune.
void checkAcfs(const Lockfile &l, const std::string &lockPath, const std::string &retune, LockRender &r) {
  llvm::StringRef dir = llvm::sys::path::parent_path(lockPath);
  for (const auto &a : l.acfs) {
    llvm::SmallString<256> p(a.file);
    llvm::sys::fs::make_absolute(dir, p);
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
    std::string path = p.str().str();
    if (a.stage != "ptxas" && a.stage != "nvcc") {
      r.problems.push_back("ACF " + a.file + ": stage '" + a.stage +
                           "' is neither ptxas nor nvcc; restore the lockfile "
                           "from version control or " +
                           retune);
      continue;
    }
    auto sha = sha256File(path);
    if (!llvm::sys::fs::exists(path) || !sha)
      r.problems.push_back("ACF " + path + " (stage " + a.stage +
                           ") is missing; restore it next to the lock (commit "
                           "ciq-acf/ with ciq.lock) or " +
                           retune);
    else if (*sha != a.sha256)
      r.problems.push_back("ACF " + path + ": its SHA-256 is " + *sha + ", the lock expects " + a.sha256 +
                           " (the file changed since the tune); restore it or " + retune);
    else
      r.depends.push_back(path);
  }
}

} // namespace

// A unit of the lock whose source the target no longer has (moved,
// renamed) would build with the defaults, silently: a problem, under the
// lock policy like any other.
static void checkUnits(const Lockfile &l, const LockBuild &b, const std::string &retune, LockRender &r) {
  if (b.sources.empty())
    return;
  for (const auto &u : l.unitOptions) {
    size_t n = std::count_if(b.sources.begin(), b.sources.end(),
                             [&](const std::string &s) { return unitMatches(u.unit, s); });
    if (n == 0)
      r.problems.push_back("unit " + u.unit + ": the lock gives it its own options, but none of " + b.target +
                           "'s CUDA sources is that file (moved or renamed?); restore it, or " + retune);
  }
}

// The checks every winner of the lock must pass here (one, or each section).
static void checkWinner(const Lockfile &l, const LockBuild &b, const wrapper::NvccCommand &line,
                        const std::string &lockPath, const std::string &retune, LockRender &r) {
  checkCompilers(l, b, retune, r);
  checkBuildMode(l, b, line, lockPath, r);
  checkListable(l, r);
  checkAcfs(l, lockPath, retune, r);
  checkUnits(l, b, retune, r);
}

// The compile arguments of one winner, or through-wrapper when no compile
// line can carry them (per-kernel and per-unit controls).
static void renderWinner(const Lockfile &l, const std::string &lockPath, LockRender &r) {
  // Per-kernel controls are PTX edits between nvcc's front end and ptxas: no
  // compile line can carry them, only ciq-ptxas --lock as the launcher.
  if (!l.kernelDirectives.empty()) {
    if (!r.throughWrapper)
      r.wrapperReason = "the lock has per-kernel controls (" + std::to_string(l.kernelDirectives.size()) +
                        " PTX directive(s)), which only ciq-ptxas --lock writes";
    r.throughWrapper = true;
  }
  // Per-translation-unit options reach their unit's compiles only: the
  // wrapper picks them by the source it compiles.
  if (!l.unitOptions.empty()) {
    if (!r.throughWrapper)
      r.wrapperReason = "the lock has per-translation-unit controls (" + std::to_string(l.unitOptions.size()) +
                        " unit(s)), which only ciq-ptxas --lock adds to their unit's compiles";
    r.throughWrapper = true;
  }
  // The one renderer of a lock's compile arguments (common/Lockfile.h): the
  // defines go to the target's compile definitions, the rest are options.
  std::vector<std::string> args = lockCompileArgs(l, lockPath);
  r.options.assign(args.begin(), args.end() - l.defines.size());
  r.defines = l.defines;
}

// A lock of sections: each architecture the target compiles gets its own
// section through ciq-ptxas --lock (one compile line serves them all), or
// the compile line when one winner covers every architecture built. An
// architecture without a section builds with the defaults, said once here.
static void renderSections(const LockSet &set, const LockBuild &b, const wrapper::NvccCommand &line,
                           const std::string &lockPath, LockRender &r) {
  std::vector<std::string> built = line.sassArchs(), described;
  std::sort(built.begin(), built.end());
  bool known = !archNumbers(b.architectures).empty() && !genexSetsMode(b);
  std::set<std::string> builtFamilies, candidates;
  bool everyArch = known;
  for (const auto &a : built) {
    builtFamilies.insert(archFamilyOf(a));
    const Lockfile *s = set.sectionFor(a);
    everyArch = everyArch && s;
    if (s)
      candidates.insert(s->candidateHash);
    else if (known)
      r.notes.push_back(a + " has no section in " + lockPath + ": " + b.target + " builds it with the compiler "
                        "defaults (a tune for " + a + ", e.g. tune_architectures: [" + a + "], adds one)");
  }
  for (const auto &s : set.sections) {
    described.push_back(s.section + ": " + s.candidateId);
    if (known && !builtFamilies.count(archFamilyOf(s.section)))
      r.warnings.push_back("the lock's section " + s.section + " is for an architecture " + b.target +
                           " does not compile (its SASS: " + join(built, ", ") + "); it applies to nothing here");
  }
  r.candidate = join(described, ", ");
  if (everyArch && candidates.size() == 1) { // one winner for everything built: the compile line carries it
    renderWinner(*set.sectionFor(built.front()), lockPath, r);
    return;
  }
  renderWinner(set.sections.front(), lockPath, r); // the -D parameters, the same in every section
  r.options.clear();
  r.throughWrapper = true;
  r.wrapperReason = known ? "the lock has a section per architecture (" + join(described, ", ") +
                                ") and one compile line serves every architecture, so ciq-ptxas --lock applies "
                                "each section to its architecture's ptxas run"
                          : "the lock has a section per architecture (" + join(described, ", ") +
                                ") and " + b.target + "'s architectures are known per compile only, so ciq-ptxas "
                                "--lock applies each section to its architecture's ptxas run";
}

LockRender renderLockForBuild(const std::string &lockPath, const LockBuild &b) {
  LockRender r;
  std::string retune = "tune again (cmake --build " + shellQuote(b.buildDir) + " --target ciq-tune-" + b.target + ")";
  if (!checkShape(lockPath, retune, b.policy, r.problems))
    return r;
  std::string err;
  // The hash check is its own problem; the other checks read the lock as is.
  if (!readLockSet(lockPath, err, /*checkIntegrity=*/true))
    r.problems.push_back(err);
  auto set = readLockSet(lockPath, err, /*checkIntegrity=*/false);
  if (!set) {
    if (r.problems.empty() || r.problems.back() != err)
      r.problems.push_back(err);
    return r;
  }
  const Lockfile &first = set->sections.front();
  r.candidate = first.candidateId;
  r.lockArchitectures = set->oneWinner() ? first.architectures : set->names();
  if (!set->sealed)
    r.warning = unsealedLockWarning(lockPath);
  checkTarget(first, b, r);
  wrapper::NvccCommand line = configuredLine(b);
  if (set->oneWinner())
    checkArchitectures(first, b, line, retune, r); // schema 1: its one winner is for every architecture
  for (const auto &s : set->sections)
    checkWinner(s, b, line, lockPath, retune, r);
  if (!r.problems.empty() || !r.skip.empty())
    return r;
  if (set->oneWinner())
    renderWinner(first, lockPath, r);
  else
    renderSections(*set, b, line, lockPath, r);
  return r;
}

} // namespace ciq
