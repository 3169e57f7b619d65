// Issue 12: every number ciq reports is the real, fresh measurement of that
// exact build, and attributed. The CPU-side parts: the INVALID reasons
// table, balanced interleaving, the GPU lock and state, minimization, the
// summary's one verdict, unknown compile statistics and compiler crashes.
#include "engine/winner/Attribution.h"
#include "engine/compile/BenchmarkProgram.h"
#include "wrapper/CompilerCrash.h"
#include "common/DeviceCode.h"
#include "engine/measure/GpuLock.h"
#include "engine/measure/GpuState.h"
#include "engine/measure/Interleave.h"
#include "common/InvalidReason.h"
#include "engine/measure/MeasuredPhase.h"
#include "engine/winner/Minimize.h"
#include "engine/winner/Objectives.h"
#include "engine/winner/Winner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <sstream>
#include <thread>

using namespace ciq;

namespace {

std::string tempDir(const char *prefix) {
  llvm::SmallString<128> d;
  llvm::sys::fs::createUniqueDirectory(prefix, d);
  return d.str().str();
}

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The stand-in nvidia-smi of tests/lit/analysis/Inputs/fake-smi on PATH.
struct FakeSmi {
  std::string oldPath = getenv("PATH") ? getenv("PATH") : "";
  explicit FakeSmi(const char *state) {
    setenv("PATH", (std::string(CIQ_TEST_SOURCE_DIR) + "/tests/lit/analysis/Inputs/fake-smi:" + oldPath).c_str(), 1);
    setenv("FAKE_SMI_STATE", state, 1);
  }
  ~FakeSmi() {
    setenv("PATH", oldPath.c_str(), 1);
    unsetenv("FAKE_SMI_STATE");
  }
};

} // namespace

// Issue 13, point 1 (INVALID reasons): docs/search-space.md lists exactly the
// engine's table, row for row.
TEST(InvalidReasons, DocsTableIsTheEngineTable) {
  std::string docs = slurp(std::string(CIQ_TEST_SOURCE_DIR) + "/docs/search-space.md");
  ASSERT_FALSE(docs.empty());
  size_t rows = 0;
  for (const auto &r : invalidReasons()) {
    std::string row = std::string("| `") + r.name + "` | " + r.description + " | " + r.cause + " | " + r.next + " |";
    EXPECT_NE(docs.find(row), std::string::npos) << "docs/search-space.md lacks the row\n" << row;
    ++rows;
  }
  size_t start = docs.find("| reason | what happened | likely cause | next step |");
  ASSERT_NE(start, std::string::npos);
  size_t end = docs.find("\n\n", start);
  std::string table = docs.substr(start, end - start);
  EXPECT_EQ((size_t)std::count(table.begin(), table.end(), '\n'), rows + 1) << "the docs table has other rows";
  for (const char *n : {"invalid_value", "no_fresh_result", "compiler_crash", "not_measurable"})
    EXPECT_NE(findInvalidReason(n), nullptr) << n;
}

TEST(InvalidReasons, SummaryCountsEachReasonMostFrequentFirst) {
  EXPECT_EQ(invalidSummary({{"run_timeout", 1}, {"compile_error", 2}}), "3 INVALID: compile_error x2, run_timeout x1");
  EXPECT_EQ(invalidSummary({}), "");
}

