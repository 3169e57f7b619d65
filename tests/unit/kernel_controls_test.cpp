// Per-kernel controls: the PTX edit (wrapper/PtxDirectives.h), the kernel
// key, the controls a baseline's kernels get (engine/config/KernelSpace.h),
// the receipt check (engine/compile/KernelControlCheck.h).
#include "common/KernelDirective.h"
#include "engine/compile/KernelControlCheck.h"
#include "engine/config/KernelSpace.h"
#include "engine/winner/Attribution.h"
#include "wrapper/PtxDirectives.h"

#include <gtest/gtest.h>

using namespace ciq;
using namespace ciq::wrapper;

namespace {

const char *kPtx = R"(.version 9.0
.target sm_90
.address_size 64

.entry _ZN48_GLOBAL__N__7eea5e32_15_spill_kernel_cu_b1130c7c13sgemm_blockedEiiifPKfS1_fPf(
	.param .u32 p0,
	.param .u64 p1
)
.maxntid 256, 1, 1
.minnctapersm 3
{
	ret;
}

.visible .entry _Z5plainPf(
	.param .u64 _Z5plainPf_param_0
)
{
	ret;
}

.extern .entry _Z8declaredv();
.visible .entry _Z6noargsv()
.reqntid 128
{
	ret;
}
)";

const std::string kSpill = "_ZN48_GLOBAL__N__xxxxxxxx_15_spill_kernel_cu_b1130c7c13sgemm_blockedEiiifPKfS1_fPf";

} // namespace

TEST(KernelKey, MasksThePathDerivedHexOfAnAnonymousNamespace) {
  EXPECT_EQ(kernelKey("_ZN48_GLOBAL__N__7eea5e32_15_spill_kernel_cu_b1130c7c13sgemm_blockedEiiifPKfS1_fPf"), kSpill);
  EXPECT_EQ(kernelKey("_ZN48_GLOBAL__N__fbf5d4d7_15_spill_kernel_cu_b1130c7c13sgemm_blockedEiiifPKfS1_fPf"), kSpill);
  EXPECT_EQ(kernelKey("_Z5plainPf"), "_Z5plainPf");
  EXPECT_EQ(kernelKey("_INTERNAL_3a9f_12_x"), "_INTERNAL_xxxx_xx_x");
}

TEST(PtxDirectives, ReadsEachEntrysLaunchBounds) {
  std::string err;
  auto e = readPtxEntries(kPtx, err);
  ASSERT_EQ(err, "");
  ASSERT_EQ(e.size(), 3u); // the declaration has no body
  EXPECT_EQ(e[0].maxThreads, 256);
  EXPECT_EQ(e[0].minBlocks, 3);
  EXPECT_EQ(e[1].name, "_Z5plainPf");
  EXPECT_EQ(e[1].maxThreads, 0);
  EXPECT_EQ(e[2].name, "_Z6noargsv");
  EXPECT_EQ(e[2].maxThreads, 128);
}

TEST(PtxDirectives, ReplacesTheEntrysOwnDirectiveAndLeavesTheOthers) {
  PtxEdit ed = applyDirectives(kPtx, {{kSpill, "minnctapersm", 2, ""}, {"_Z5plainPf", "maxnreg", 64, ""}});
  ASSERT_EQ(ed.error, "");
  EXPECT_EQ(ed.ptx.find(".minnctapersm 3"), std::string::npos);
  EXPECT_NE(ed.ptx.find(".maxntid 256, 1, 1\n.minnctapersm 2\n{"), std::string::npos) << ed.ptx;
  EXPECT_NE(ed.ptx.find("_Z5plainPf_param_0\n)\n.maxnreg 64\n{"), std::string::npos) << ed.ptx;
  ASSERT_EQ(ed.outcomes.size(), 2u);
  EXPECT_EQ(ed.outcomes[0].status, "applied");
  std::string err;
  auto again = readPtxEntries(ed.ptx, err);
  EXPECT_EQ(again[0].minBlocks, 2);
  EXPECT_EQ(again[1].maxnreg, 64);
  EXPECT_EQ(again[2].maxThreads, 128); // untouched
}

TEST(PtxDirectives, MinBlocksNeedsLaunchBoundsAndSmemSpillingGoesInTheBody) {
  PtxEdit ed = applyDirectives(kPtx, {{"_Z5plainPf", "minnctapersm", 2, ""}, {kSpill, "smem_spilling", 1, ""}});
  ASSERT_EQ(ed.outcomes.size(), 2u);
  EXPECT_EQ(ed.outcomes[0].status, "applied");      // kSpill comes first in the PTX
  EXPECT_EQ(ed.outcomes[1].status, "not_applicable");
  EXPECT_NE(ed.outcomes[1].note.find("__launch_bounds__"), std::string::npos);
  EXPECT_NE(ed.ptx.find("{\n.pragma \"enable_smem_spilling\";"), std::string::npos);
  EXPECT_EQ(ed.ptx.find("_Z5plainPf_param_0\n)\n.minnctapersm"), std::string::npos);
}

