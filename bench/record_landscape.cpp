// bench/record_landscape: records one compile-only landscape for
// bench/search_efficiency — the objective of EVERY point of a search space,
// compiled once with the real CUDA compilers.
//
// The points are ciq's own exhaustive enumeration (engine/search/Search.cpp pointAt,
// the order `strategy: exhaustive` walks), each rendered by ciq's render()
// into exactly the arguments ciq-ptxas would add: -D and nvcc options go to
// `nvcc -ptx` (one PTX per distinct front-end command line, cached), ptxas
// options to `ptxas -v`, whose statistics ciq's own parser reads (spill bytes,
// registers, summed over the kernels), and whose cubin's device code
// (common/DeviceCode.h, the hash `ciq tune` uses to find twins) is each
// point's `binary`: the search benchmark counts binaries measured. A failed compile is INVALID
// compile_error, as in `ciq tune`. Recording through `ciq tune` itself costs a
// full `cmake --build` per point, which a shared 2-core machine cannot afford
// for several hundred points; the compiles and the parsing are the same.
#include "common/InvalidReason.h"
#include "wrapper/PtxasStats.h"
#include "engine/search/Search.h"
#include "engine/config/SpaceLoader.h"
#include "common/DeviceCode.h"
#include "common/Subprocess.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

using namespace ciq;
using namespace llvm;

static cl::opt<std::string> Nvcc("nvcc", cl::desc("nvcc that makes the PTX"), cl::init("nvcc"));
static cl::opt<std::string> Ptxas("ptxas", cl::desc("ptxas that compiles every point"), cl::init("ptxas"));
static cl::opt<std::string> Kernel("kernel", cl::desc(".cu file whose kernels are compiled"), cl::Required);
static cl::opt<std::string> SpaceFile("space", cl::desc("search space YAML"), cl::Required);
static cl::opt<std::string> Name("name", cl::desc("landscape name"), cl::Required);
static cl::opt<std::string> Output("o", cl::desc("landscape JSON to write"), cl::Required);
static cl::opt<std::string> Arch("arch", cl::desc("GPU architecture"), cl::init("sm_90"));
static cl::opt<unsigned> Jobs("j", cl::desc("compiles at once"), cl::init(2));

namespace {

struct Outcome {
  bool ok = false;
  std::string reason, message;
  std::vector<double> scores;   // spill bytes, registers
  std::string binary;           // SHA-256 of the cubin's device code (16 hex digits)
};

std::string firstLine(const std::string &s) {
  size_t b = s.find("error");
  std::string t = s.substr(b == std::string::npos ? 0 : b);
  return t.substr(0, t.find('\n'));
}

class Recorder {
public:
  explicit Recorder(std::string dir) : dir_(std::move(dir)) {}

  Outcome compile(const Rendered &r) {
    std::string ptx, err;
    if (!frontEnd(r, ptx, err))
      return {false, reason::CompileError, err, {}, ""};
    std::string cubin = dir_ + "/" + std::to_string(next_++) + ".cubin";
    std::vector<std::string> argv = {Ptxas, "-arch=" + Arch, "-v", "-o", cubin};
    argv.insert(argv.end(), r.ptxas.begin(), r.ptxas.end());
    argv.push_back(ptx);
    SubprocessOptions o;
    o.mergeStderrIntoStdout = true;
    auto res = runSubprocess(argv, o);
    if (res.exitCode != 0)
      return {false, reason::CompileError, firstLine(res.out), {}, ""};
    double spill = 0, regs = 0;
    for (const auto &k : wrapper::parsePtxasVerbose(res.out)) {
      spill += double(k.spillStores + k.spillLoads);
      regs += k.registers;
    }
    std::string error;
    auto code = readDeviceCode(cubin, error);
    sys::fs::remove(cubin);
    if (!code)
      return {false, reason::CompileError, "device code of the cubin: " + error, {}, ""};
    return {true, "", "", {spill, regs}, code->sha256.substr(0, 16)};
  }

private:
  // One PTX per distinct front-end command line (defines + nvcc options).
  bool frontEnd(const Rendered &r, std::string &ptx, std::string &err) {
    std::vector<std::string> argv = {Nvcc, "-arch=" + Arch, "-ptx", Kernel};
    for (const auto &d : r.defines)
      argv.push_back("-D" + d);
    argv.insert(argv.end(), r.nvcc.begin(), r.nvcc.end());
    std::string key;
    for (const auto &a : argv)
      key += a + '\n';
    std::shared_future<std::pair<std::string, std::string>> f;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = ptx_.find(key);
      if (it == ptx_.end()) {
        std::string out = dir_ + "/" + std::to_string(ptx_.size()) + ".ptx";
        it = ptx_.emplace(key, std::async(std::launch::deferred, [argv, out]() mutable {
                            argv.insert(argv.end(), {"-o", out});
                            SubprocessOptions o;
                            o.mergeStderrIntoStdout = true;
                            auto res = runSubprocess(argv, o);
                            return res.exitCode == 0 ? std::make_pair(out, std::string())
                                                     : std::make_pair(std::string(), firstLine(res.out));
                          }).share()).first;
      }
      f = it->second;
    }
    auto [path, message] = f.get();
    ptx = path;
    err = message;
    return !path.empty();
  }