// Issue 12, case 6: A B B A A B ..., so a GPU warming up over the rounds
// favours neither build; warm-up rounds are run first and kept apart.
TEST(Interleave, BalancedOrderAndSeparateWarmup) {
  std::string dir = tempDir("ciq-abba");
  std::string log = dir + "/order.txt";
  TuneConfig cfg;
  cfg.buildDir = dir;
  cfg.benchmark.enabled = true;
  cfg.benchmark.timeoutSeconds = 10;
  cfg.benchmark.metric.kind = "regex";
  cfg.benchmark.metric.pattern = "time_ms=([0-9.]+)";
  BenchmarkRunner r(cfg.benchmark, benchmarkWorkDir(cfg));
  auto cmd = [&](const char *name, const char *value) {
    return std::vector<std::string>{"sh", "-c", std::string("printf ") + name + " >> " + log + "; echo time_ms=" + value};
  };
  auto res = runInterleaved(r, {cmd("A", "1"), cmd("B", "2")}, 3, dir + "/run.log", 1);
  ASSERT_TRUE(res.ok) << res.message;
  EXPECT_EQ(slurp(log), "ABBAABBA"); // the warm-up round AB, then BA AB BA
  EXPECT_EQ(res.warmup[0].size(), 1u);
  EXPECT_EQ(res.values[0].size(), 3u);
  EXPECT_EQ(res.values[1], (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(balancedOrder(3, 1), (std::vector<size_t>{2, 1, 0}));
  llvm::sys::fs::remove_directories(dir);
}

// Issue 12, case 4: two measurements on one GPU never overlap across
// processes; the second waits and is told who holds the GPU.
TEST(GpuLock, SecondHolderWaitsAndIsToldWhoMeasures) {
  std::string dir = tempDir("ciq-gpulock");
  setenv("CIQ_GPU_LOCK_DIR", dir.c_str(), 1);
  GpuLock first;
  std::string err;
  ASSERT_TRUE(first.acquire("GPU-1a2b", "pid 1 (alice): ciq tune gemm", err)) << err;
  std::atomic<bool> got{false};
  std::string told;
  std::thread second([&] {
    GpuLock l; // its own open file description: flock conflicts as between processes
    std::string e;
    l.acquire("GPU-1a2b", "pid 2 (bob): ciq tune stencil", e, [&](const std::string &h) { told = h; });
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got.load()) << "the second measurement did not wait";
  first.release();
  second.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(told, "pid 1 (alice): ciq tune gemm");
  // Another GPU is another lock.
  GpuLock other;
  ASSERT_TRUE(other.acquire("GPU-ffff", "x", err));
  unsetenv("CIQ_GPU_LOCK_DIR");
  llvm::sys::fs::remove_directories(dir);
}

// Issue 12, case 5: throttle reasons, temperature, power and foreign compute
// processes are read; a throttled or shared GPU is a problem, before or after.
TEST(GpuState, ThrottledAndSharedGpuIsAProblem) {
  FakeSmi smi("busy");
  auto s = queryGpuState();
  ASSERT_EQ(s["gpus"].size(), 1u) << s.dump();
  auto g = measuredGpu(s, "");
  EXPECT_EQ(g["temperature_c"], 89);
  EXPECT_EQ(g["clocks_sm_mhz"], 1035);
  EXPECT_EQ(g["throttle"], nlohmann::json({"hw_thermal_slowdown", "sw_power_cap"}));
  auto problems = gpuProblems(g);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0], "GPU 0 throttled (hw_thermal_slowdown, sw_power_cap)");
  EXPECT_EQ(problems[1], "GPU 0 shared with another compute process (pid 4242 python3, 30120 MiB)");
  EXPECT_TRUE(gpuProblems(g, {4242}).size() == 1); // our own process is not foreign
  std::string dir = tempDir("ciq-phase");
  setenv("CIQ_GPU_LOCK_DIR", dir.c_str(), 1);
  MeasuredPhase phase("", "test", nullptr);
  std::string err;
  ASSERT_TRUE(phase.begin(err)) << err;
  EXPECT_EQ(phase.end().size(), 2u);
  auto rec = phase.record();
  EXPECT_EQ(rec["exclusive"], true);
  EXPECT_EQ(rec["gpu_uuid"], "GPU-1a2b3c4d-0000-1111-2222-333344445555");
  EXPECT_EQ(rec["problems"].size(), 2u);
  unsetenv("CIQ_GPU_LOCK_DIR");
  llvm::sys::fs::remove_directories(dir);
}

TEST(GpuState, IdleGpuHasNoProblem) {
  FakeSmi smi("idle");
  auto g = measuredGpu(queryGpuState(), "GPU-1a2b3c4d-0000-1111-2222-333344445555");
  ASSERT_TRUE(g.is_object());
  EXPECT_TRUE(gpuProblems(g).empty());
}

namespace {

SearchSpace minimizeSpace() {
  SearchSpace s;
  auto ctl = [](const char *name, RenderKind k, const char *opt) {
    Control c;
    c.name = name;
    c.render = k;
    c.option = opt;
    c.values = {"1"};
    return c;
  };
  s.controls = {ctl("tile", RenderKind::Define, "TILE"), ctl("block", RenderKind::Define, "BLOCK"),
                ctl("opt", RenderKind::Ptxas, "--opt-level={}"), ctl("cache", RenderKind::Ptxas, "--def-load-cache={}")};
  return s;
}

} // namespace

// Winner minimization: a control whose removal is not worse leaves the
// winner; a whole group that does nothing goes in one step.
TEST(Minimize, DropsControlsThatDoNotEarnTheirPlace) {
  SearchSpace s = minimizeSpace();
  // "time": 10 - 2*tile - 1*block; the ptxas controls do nothing.
  auto time = [](const Point &p) { return 10.0 - 2 * (p[0] != kUnset) - 1 * (p[1] != kUnset); };
  int trials = 0;
  WorseThan worse = [&](const Point &cur, const Point &red, std::string &detail, std::string &) -> std::optional<bool> {
    ++trials;
    detail = "exact";
    return time(red) > time(cur);
  };
  std::string err;
  auto r = minimizeWinner(s, {0, 0, 0, 0}, worse, err);
  ASSERT_TRUE(r) << err;
  EXPECT_EQ(r->point, (Point{0, 0, kUnset, kUnset}));
  ASSERT_GE(r->steps.size(), 2u);
  EXPECT_EQ(r->steps[0].removed, "group application parameters");
  EXPECT_FALSE(r->steps[0].dropped);
  EXPECT_EQ(r->steps[1].removed, "group ptxas controls");
  EXPECT_TRUE(r->steps[1].dropped);
  EXPECT_EQ(trials, 4); // two groups, then tile and block one at a time
  // A winner of one control is already the minimum.
  trials = 0;
  r = minimizeWinner(s, {0, kUnset, kUnset, kUnset}, worse, err);
  EXPECT_EQ(trials, 0);
}

TEST(Attribution, SplitsParametersFromCompilerControls) {
  Rendered w;
  w.defines = {"TILE=8"};
  w.ptxas = {"--maxrregcount=32"};
  auto v = attributionVariants(w);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[1].name, "parameters only");
  EXPECT_EQ(v[1].rendered.defines, w.defines);
  EXPECT_TRUE(v[1].rendered.ptxas.empty());
  EXPECT_EQ(v[2].rendered.ptxas, w.ptxas);
  EXPECT_TRUE(v[2].rendered.defines.empty());
  EXPECT_EQ(v[3].name, "both");
  // Issue 32 item 3: the winner's row is named by what it holds.
  Rendered onlyPtxas;
  onlyPtxas.ptxas = {"-O2"};
  ASSERT_EQ(attributionVariants(onlyPtxas).size(), 2u);
  EXPECT_EQ(attributionVariants(onlyPtxas)[1].name, "compiler controls");
  Rendered onlyDefines;
  onlyDefines.defines = {"TILE=8"};
  EXPECT_EQ(attributionVariants(onlyDefines)[1].name, "parameters");
}