TEST(PtxDirectives, AKernelNotInThisPtxGetsNoOutcome) {
  PtxEdit ed = applyDirectives(kPtx, {{"_Z9elsewherev", "maxnreg", 32, ""}});
  EXPECT_TRUE(ed.outcomes.empty());
  EXPECT_EQ(ed.ptx, kPtx);
}

TEST(PtxDirectives, AHeaderThatDoesNotParseIsAnError) {
  PtxEdit ed = applyDirectives(".entry _Z1fv(\n .param .u32 a\n", {{"_Z1fv", "maxnreg", 32, ""}});
  EXPECT_NE(ed.error.find("_Z1fv"), std::string::npos);
  EXPECT_TRUE(ed.outcomes.empty());
}

TEST(PtxDirectives, RegisterCeilingFollowsPtxasAllocation) {
  EXPECT_EQ(registerCeiling({"k", "minnctapersm", 3, ""}, 256), 80);   // ptxas 13.0: 80 registers
  EXPECT_EQ(registerCeiling({"k", "minnctapersm", 2, ""}, 256), 128);
  EXPECT_EQ(registerCeiling({"k", "minnctapersm", 1, ""}, 128), 255);
  EXPECT_EQ(registerCeiling({"k", "maxnreg", 40, ""}, 0), 40);
  EXPECT_EQ(registerCeiling({"k", "smem_spilling", 1, ""}, 256), 0);
}

TEST(PtxDirectives, PtxasUsingMoreRegistersThanTheCapMeansIgnored) {
  std::vector<DirectiveOutcome> o = {{kSpill, "sm_90", "minnctapersm", 3, "applied", ""},
                                     {"_Z5plainPf", "sm_90", "maxnreg", 32, "applied", ""}};
  KernelStats a, b;
  a.name = "_ZN48_GLOBAL__N__7eea5e32_15_spill_kernel_cu_b1130c7c13sgemm_blockedEiiifPKfS1_fPf";
  a.arch = "sm_90";
  a.registers = 80;
  a.usageKnown = true;
  b.name = "_Z5plainPf";
  b.arch = "sm_90";
  b.registers = 40;
  b.usageKnown = true;
  std::string err;
  checkDirectives(o, {a, b}, readPtxEntries(kPtx, err));
  EXPECT_EQ(o[0].status, "applied");
  EXPECT_EQ(o[1].status, "ignored");
  EXPECT_NE(o[1].note.find("40 registers"), std::string::npos);
}

TEST(KernelSpace, LabelsAreShortDemangledNames) {
  EXPECT_EQ(kernelLabel("(anonymous namespace)::sgemm_blocked(int, int, int, float, float const*)", "m"),
            "sgemm_blocked");
  EXPECT_EQ(kernelLabel("void tile<64, (anonymous namespace)::Op>(float*)", "m"), "tile<64,_(anonymous_namespace)::Op>");
  EXPECT_EQ(kernelLabel("ns::C<int>::run(float*)", "m"), "run");
  EXPECT_EQ(kernelLabel("", "_Z1fv"), "_Z1fv");
}

namespace {

KernelStats stat(const std::string &name, const std::string &demangled, int regs, long spill, int threads, int blocks) {
  KernelStats k;
  k.name = name;
  k.demangled = demangled;
  k.arch = "sm_90";
  k.registers = regs;
  k.spillStores = spill;
  k.usageKnown = k.frameKnown = true;
  k.ptxKnown = true;
  k.ptxMaxThreads = threads;
  k.ptxMinBlocks = blocks;
  return k;
}

} // namespace

