#include "engine/compile/BuildDriver.h"
#include "engine/compile/BuildTreeGuard.h"
#include "engine/config/CMakeCache.h"
#include "engine/compile/MakeRules.h"
#include "common/EnvNames.h"
#include "common/FileIO.h"
#include "common/ForeignJson.h"
#include "common/Paths.h"
#include "common/ProcessTrack.h"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <unistd.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/StringSaver.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

namespace ciq {
namespace {


// A JSON string member, or "" (compile_commands.json is outside input: a
// number where a string belongs is no CUDA compile, never an abort).
std::string stringOf(const nlohmann::json &e, const char *key) {
  if (!e.is_object() || !e.contains(key) || !e[key].is_string())
    return "";
  return e[key].get<std::string>();
}

// An entry's command, split as a shell would (LLVM's GNU-style tokenizer).
std::vector<std::string> commandOf(const nlohmann::json &e) {
  std::vector<std::string> args;
  if (e.is_object() && e.contains("arguments") && e["arguments"].is_array()) {
    for (const auto &a : e["arguments"])
      if (a.is_string())
        args.push_back(a.get<std::string>());
    return args;
  }
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver(alloc);
  llvm::SmallVector<const char *, 64> toks;
  llvm::cl::TokenizeGNUCommandLine(stringOf(e, "command"), saver, toks);
  for (const char *t : toks)
    args.push_back(t);
  return args;
}

// The object a compile writes: compile_commands.json's "output" (CMake 3.26+),
// else the -o argument of the command.
std::string outputOf(const nlohmann::json &e) {
  if (e.is_object() && e.contains("output"))
    return stringOf(e, "output");
  std::vector<std::string> args = commandOf(e);
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-o" || args[i] == "--output-file")
      return args[i + 1];
  return "";
}


} // namespace

std::string compilerOfCommand(const std::vector<std::string> &args) {
  size_t i = 0;
  while (i < args.size()) {
    std::string base = llvm::sys::path::filename(args[i]).str();
    if (base.rfind("ciq-ptxas", 0) == 0) {
      // ciq-ptxas [--lock FILE] [--lock-policy P] [--] <launcher...|compiler>
      for (++i; i < args.size() && args[i].rfind("--", 0) == 0; ++i) {
        if (args[i] == "--") {
          ++i;
          break;
        }
        if ((args[i] == "--lock" || args[i] == "--lock-policy") && i + 1 < args.size())
          ++i;
      }
      continue;
    }
    bool launcher = base == "ccache" || base == "sccache" || base == "buildcache" || base == "distcc" ||
                    base == "icecc" || base == "env";
    // `env VAR=value ... compiler`, `VAR=value compiler`: CMake launchers may add either
    bool assignment = args[i].find('=') != std::string::npos && args[i][0] != '-' && args[i][0] != '/';
    if (!launcher && !assignment)
      return args[i];
    ++i;
  }
  return "";
}

bool isCudaCompileLine(const std::vector<std::string> &args, const std::string &file, const std::string &cudaCompiler) {
  if (llvm::StringRef(file).endswith(".cu"))
    return true;
  std::string compiler = compilerOfCommand(args);
  if (compiler.empty())
    return false;
  std::string base = llvm::sys::path::filename(compiler).str();
  if (base == "nvcc" || base == "nvcc.exe")
    return true;
  // The build tree's CUDA compiler under another name (a link, a wrapper
  // script the project configured as CMAKE_CUDA_COMPILER).
  if (!cudaCompiler.empty() && (compiler == cudaCompiler || physicalPath(compiler) == physicalPath(cudaCompiler)))
    return true;
  // Another compiler told the source is CUDA (clang -x cuda, nvcc -x cu).
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-x" && (args[i + 1] == "cu" || args[i + 1] == "cuda"))
      return true;
  return false;
}

// Legacy FindCUDA (cuda_add_executable) compiles each .cu with a custom
// command that runs a generated script, CMakeFiles/<target>.dir/...
// /<target>_generated_<name>.cu.o.cmake, holding `set(source_file "...")` and
// `set(generated_file_internal "...")`. compile_commands.json lists none of
// them; the scripts name the source and object (docs/cmake.md, FindCUDA).
std::vector<CudaObject> findCudaScriptCompiles(const std::string &buildDir, const std::string &target) {
  std::vector<CudaObject> out;
  static const std::regex setLine("^set\\((source_file|generated_file_internal) \"([^\"]+)\"\\)");
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(buildDir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    std::string dirMarker = "/CMakeFiles/" + target + ".dir/";
    // <name>.cu.o.cmake, or <name>.cu.o.<config>.cmake with a build type.
    llvm::StringRef file = llvm::sys::path::filename(path);
    if (!file.endswith(".cmake") || !file.contains(".o.") || !path.contains(dirMarker) ||
        !file.startswith(target + "_generated_"))
      continue;
    std::ifstream in(path.str());
    CudaObject o;
    o.target = target;
    o.findCuda = true;
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, setLine))
        (m.str(1) == "source_file" ? o.source : o.object) = m.str(2);
    }
    if (!o.source.empty() && !o.object.empty()) {
      o.object = physicalPath(o.object);
      out.push_back(o);
    }
  }
  return out;
}