// spill_bytes 888 -> 0 is better, and its speedup is undefined, not 0x:
// null in the lock, "n/a (888 -> 0 bytes)" in the summary.
TEST(Attribution, WinnerOfZeroHasNoSpeedup) {
  VariantResult base, both;
  base.name = "baseline";
  base.median = 888;
  both.name = "both";
  both.median = 0;
  judgeAgainst(both, base, /*minimize=*/true, /*exact=*/true);
  EXPECT_FALSE(both.speedup.has_value());
  EXPECT_TRUE(both.significant);
  std::string line = formatVariant(both, "bytes");
  EXPECT_NE(line.find("n/a (888 -> 0 bytes)  better"), std::string::npos) << line;
  EXPECT_EQ(line.find("0.000x"), std::string::npos) << line;
  nlohmann::json j = variantsToJson({base, both});
  EXPECT_TRUE(j[1]["speedup"].is_null()) << j.dump();
  // Maximized: a baseline of 0 has nothing to divide by either.
  VariantResult zero, some;
  some.median = 5;
  judgeAgainst(some, zero, /*minimize=*/false, /*exact=*/true);
  EXPECT_FALSE(some.speedup.has_value());
  // A defined one stays.
  VariantResult half;
  half.median = 444;
  judgeAgainst(half, base, true, true);
  ASSERT_TRUE(half.speedup.has_value());
  EXPECT_DOUBLE_EQ(*half.speedup, 2.0);
  EXPECT_NE(formatVariant(half, "bytes").find("2.000x"), std::string::npos);
}