TEST(KernelSpace, ControlsFollowWhatEachKernelCanTake) {
  auto kernels = spaceKernels({stat("_Z4spillv", "spill()", 80, 888, 256, 3), stat("_Z5smallv", "small()", 24, 0, 0, 0)});
  KernelControlsConfig cfg;
  auto kc = kernelControlsFor(cfg, kernels);
  ASSERT_EQ(kc.error, "");
  std::vector<std::string> names;
  for (const auto &c : kc.controls)
    names.push_back(c.name);
  // The small kernel uses fewer registers than any ceiling and has no
  // __launch_bounds__: nothing to tune.
  EXPECT_EQ(names, (std::vector<std::string>{"kernel.spill.maxnreg", "kernel.spill.minnctapersm",
                                             "kernel.spill.smem_spilling"}));
  // 256 threads: 1..8 blocks, without its own 3.
  EXPECT_EQ(kc.controls[1].values, (std::vector<std::string>{"1", "2", "4", "5", "6", "7", "8"}));
  Point p(kc.controls.size(), kUnset);
  SearchSpace s;
  s.controls = kc.controls;
  p[1] = 1;
  Rendered r = render(s, p);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].directive, "minnctapersm");
  EXPECT_EQ(r.kernels[0].value, 2);
  EXPECT_EQ(r.summary(), "kernel spill: .minnctapersm 2");
  EXPECT_NE(r.hash(), Rendered{}.hash());
}

TEST(KernelSpace, FilterAndLaunchedOrder) {
  auto kernels = spaceKernels({stat("_Z1av", "a()", 128, 0, 0, 0), stat("_Z1bv", "b()", 128, 0, 0, 0)});
  KernelControlsConfig cfg;
  cfg.kernels = "^zzz";
  cfg.origin = "ciq.yaml:3";
  auto none = kernelControlsFor(cfg, kernels);
  EXPECT_NE(none.error.find("matches none of the 2 kernels"), std::string::npos) << none.error;
  cfg.kernels = "(";
  EXPECT_NE(kernelControlsFor(cfg, kernels).error.find("not a regular expression"), std::string::npos);
  cfg.kernels = "";
  auto launched = kernelControlsFor(cfg, kernels, {"_Z1bv"});
  ASSERT_EQ(launched.controls.size(), 1u);
  EXPECT_EQ(launched.controls[0].name, "kernel.b.maxnreg");
  ASSERT_EQ(launched.notes.size(), 1u);
  EXPECT_NE(launched.notes[0].find("does not launch it"), std::string::npos);
}

TEST(KernelControlCheck, EveryDirectiveMustBeAppliedSomewhere) {
  Rendered r;
  r.kernels = {{"_Z1av", "maxnreg", 64, "a"}};
  Receipt none, applied, ignored;
  EXPECT_NE(kernelControlProblem(r, {none}).find("reached no compile"), std::string::npos);
  applied.directives = {{"_Z1av", "sm_90", "maxnreg", 64, "applied", ""}};
  EXPECT_EQ(kernelControlProblem(r, {none, applied}), "");
  ignored.source = "/src/a.cu";
  ignored.directives = {{"_Z1av", "sm_80", "maxnreg", 64, "ignored", "ptxas used 70 registers"}};
  std::string bad = kernelControlProblem(r, {applied, ignored});
  EXPECT_NE(bad.find("kernel a: .maxnreg 64 was ignored by ptxas (sm_80) compiling /src/a.cu"), std::string::npos) << bad;
}

TEST(KernelControlAttribution, PerKernelControlsAreTheirOwnGroup) {
  Rendered w;
  w.ptxas = {"--opt-level=1"};
  w.kernels = {{"_Z1av", "maxnreg", 64, "a"}};
  auto v = attributionVariants(w);
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[1].name, "compiler controls only");
  EXPECT_EQ(v[2].name, "per-kernel controls only");
  EXPECT_EQ(v[3].name, "compiler controls + per-kernel controls");
  Rendered k;
  k.kernels = w.kernels;
  auto one = attributionVariants(k);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[1].name, "per-kernel controls");
}

// Issue 48 item 5f: an entry whose header holds an entry-scope .pragma (its
// ';' is no declaration's) or a brace in a comment is still an entry, and
// takes its directive; item 3: what the body shows (setmaxnreg, dynamic
// shared memory) is read with it.
TEST(PtxDirectives, HeadersWithPragmasCommentsAndBodiesRead) {
  const char *ptx = R"(.version 9.0
.target sm_90a
.extern .shared .align 16 .b8 dyn_smem[];

.visible .entry _Z2wsPf(
	.param .u64 _Z2wsPf_param_0 // the output { not a body
)
.maxntid 384, 1, 1 /* three warp groups { */
.pragma "nounroll";
{
	setmaxnreg.inc.sync.aligned.u32 232;
	ret;
}

.visible .entry _Z3dynPf(
	.param .u64 _Z3dynPf_param_0
)
{
	mov.u64 %rd1, dyn_smem;
	ret;
}
.extern .entry _Z8declaredv(.param .u64 p) ;
)";
  std::string err;
  auto entries = readPtxEntries(ptx, err);
  ASSERT_EQ(err, "");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "_Z2wsPf");
  EXPECT_EQ(entries[0].maxThreads, 384);
  EXPECT_TRUE(entries[0].setmaxnreg);
  EXPECT_FALSE(entries[0].dynamicShared);
  EXPECT_FALSE(entries[1].setmaxnreg);
  EXPECT_TRUE(entries[1].dynamicShared);
  PtxEdit e = applyDirectives(ptx, {{"_Z2wsPf", "minnctapersm", 1, ""}});
  ASSERT_EQ(e.error, "");
  ASSERT_EQ(e.outcomes.size(), 1u);
  EXPECT_EQ(e.outcomes[0].status, "applied");
  EXPECT_NE(e.ptx.find(".pragma \"nounroll\";\n.minnctapersm 1\n{"), std::string::npos) << e.ptx;
}