  std::string dir_;
  std::atomic<unsigned> next_{0};
  std::mutex mu_;
  std::map<std::string, std::shared_future<std::pair<std::string, std::string>>> ptx_;
};

std::string toolVersion(const std::string &tool) {
  auto r = runSubprocess({tool, "--version"});
  std::string v = r.out;
  size_t p = v.rfind("Build ");
  return p == std::string::npos ? v.substr(0, v.find('\n')) : v.substr(p, v.find('\n', p) - p);
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "ciq landscape recorder (compile-only objectives)\n");
  SearchSpace space;
  try {
    space = loadSpaceFile(SpaceFile, ".");
  } catch (const std::exception &e) {
    fprintf(stderr, "record_landscape: error: %s\n", e.what());
    return 1;
  }
  SmallString<128> dir;
  if (sys::fs::createUniqueDirectory("ciq-landscape", dir)) {
    fprintf(stderr, "record_landscape: error: cannot create a temporary folder\n");
    return 1;
  }
  Recorder rec(dir.str().str());
  const size_t total = (size_t)space.size();
  std::vector<Point> points;
  std::map<std::string, Rendered> distinct;   // candidate hash -> rendering
  std::vector<std::string> hashes;
  for (size_t i = 0; i < total; ++i) {
    points.push_back(pointAt(space, (double)i));
    Rendered r = render(space, points.back());
    hashes.push_back(r.hash());
    distinct.emplace(hashes.back(), r);
  }
  auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, Outcome> byHash;
  std::vector<std::pair<std::string, Rendered>> work(distinct.begin(), distinct.end());
  for (size_t start = 0; start < work.size(); start += Jobs) {
    std::vector<std::future<Outcome>> batch;
    for (size_t j = start; j < std::min(work.size(), start + (size_t)Jobs); ++j)
      batch.push_back(std::async(std::launch::async, [&rec, &work, j] { return rec.compile(work[j].second); }));
    for (size_t j = 0; j < batch.size(); ++j)
      byHash[work[start + j].first] = batch[j].get();
    fprintf(stderr, "\r%zu/%zu compiled", std::min(work.size(), start + (size_t)Jobs), work.size());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fprintf(stderr, "\n");
  sys::fs::remove_directories(dir);

  nlohmann::json pts = nlohmann::json::array();
  for (size_t i = 0; i < total; ++i) {
    const Outcome &o = byHash.at(hashes[i]);
    nlohmann::json p = {{"point", points[i]}, {"status", o.ok ? "OK" : "INVALID"}};
    if (o.ok)
      p["scores"] = o.scores, p["binary"] = o.binary;
    else
      p["reason"] = o.reason, p["message"] = o.message;
    pts.push_back(p);
  }
  // The command as bench/landscapes/record.sh runs it, without this machine's paths.
  std::string cmd = "record_landscape";
  for (int i = 1; i < argc; ++i)
    cmd += " " + std::string(argv[i]);
  nlohmann::json doc = {
      {"name", Name.getValue()},
      {"kind", "compile"},
      {"scalar_weights", {1024, 1}},   // one scalar for peers: spill bytes first, registers break ties
      {"space_identity", space.identity()},
      {"controls", nlohmann::json::array()},
      {"objectives", {{{"metric", "spill_bytes"}, {"direction", "minimize"}, {"unit", "bytes"}},
                      {{"metric", "registers"}, {"direction", "minimize"}, {"unit", "registers"}}}},
      {"recipe", {{"command", cmd},
                  {"kernel", sys::path::filename(Kernel).str()},
                  {"arch", Arch.getValue()},
                  {"nvcc", toolVersion(Nvcc)},
                  {"ptxas", toolVersion(Ptxas)},
                  {"distinct_command_lines", distinct.size()},
                  {"seconds", secs}}},
      {"points", pts}};
  for (const auto &c : space.controls)
    doc["controls"].push_back(c.name);
  std::ofstream out(Output);
  out << doc.dump(1) << "\n";
  if (!out) {
    fprintf(stderr, "record_landscape: error: cannot write %s\n", Output.c_str());
    return 1;
  }
  fprintf(stderr, "record_landscape: %s: %zu points, %zu distinct command lines, %.1f s\n", Name.c_str(), total,
          distinct.size(), secs);
  return 0;
}