// A winner that keeps spill bytes at 0 and saves registers (the second,
// tie-breaking objective) beats the default compile; its attribution row
// said "equal" (issue: new-user trial u1). Later objectives now decide a
// tie as the search's ranking does.
TEST(Attribution, ATieInTheFirstObjectiveIsBrokenByTheNext) {
  Objective spills, regs;
  spills.metric = "spill_bytes";
  spills.unit = "bytes";
  regs.metric = "registers";
  regs.unit = "registers";
  std::vector<Objective> objectives = {spills, regs};
  VariantResult base, both;
  base.median = 0;
  both.median = 0;
  judgeAgainst(both, base, /*minimize=*/true, /*exact=*/true);
  ASSERT_EQ(both.verdict, "equal");
  breakTieByLaterObjectives(both, {{"spill_bytes", 0}, {"registers", 52}}, {{"spill_bytes", 0}, {"registers", 94}},
                            objectives, /*pareto=*/false);
  EXPECT_EQ(both.verdict, "better in registers 94 -> 52 registers");
  EXPECT_TRUE(both.significant);
  EXPECT_NE(formatVariant(both, "bytes").find("better in registers 94 -> 52"), std::string::npos);

  VariantResult more;
  judgeAgainst(more, base, true, true);
  breakTieByLaterObjectives(more, {{"spill_bytes", 0}, {"registers", 96}}, {{"spill_bytes", 0}, {"registers", 94}},
                            objectives, false);
  EXPECT_EQ(more.verdict, "worse in registers 94 -> 96 registers");
  EXPECT_FALSE(more.significant);

  // Pareto: better in one, worse in another is no gain.
  Objective stack;
  stack.metric = "stack_frame";
  stack.unit = "bytes";
  objectives.push_back(stack);
  VariantResult trade;
  judgeAgainst(trade, base, true, true);
  breakTieByLaterObjectives(trade, {{"spill_bytes", 0}, {"registers", 52}, {"stack_frame", 16}},
                            {{"spill_bytes", 0}, {"registers", 94}, {"stack_frame", 0}}, objectives, /*pareto=*/true);
  EXPECT_EQ(trade.verdict, "a trade-off: better in registers 94 -> 52 registers, worse in stack_frame 0 -> 16 bytes");
  EXPECT_FALSE(trade.significant);

  // A runtime objective after the compile one is no exact tie-break: one
  // median of the search, no noise test. It is left out.
  Objective time;
  time.metric = "time_ms";
  time.unit = "ms";
  VariantResult timed;
  judgeAgainst(timed, base, true, true);
  breakTieByLaterObjectives(timed, {{"spill_bytes", 0}, {"time_ms", 1.0}}, {{"spill_bytes", 0}, {"time_ms", 2.0}},
                            {spills, time}, false);
  EXPECT_EQ(timed.verdict, "equal");
  EXPECT_FALSE(timed.significant);

  // Every objective equal stays "equal".
  VariantResult same;
  judgeAgainst(same, base, true, true);
  breakTieByLaterObjectives(same, {{"spill_bytes", 0}, {"registers", 94}}, {{"spill_bytes", 0}, {"registers", 94}},
                            objectives, false);
  EXPECT_EQ(same.verdict, "equal");
}

namespace {

Evaluation timed(const std::string &id, double ms, nlohmann::json controls) {
  Evaluation e;
  e.candidateId = id;
  e.generation = id == "c0000" ? 0 : 1;
  e.ok = true;
  e.scores["time_ms"] = ms;
  e.rendered.controls = controls;
  if (!controls.empty())
    e.rendered.nvcc = {"--fmad=true"};
  return e;
}

} // namespace