namespace {

std::vector<std::string> controlNames(const KernelControls &kc) {
  std::vector<std::string> names;
  for (const auto &c : kc.controls)
    names.push_back(c.name);
  return names;
}

bool anyNote(const KernelControls &kc, const std::string &text) {
  for (const auto &n : kc.notes)
    if (n.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

// Issue 48 item 3: only directives that are safe and can apply.
TEST(KernelSpace, UnsafeOrUnwritableDirectivesLeftOutWithAReason) {
  KernelStats ws = stat("_Z2wsv", "ws()", 168, 64, 384, 1);
  ws.ptxSetmaxnreg = true;
  KernelStats capped = stat("_Z6cappedv", "capped()", 40, 96, 128, 0);
  capped.ptxMaxnreg = 40;   // __maxnreg__(40) in its source
  KernelStats dyn = stat("_Z3dynv", "dyn()", 80, 64, 256, 2);
  dyn.ptxDynamicShared = true;
  KernelStats rdc = stat("_Z3rdcv", "rdc()", 80, 64, 256, 2);
  rdc.relocatable = true;
  KernelStats onecall = stat("_Z7onecallv", "onecall()", 80, 64, 256, 2);
  onecall.splitProblem = "not a compile to an object (-c or -dc)";
  auto kc = kernelControlsFor(KernelControlsConfig{}, spaceKernels({ws, capped, dyn, rdc, onecall}));
  auto names = controlNames(kc);
  auto has = [&](const std::string &n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_FALSE(has("kernel.ws.maxnreg"));
  EXPECT_FALSE(has("kernel.ws.minnctapersm"));
  EXPECT_TRUE(anyNote(kc, "ws: no register ceiling or blocks-per-SM request: it reconfigures its registers with setmaxnreg"));
  // The capped kernel spills at its own 40: a lower ceiling, none above it.
  for (const auto &c : kc.controls)
    if (c.name == "kernel.capped.maxnreg")
      EXPECT_EQ(c.values, (std::vector<std::string>{"32"}));
  EXPECT_TRUE(anyNote(kc, "capped: no register ceiling above its own .maxnreg 40"));
  EXPECT_FALSE(has("kernel.dyn.smem_spilling"));
  EXPECT_TRUE(anyNote(kc, "dyn: no shared-memory spilling: it uses dynamic shared memory"));
  EXPECT_FALSE(has("kernel.rdc.smem_spilling"));
  EXPECT_TRUE(has("kernel.rdc.maxnreg"));
  EXPECT_TRUE(anyNote(kc, "rdc: no shared-memory spilling: it is compiled -rdc"));
  for (const auto &n : names)
    EXPECT_EQ(n.find("onecall"), std::string::npos) << n;
  EXPECT_TRUE(anyNote(kc, "none for 1 kernel(s) (onecall): their compile cannot be split for PTX edits (not a compile "
                          "to an object (-c or -dc))"));
}

// Issue 48 item 4: without kernel times, the project's own kernels first,
// most of the objective first, those left out named; a compile objective
// gets the directives that can improve it only.
TEST(KernelSpace, OwnKernelsFirstAndDirectivesThatCanHelp) {
  std::vector<KernelStats> ks;
  for (int i = 0; i < 4; ++i)
    ks.push_back(stat("_ZN3cub4Sort" + std::to_string(i) + "Ev", "void cub::CUB_300000_SM_900_NS::Sort" +
                      std::to_string(i) + "()", 128, 0, 0, 0));
  ks.push_back(stat("_Z6lookupv", "lookup()", 64, 0, 0, 0));
  ks.push_back(stat("_Z7lookup2v", "lookup2()", 96, 0, 0, 0));
  ks.push_back(stat("_Z7lookup3v", "lookup3()", 72, 0, 0, 0));
  ks.push_back(stat("_Z7lookup4v", "lookup4()", 48, 0, 0, 0));
  KernelControlsConfig cfg;
  cfg.maxKernels = 3;
  auto kc = kernelControlsFor(cfg, spaceKernels(ks));
  auto names = controlNames(kc);
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0], "kernel.lookup2.maxnreg");   // the project's, most registers first
  EXPECT_EQ(names[1], "kernel.lookup3.maxnreg");
  EXPECT_EQ(names[2], "kernel.lookup.maxnreg");
  EXPECT_TRUE(anyNote(kc, "the first 3 of 4 kernels"));
  EXPECT_TRUE(anyNote(kc, "left out: lookup4; choose others with kernel_controls.kernels"));
  // Issue 56 item 8: a library's kernels get none unless kernel_controls.kernels names them.
  for (const auto &n : names)
    EXPECT_EQ(n.find("Sort"), std::string::npos) << n;
  EXPECT_TRUE(anyNote(kc, "none for 4 CUB, Thrust or CUTLASS kernel(s) (Sort0, ...): a library's kernels are renamed "
                          "by its releases, so a lock keyed on one breaks; name them in kernel_controls.kernels"));
  cfg.kernels = "Sort1";
  auto named = controlNames(kernelControlsFor(cfg, spaceKernels(ks)));
  EXPECT_EQ(named, (std::vector<std::string>{"kernel.Sort1.maxnreg"}));
  EXPECT_TRUE(libraryKernel("void thrust::cuda_cub::core::_kernel_agent<int>()"));
  EXPECT_FALSE(libraryKernel("(anonymous namespace)::sgemm_blocked(int)"));

  // Spill bytes: a lower ceiling only adds spills, more blocks per SM too.
  auto spill = stat("_Z4spillv", "spill()", 80, 888, 256, 3);
  cfg = KernelControlsConfig{};
  cfg.objective = "spill_bytes";
  auto s = kernelControlsFor(cfg, spaceKernels({spill}));
  ASSERT_EQ(s.controls.size(), 3u);
  EXPECT_EQ(s.controls[0].values, (std::vector<std::string>{"96", "128", "168", "255"}));
  EXPECT_EQ(s.controls[1].values, (std::vector<std::string>{"1", "2"}));
  // Registers: lower ceilings and more blocks per SM, no shared-memory spilling.
  cfg.objective = "registers";
  auto r = kernelControlsFor(cfg, spaceKernels({spill}));
  EXPECT_EQ(controlNames(r), (std::vector<std::string>{"kernel.spill.maxnreg", "kernel.spill.minnctapersm"}));
  EXPECT_EQ(r.controls[0].values, (std::vector<std::string>{"32", "40", "48", "56", "64", "72"}));
  EXPECT_EQ(r.controls[1].values, (std::vector<std::string>{"4", "5", "6", "7", "8"}));
}

// Issue 56 item 8: under a spill objective, kernels that spill nothing take
// no place among max_kernels (one line says why), and a chosen kernel that
// no directive can help says so instead of nothing.
TEST(KernelSpace, EveryKernelWithoutControlsHasAReason) {
  std::vector<KernelStats> ks;
  for (int i = 0; i < 10; ++i)
    ks.push_back(stat("_Z4zerov" + std::to_string(i), "zero" + std::to_string(i) + "()", 40, 0, 256, 0));
  ks.push_back(stat("_Z5spillv", "spill()", 80, 888, 256, 3));
  KernelControlsConfig cfg;
  cfg.objective = "spill_bytes";
  cfg.maxKernels = 8;
  auto kc = kernelControlsFor(cfg, spaceKernels(ks));
  auto names = controlNames(kc);
  ASSERT_FALSE(names.empty());
  for (const auto &n : names)
    EXPECT_EQ(n.rfind("kernel.spill.", 0), 0u) << n;
  EXPECT_TRUE(anyNote(kc, "none for 10 kernel(s) (zero0, ...): they spill nothing, so no directive can lower "
                          "spill_bytes there"));
  EXPECT_FALSE(anyNote(kc, "the first 8"));

  // Nothing spills: every kernel is chosen, and each that gets no directive says why.
  KernelStats flat = stat("_Z4flatv", "flat()", 40, 0, 0, 0);
  auto none = kernelControlsFor(cfg, spaceKernels({flat}));
  EXPECT_TRUE(none.controls.empty());
  EXPECT_TRUE(anyNote(none, "none for flat: no directive of kernel_controls.directives (maxnreg, minnctapersm, "
                            "smem_spilling) can improve spill_bytes there (40 registers, 0 spill bytes, no "
                            "__launch_bounds__)"));
}