bool CMakeBuild::discover(std::string &error) {
  std::string cc = cfg_.buildDir + "/compile_commands.json";
  if (!llvm::sys::fs::exists(cc)) {
    // Configure once more with the export switched on (the module does this already).
    runSubprocess({"cmake", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", cfg_.buildDir});
  }
  std::vector<std::string> targets = {cfg_.target};
  targets.insert(targets.end(), cfg_.tuneTargets.begin(), cfg_.tuneTargets.end());
  objects_.clear();
  // FindCUDA's compiles, found by their scripts: only where the compile
  // database has none (a FindCUDA project may have no database at all).
  auto addScriptCompiles = [&] {
    for (const auto &t : targets)
      for (auto &o : findCudaScriptCompiles(cfg_.buildDir, t))
        objects_.push_back(o);
    return !objects_.empty();
  };
  auto text = llvm::MemoryBuffer::getFile(cc);
  if (!text) {
    if (addScriptCompiles())
      return true;
    error = cc + ": missing; configure the build with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "
                 "(find_package(CompileIQ) does it) and a Ninja or Makefile generator";
    return false;
  }
  // Paths in it are the file system's bytes, UTF-8 or not.
  auto db = parseForeignJson((*text)->getBuffer());
  if (!db.is_array()) {
    error = cc + ": not a JSON array; delete it and configure again";
    return false;
  }
  // Ninja Multi-Config lists every configuration's objects, each under
  // CMakeFiles/<target>.dir/<config>/: keep the configuration being built.
  bool multiConfig = !cfg_.config.empty() && llvm::sys::fs::exists(cfg_.buildDir + "/build-" + cfg_.config + ".ninja");
  // CUDA compiles are told by the compiler that runs, never by text: a
  // project folder named my-nvcc-tests/ holds C++ compiles too.
  // The CUDA compiler by path, unless it compiles C++ too (clang++ for both:
  // then `-x cuda` tells its CUDA compiles).
  auto cache = readCMakeCache(cfg_.buildDir);
  std::string cudaCompiler = cacheValue(cache, "CMAKE_CUDA_COMPILER", "");
  if (cudaCompiler == cacheValue(cache, "CMAKE_CXX_COMPILER", "") || cudaCompiler == cacheValue(cache, "CMAKE_C_COMPILER", ""))
    cudaCompiler.clear();
  for (const auto &e : db) {
    std::string output = outputOf(e);
    if (output.empty() || !isCudaCompileLine(commandOf(e), stringOf(e, "file"), cudaCompiler))
      continue;
    std::string dir = stringOf(e, "directory");
    if (dir.empty())
      dir = cfg_.buildDir;
    std::string out = absolutePath(output, dir);
    for (const auto &t : targets) {
      // CMake puts a target's objects under CMakeFiles/<target>.dir/ (with a
      // <config>/ level for multi-config generators).
      std::string marker = "/CMakeFiles/" + t + ".dir/";
      if (out.find(marker) == std::string::npos)
        continue;
      if (multiConfig && out.find(marker + cfg_.config + "/") == std::string::npos)
        continue;
      // Physical, as ciq-ptxas names the outputs in its receipts (common/Paths.h).
      objects_.push_back({absolutePath(stringOf(e, "file"), dir), physicalPath(out), t, commandOf(e)});
    }
  }
  if (objects_.empty() && !addScriptCompiles()) {
    error = cc + ": target '" + cfg_.target + "' has no CUDA translation unit; check `target:` in " +
            cfg_.path + " (a target with .cu sources) or add its CUDA libraries to tune_targets";
    return false;
  }
  findGenerator(targets);
  return true;
}

// Which build tool runs the candidate builds, and under make the files it
// remakes from the tuned objects (dated in clean()).
void CMakeBuild::findGenerator(const std::vector<std::string> &targets) {
  auto cache = readCMakeCache(cfg_.buildDir);
  std::string generator = cacheValue(cache, "CMAKE_GENERATOR", "");
  makeDependants_.clear();
  datesOnReceipt_ = generator.find("Ninja") != std::string::npos;
  makeTree_ = generator == "Unix Makefiles" && llvm::sys::fs::exists(cfg_.buildDir + "/CMakeFiles/Makefile2");
  makeProgram_ = cacheValue(cache, "CMAKE_MAKE_PROGRAM", "make");
  if (!makeTree_)
    return;
  std::vector<std::string> objects;
  for (const auto &o : objects_)
    objects.push_back(o.object);
  std::vector<std::string> unconsumed;
  makeDependants_ = makeDependants(cfg_.buildDir, makeTargetRuleFiles(cfg_.buildDir, targets), objects, &unconsumed);
  // An object whose consumer ciq could not read (a rule it cannot parse, a
  // consumer outside the tuned targets) might have its link skipped: then
  // objects are dated only once each build ends, and after a kill -9 the
  // repair by the next ciq command or configure is what protects the tree.
  datesOnReceipt_ = unconsumed.empty();
}

void BuildDriver::endOrphanedBuild() {
  std::istringstream in(readOwnFile(cfg_.runDir + "/build.pgid", 256).value_or(""));
  int pgid = 0;
  unsigned long long start = 0;
  if (!(in >> pgid >> start) || pgid <= 1 || start == 0)
    return;
  // Still alive: the build of an engine that was killed. Its compiles would
  // race ours (objects written after our clean, receipts to our socket).
  // The leader's start time names that build's group, never a later group
  // that reuses the number.
  if (sameGroupAlive(pgid, start)) {
    kill(-pgid, SIGKILL);
    for (int i = 0; i < 100 && kill(-pgid, 0) == 0; ++i)
      usleep(20000);
  }
  llvm::sys::fs::remove(cfg_.runDir + "/build.pgid");
}

void CMakeBuild::clean() {
  for (const auto &o : objects_)
    llvm::sys::fs::remove(o.object);
  // Older than the objects' receipt-time date: make still links them into
  // these (engine/compile/MakeRules.h).
  for (const auto &d : makeDependants_)
    setFileDate(d, kLinkedFromObjectsDate);
}

// The tuned objects' paths relative to the build tree, or nothing when one
// lies outside it.
static std::vector<std::string> relativeObjects(const std::string &buildDir, const std::vector<CudaObject> &objects) {
  llvm::SmallString<256> real;
  std::vector<std::string> prefixes = {buildDir + "/"};
  if (!llvm::sys::fs::real_path(buildDir, real))
    prefixes.push_back(real.str().str() + "/");
  std::vector<std::string> out;
  for (const auto &o : objects) {
    auto p = std::find_if(prefixes.begin(), prefixes.end(),
                          [&](const std::string &pre) { return o.object.compare(0, pre.size(), pre) == 0; });
    if (p == prefixes.end())
      return {};
    out.push_back(o.object.substr(p->size()));
  }
  return out;
}

// The tuned objects as Ninja names them (paths relative to the build tree),
// or nothing when the tree is not Ninja's or an object lies outside it: then
// the whole target is built.
std::vector<std::string> CMakeBuild::objectTargets() const {
  std::string ninjaFile = cfg_.buildDir + (cfg_.config.empty() ? "/build.ninja" : "/build-" + cfg_.config + ".ninja");
  if (!llvm::sys::fs::exists(ninjaFile) && !llvm::sys::fs::exists(cfg_.buildDir + "/build.ninja"))
    return {};
  return relativeObjects(cfg_.buildDir, objects_);
}

// Under "Unix Makefiles" the objects alone: make on the target's own
// build.make, from the top of the tree, as the directory Makefiles' per-object
// rules (`make kern.cu.o`) run it: the compile rules of that target, no link,
// no other target. Empty (build the whole target) where the tree is not a
// Makefile one or the objects belong to several targets (one build.make each).
std::vector<std::string> CMakeBuild::makeObjectsCommand(unsigned jobs) const {
  if (!makeTree_ || objects_.empty() || objects_.front().findCuda)
    return {};
  const std::string &target = objects_.front().target;
  std::string rules = "CMakeFiles/" + target + ".dir/build.make";
  if (!llvm::sys::fs::exists(cfg_.buildDir + "/" + rules))
    return {};
  for (const auto &o : objects_)
    if (o.target != target)
      return {};
  std::vector<std::string> objects = relativeObjects(cfg_.buildDir, objects_);
  if (objects.empty())
    return {};
  std::vector<std::string> cmd = {makeProgram_, "-C", cfg_.buildDir, "-f", rules};
  cmd.insert(cmd.end(), objects.begin(), objects.end());
  cmd.push_back("-j" + std::to_string(jobs));
  return cmd;
}

std::vector<std::string> CMakeBuild::buildCommand() const {
  unsigned jobs = cfg_.jobs > 0 ? cfg_.jobs : std::max(1u, std::thread::hardware_concurrency());
  if (objectsOnly_)
    if (auto make = makeObjectsCommand(jobs); !make.empty())
      return make;
  std::vector<std::string> cmd = {"cmake", "--build", cfg_.buildDir, "--target"};
  std::vector<std::string> objects = objectsOnly_ ? objectTargets() : std::vector<std::string>{};
  if (objects.empty())
    cmd.push_back(cfg_.target);
  cmd.insert(cmd.end(), objects.begin(), objects.end());
  if (!cfg_.config.empty()) {
    cmd.push_back("--config");
    cmd.push_back(cfg_.config);
  }
  cmd.push_back("-j");
  cmd.push_back(std::to_string(jobs));
  return cmd;
}

SubprocessResult BuildDriver::runStep(const std::vector<std::string> &cmd, const std::string &cwd,
                                      const std::map<std::string, std::string> &env, const std::string &logPath) {
  SubprocessOptions o;
  o.cwd = cwd;
  o.setEnv = env;
  o.timeoutSeconds = cfg_.timeouts.buildSeconds;
  o.mergeStderrIntoStdout = true;
  o.stdoutFile = logPath;
  o.niceness = cfg_.buildNiceness;
  // A kill -9 of the engine runs no handler here: the guard ends the build
  // (cmake, ninja, make, the compiles and links they run in groups of their
  // own) within a second of the engine's death (docs/troubleshooting.md).
  if (const char *off = getenv(env::TestUnguardedBuilds); !off || std::string(off) != "1")
    o.guard = buildGuardPath();
  // A tuning run's settings never leak from the user's shell into the build.
  o.unsetEnv = {env::Lock};
  // The build's process group is written down while it runs, so that an
  // engine started after a kill -9 can end a build its predecessor left.
  std::string pgidFile = cfg_.runDir + "/build.pgid";
  o.onStart = [&](int pgid) {
    std::string err;
    writeFileAtomically(pgidFile, std::to_string(pgid) + " " + std::to_string(processStartTime(pgid)) + "\n", err);
  };
  auto r = runSubprocess(cmd, o);
  // Compiles run in groups of their own (ninja's, the wrapper's): after a
  // timeout they are still running; after a normal end nothing is.
  lastReaped_ = reapCompiles(cfg_.runDir);
  llvm::sys::fs::remove(pgidFile);
  return r;
}

SubprocessResult CMakeBuild::build(const std::map<std::string, std::string> &env, const std::string &logPath) {
  return runStep(buildCommand(), "", env, logPath);
}

std::unique_ptr<BuildDriver> makeBuildDriver(const TuneConfig &cfg) {
  if (cfg.build.kind == "cmake")
    return std::make_unique<CMakeBuild>(cfg);
  return std::make_unique<CommandBuild>(cfg);
}

} // namespace ciq