// Issue 12, cases 8 and 9: one verdict; no note about a control set to the
// compiler's own default.
TEST(SummaryVerdict, OneVerdictAndNoNoteForADefault) {
  TuneConfig cfg;
  cfg.benchmark.enabled = true;
  cfg.objectives.push_back({"time_ms", "minimize", "ms", {}, "sum", {}});
  Control fmad;
  fmad.name = "fmad";
  fmad.render = RenderKind::Nvcc;
  fmad.changesResults = true;
  fmad.compilerDefault = "true";
  cfg.space.controls = {fmad};
  std::vector<Evaluation> evals = {timed("c0000", 10, nlohmann::json::object()),
                                   timed("c0003", 9.97, {{"fmad", "true"}})};
  auto print = [&](const WinnerChoice &w, const Verdicts &v) {
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    printSummary(cfg, evals, w, f, v);
    fclose(f);
    std::string s(buf, n);
    free(buf);
    return s;
  };
  WinnerChoice notSig{1, false, "not significantly better than the baseline: p = 0.3"};
  std::string out = print(notSig, {});
  EXPECT_NE(out.find("verdict: no candidate beat the default compile (best c0003: not significantly better"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("winning options"), std::string::npos) << out;
  EXPECT_EQ(out.find("speedup"), std::string::npos) << out;
  EXPECT_EQ(out.find("note:"), std::string::npos) << out;
  Verdicts v;
  v.speedup = 1.2;
  v.pValue = 1e-5;
  out = print({1, true, ""}, v);
  EXPECT_NE(out.find("verdict: c0003 beats the default compile: speedup 1.200x, p < 0.0001"), std::string::npos) << out;
  EXPECT_NE(out.find("winning options: --fmad=true"), std::string::npos) << out;
  EXPECT_EQ(out.find("note:"), std::string::npos) << "fmad=true is nvcc's default:\n" << out;
  evals[1].rendered.controls["fmad"] = "false";
  EXPECT_NE(print({1, true, ""}, v).find("note: the winner sets fmad=false"), std::string::npos);
}

// Issue 41 item 2: a written space with a control that changes results,
// searched without an output comparison, says so in the summary even when
// the winner leaves it unset; with the comparison nothing is said.
TEST(SummaryVerdict, WrittenSpaceWithUncomparedNumericsSaysSo) {
  TuneConfig cfg;
  cfg.objectives.push_back({"registers", "minimize", "registers", {}, "sum", {}});
  Control fmad;
  fmad.name = "fmad";
  fmad.render = RenderKind::Ptxas;
  fmad.changesResults = true;
  fmad.compilerDefault = "true";
  cfg.space.controls = {fmad};
  Evaluation b;
  b.candidateId = "c0000";
  b.ok = true;
  b.scores["registers"] = 40;
  std::vector<Evaluation> evals = {b};
  auto print = [&] {
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    printSummary(cfg, evals, {0, false, "no candidate"}, f, {});
    fclose(f);
    std::string s(buf, n);
    free(buf);
    return s;
  };
  std::string out = print();
  EXPECT_NE(out.find("space: fmad can change floating-point results and was searched without comparing the output "
                     "with the baseline's"),
            std::string::npos)
      << out;
  cfg.benchmark.enabled = true;
  cfg.benchmark.compare = "stdout";
  EXPECT_EQ(print().find("space: fmad"), std::string::npos);
}

// Issue 12, cases 10 and 11 on the engine side: device functions count in
// spill_bytes; an unknown statistic or a compile where ptxas did not run is
// INVALID not_measurable, never 0.
TEST(CompileMetrics, DeviceFunctionsCountAndUnknownIsNotMeasurable) {
  TuneConfig cfg;
  cfg.objectives.push_back({"spill_bytes", "minimize", "bytes", {}, "sum", {}});
  Evaluation e;
  e.ok = true;
  KernelStats k;
  k.name = "_Z1kPfi";
  k.arch = "sm_90";
  k.frameKnown = k.usageKnown = true;
  k.spillStores = 4;
  KernelStats f = k;
  f.name = "_Z6helperPfi";
  f.entry = false;
  f.usageKnown = false;
  f.spillStores = 1024;
  f.spillLoads = 1152;
  e.kernels = {k, f};
  e.objects.push_back({"k.cu", "k.o", "abc", "ok", 100, 1, true, ""});
  ASSERT_TRUE(scoreCompileMetrics(cfg, e));
  EXPECT_EQ(e.scores["spill_bytes"], 2180);
  cfg.objectives[0].metric = "registers";
  Evaluation r = e;
  ASSERT_TRUE(scoreCompileMetrics(cfg, r)) << r.message; // the device function adds no registers line
  Evaluation unknown = e;
  unknown.kernels[0].usageKnown = false;
  EXPECT_FALSE(scoreCompileMetrics(cfg, unknown));
  EXPECT_EQ(unknown.reason, "not_measurable");
  Evaluation dlto = e;
  dlto.objects[0].ptxasRan = false;
  cfg.objectives[0].metric = "spill_bytes";
  EXPECT_FALSE(scoreCompileMetrics(cfg, dlto));
  EXPECT_EQ(dlto.reason, "not_measurable");
  EXPECT_NE(dlto.message.find("ptxas did not run"), std::string::npos) << dlto.message;
}

// Issue 12, case 12: the compiler itself, or a tool nvcc ran, killed by a signal.
TEST(CompilerCrash, SignalOfTheCompilerOrOfAToolNvccRan) {
  SubprocessResult direct;
  direct.termSignal = 9;
  auto c = wrapper::detectCompilerCrash(direct, "ptxas");
  EXPECT_EQ(c.signal, 9);
  EXPECT_EQ(c.tool, "ptxas");
  SubprocessResult viaNvcc;
  viaNvcc.exitCode = 255;
  viaNvcc.err = "nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n";
  c = wrapper::detectCompilerCrash(viaNvcc, "nvcc");
  EXPECT_EQ(c.signal, 11);
  EXPECT_EQ(c.tool, "cicc");
  SubprocessResult timeout = direct;
  timeout.timedOut = true;
  EXPECT_EQ(wrapper::detectCompilerCrash(timeout, "ptxas").signal, 0); // that is compile_timeout
  SubprocessResult plain;
  plain.exitCode = 1;
  plain.err = "error: identifier \"x\" is undefined\n";
  EXPECT_EQ(wrapper::detectCompilerCrash(plain, "nvcc").signal, 0);
  // Issue 29 item 3: nvcc runs cicc and ptxas through /bin/sh, and the
  // shell reports the tool's death, then exits 128+N (nvcc passes it on):
  // dash names no tool, bash does.
  SubprocessResult dash;
  dash.exitCode = 137;
  dash.err = "Killed\n";
  c = wrapper::detectCompilerCrash(dash, "nvcc");
  EXPECT_EQ(c.signal, 9);
  EXPECT_EQ(c.tool, "");
  dash.exitCode = 139;
  dash.err = "kern.cu(3): warning: something\nSegmentation fault (core dumped)\n";
  EXPECT_EQ(wrapper::detectCompilerCrash(dash, "nvcc").signal, 11);
  SubprocessResult bash;
  bash.exitCode = 137;
  bash.err = "sh: line 1: 4242 Killed                  \"$CICC_PATH/cicc\" --c++17 -arch compute_90 k.ii -o k.ptx\n";
  c = wrapper::detectCompilerCrash(bash, "nvcc");
  EXPECT_EQ(c.signal, 9);
  EXPECT_EQ(c.tool, "cicc");
  // The status alone, or a line that only mentions the word, is no crash.
  SubprocessResult status;
  status.exitCode = 137;
  status.err = "error: Killed is not a type\n";
  EXPECT_EQ(wrapper::detectCompilerCrash(status, "nvcc").signal, 0);
  SubprocessResult otherSignal = dash;
  otherSignal.exitCode = 137;
  otherSignal.err = "Segmentation fault\n";
  EXPECT_EQ(wrapper::detectCompilerCrash(otherSignal, "nvcc").signal, 0);
  EXPECT_EQ(signalName(11), "SIGSEGV");
}

// Issue 12, case 3: two builds are equal for runtime reuse only when their
// objects are, host code included; nvcc's temporary names do not count.
TEST(ObjectsHash, HostCodeCountsTemporaryNamesDoNot) {
  std::string dir = tempDir("ciq-objhash");
  auto write = [&](const std::string &name, const std::string &bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  std::string a = write("a.o", std::string("ELF..tmpxft_000078c9_00000000-6_k.cudafe1.cpp..hb_block=128"));
  std::string b = write("b.o", std::string("ELF..tmpxft_00001234_00000000-6_k.cudafe1.cpp..hb_block=128"));
  std::string c = write("c.o", std::string("ELF..tmpxft_00001234_00000000-6_k.cudafe1.cpp..hb_block=256"));
  std::string err;
  EXPECT_EQ(objectsCodeSha256({a}, err), objectsCodeSha256({b}, err));
  EXPECT_NE(objectsCodeSha256({b}, err), objectsCodeSha256({c}, err));
  EXPECT_FALSE(objectsCodeSha256({dir + "/missing.o"}, err));
  llvm::sys::fs::remove_directories(dir);
}

// Issue 50 item 5: "kernels worse under the winner" says when a kernel with
// more spills ran faster; a long template name is elided on the console.
#include "common/ConsoleLine.h"

TEST(SummaryVerdict, WorseKernelsSayWhetherTheyRanFaster) {
  TuneConfig cfg;
  cfg.benchmark.enabled = true;
  cfg.objectives.push_back({"time_ms", "minimize", "ms", {}, "sum", {}});
  auto kernel = [](long spills) {
    KernelStats k;
    k.name = "_Z4walkPf";
    k.demangled = "walk(float*)";
    k.arch = "sm_90";
    k.registers = 64;
    k.usageKnown = k.frameKnown = true;
    k.spillStores = k.spillLoads = spills / 2;
    return k;
  };
  auto traced = [](uint64_t launches, double ms) {
    KernelTime t;
    t.mangled = "_Z4walkPf";
    t.demangled = "walk(float*)";
    t.launches = launches;
    t.gpuMs = ms;
    return t;
  };
  std::vector<Evaluation> evals = {timed("c0000", 10, nlohmann::json::object()),
                                   timed("c0003", 8, {{"fmad", "false"}})};
  evals[0].kernels = {kernel(0)};
  evals[1].kernels = {kernel(228)};
  auto print = [&] {
    char *buf = nullptr;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    Verdicts v;
    v.speedup = 1.25;
    printSummary(cfg, evals, {1, true, ""}, f, v);
    fclose(f);
    std::string s(buf, n);
    free(buf);
    return s;
  };
  // As often, and faster: a trade, said as such.
  evals[0].kernelTimes = {traced(10, 2.0)};
  evals[1].kernelTimes = {traced(10, 1.5)};
  std::string out = print();
  EXPECT_NE(out.find("kernels that grew but ran no slower under the winner: 1"), std::string::npos) << out;
  EXPECT_NE(out.find("walk(float*) sm_90: spill bytes 0 -> 228 [launched: 2 -> 1.5 ms GPU time, ran faster]"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("kernels worse under the winner"), std::string::npos) << out;
  // Fewer launches: less GPU time in all, more a launch; both said.
  evals[1].kernelTimes = {traced(5, 1.5)};
  out = print();
  EXPECT_NE(out.find("kernels worse under the winner: 1"), std::string::npos) << out;
  EXPECT_NE(out.find("[launched: 2 -> 1.5 ms GPU time over 10 -> 5 launches: faster in all, slower a launch]"),
            std::string::npos)
      << out;
  // A winner that was not traced says so instead of "-".
  evals[1].kernelTimes.clear();
  out = print();
  EXPECT_NE(out.find("[launched: 2 ms GPU time; c0003 was not traced]"), std::string::npos) << out;
}

TEST(ConsoleLine, LongNamesAndLinesAreElided) {
  std::string args;
  for (int i = 0; i < 60; ++i)
    args += std::string(i ? ", " : "") + "cub::detail::policy_wrapper_t<Policy" + std::to_string(i) + ">";
  std::string name = "void cub::DeviceReduceKernel<" + args + ">(float const*, float*, int)";
  ASSERT_GT(name.size(), 1000u);
  std::string line = "  " + name + " sm_90: spill bytes 0 -> 8";
  std::string shown = consoleLine(line);
  EXPECT_LT(shown.size(), 200u) << shown;
  EXPECT_EQ(shown.rfind("  void cub::DeviceReduceKernel<cub::detail::policy_wrapper_t<Policy0>", 0), 0u) << shown;
  EXPECT_NE(shown.find("..."), std::string::npos) << shown;
  EXPECT_NE(shown.find("(float const*, float*, int) sm_90: spill bytes 0 -> 8"), std::string::npos) << shown;
  // Short names and prose are left alone: the demo's kernel line is whole.
  std::string demo = "(anonymous namespace)::sgemm_blocked(int, int, int, float, float const*, float const*, float, "
                     "float*) sm_90: stack bytes 112 -> 136 (see ciq_tune(... KERNELS <regex>))";
  EXPECT_EQ(consoleLine(demo), demo);
  // A line of many names stays bounded.
  std::string many;
  for (int i = 0; i < 200; ++i)
    many += "kernel.tile_" + std::to_string(i) + ".maxnreg, ";
  std::string cut = consoleLine("per-kernel controls: " + many);
  EXPECT_LE(cut.size(), kConsoleLineMax + 60) << cut.size();
  EXPECT_NE(cut.find("characters left out ...]"), std::string::npos);
  EXPECT_EQ(consoleText("a\n" + line + "\nb\n"), "a\n" + shown + "\nb\n");
}
