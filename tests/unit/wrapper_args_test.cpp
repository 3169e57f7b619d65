// The wrapper's argument model (nvcc/ptxas grammar), injection rules and the
// ptxas -v parser. Expectations about nvcc behaviour were checked against
// `nvcc --dryrun` of CUDA 13.0.
#include "scratch.h"
#include "common/CommandLine.h"
#include "wrapper/Inject.h"
#include "wrapper/PtxasStats.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace ciq;
using namespace ciq::wrapper;

namespace {
NvccCommand nvcc(std::vector<std::string> argv, std::string prepend = "", std::string append = "") {
  return parseNvcc(argv, prepend, append, "/tmp");
}
std::vector<std::string> names(const NvccCommand &c) {
  std::vector<std::string> out;
  for (const auto &o : c.ptxasOptions)
    out.push_back(o.opt.name + (o.opt.hasValue ? "=" + o.opt.value : ""));
  return out;
}
CandidateMessage cand(std::vector<std::string> ptxas, std::vector<std::string> defines = {}) {
  CandidateMessage c;
  c.candidateId = "c0001";
  c.ptxasOptions = ptxas;
  c.defines = defines;
  return c;
}
} // namespace

TEST(WrapperArgs, NvccListSplittingHonoursEscapes) {
  EXPECT_EQ(splitNvccList("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(splitNvccList("a\\,b"), (std::vector<std::string>{"a,b"}));
  EXPECT_EQ(splitNvccList("a\\\\b"), (std::vector<std::string>{"a\\b"}));
  for (std::string s : {"--apply-controls=/x,y/z.acf", "a\\b,c", "plain", "é;x y"})
    EXPECT_EQ(splitNvccList(escapeNvccListItem(s)), std::vector<std::string>{s});
}

TEST(WrapperArgs, PtxasOptionFormsAllParse) {
  auto c = nvcc({"-c", "k.cu", "-Xptxas", "-v,-O3", "-Xptxas=--maxrregcount=40",
                 "--ptxas-options=--def-load-cache,ca", "--ptxas-options", "-warn-spills"});
  EXPECT_EQ(names(c), (std::vector<std::string>{"verbose", "opt-level=3", "maxrregcount=40",
                                                "def-load-cache=ca", "warn-on-spills"}));
  EXPECT_TRUE(c.userAskedPtxasVerbose);
  EXPECT_TRUE(c.ptxasRuns);
}

TEST(WrapperArgs, PtxasValueAcrossSeparateXptxas) {
  auto c = nvcc({"-c", "k.cu", "-Xptxas", "--maxrregcount", "-Xptxas", "32"});
  EXPECT_EQ(names(c), (std::vector<std::string>{"maxrregcount=32"}));
}

TEST(WrapperArgs, ResourceUsageCountsAsVerbose) {
  EXPECT_TRUE(nvcc({"-c", "k.cu", "--resource-usage"}).userAskedPtxasVerbose);
  EXPECT_FALSE(nvcc({"-c", "k.cu"}).userAskedPtxasVerbose);
}

TEST(WrapperArgs, Targets) {
  auto c = nvcc({"-c", "k.cu", "-gencode", "arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                 "--generate-code=arch=compute_90a,code=sm_90a"});
  EXPECT_EQ(c.sassArchs(), (std::vector<std::string>{"sm_80", "sm_90", "sm_90a"}));
  EXPECT_EQ(nvcc({"-c", "k.cu", "-arch=sm_90a"}).sassArchs(), std::vector<std::string>{"sm_90a"});
  EXPECT_EQ(nvcc({"-c", "k.cu", "-arch", "compute_90", "-code", "sm_90,compute_90"}).sassArchs(),
            std::vector<std::string>{"sm_90"});
  EXPECT_EQ(nvcc({"-c", "k.cu"}).sassArchs(), std::vector<std::string>{"sm_75"}); // nvcc 13.0's default
}

TEST(WrapperArgs, InvocationsWherePtxasProducesNoSass) {
  for (auto argv : std::vector<std::vector<std::string>>{
           {"-E", "k.cu"},
           {"-M", "k.cu"},
           {"--generate-dependencies", "k.cu"},
           {"--dryrun", "-c", "k.cu"},
           {"-ptx", "k.cu"},
           {"--version"},
           {"-c", "k.cu", "-arch=compute_90"},
           {"-c", "k.cu", "-gencode", "arch=compute_90,code=compute_90"},
           {"-c", "k.cu", "-gencode", "arch=compute_90,code=lto_90"},
           {"-dlink", "a.o", "b.o", "-o", "dlink.o", "-arch=sm_90"},
           {"-c", "host.cpp"},
           {"a.o", "b.o", "-o", "app"},
       }) {
    auto c = nvcc(argv);
    EXPECT_FALSE(c.ptxasRuns) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "");
  }
  EXPECT_TRUE(nvcc({"-c", "k.cu", "-MD", "-MF", "k.d", "-arch=sm_90"}).ptxasRuns);
  EXPECT_TRUE(nvcc({"-x", "cu", "-c", "host.cpp"}).ptxasRuns);
  EXPECT_TRUE(nvcc({"-dc", "-rdc=true", "k.cu", "-arch=sm_90"}).ptxasRuns);
  EXPECT_TRUE(nvcc({"-dlink", "-dlto", "a.o", "-arch=sm_90", "-o", "d.o"}).ptxasRuns);
}

TEST(WrapperArgs, ValueOptionsAreNotInputs) {
  auto c = nvcc({"-ccbin", "/usr/bin/g++", "-x", "cu", "-o", "out dir/k.o", "-c", "src/k.cu", "-I", "inc",
                 "-MF", "k.d", "-std", "c++17"});
  EXPECT_EQ(c.inputs, std::vector<std::string>{"src/k.cu"});
  EXPECT_EQ(c.output, "out dir/k.o");
  EXPECT_EQ(c.source(), "src/k.cu");
}

TEST(WrapperArgs, OptionsFileIsExpandedForReadingOnly) {
  ciq::test::Scratch optf("ciq-optf", "txt");
  const std::string &f = optf.path();
  std::ofstream(f) << "-arch=sm_90 \"-DNAME=a b\"\n-Xptxas -O1\n";
  auto c = nvcc({"-c", "k.cu", "--options-file", f});
  EXPECT_EQ(c.sassArchs(), std::vector<std::string>{"sm_90"});
  EXPECT_EQ(names(c), std::vector<std::string>{"opt-level=1"});
  EXPECT_EQ(c.ptxasOptions[0].origin, Origin::OptionsFile);
  // Untouched, it renders as the user wrote it.
  EXPECT_EQ(renderArgs(c.args, true), (std::vector<std::string>{"-c", "k.cu", "--options-file", f}));
  std::remove(f.c_str());
}

TEST(WrapperArgs, MissingOptionsFileIsAnError) {
  auto c = nvcc({"-c", "k.cu", "-optf", "/nonexistent/opts"});
  EXPECT_NE(c.error.find("/nonexistent/opts"), std::string::npos);
}

TEST(WrapperArgs, EnvFlagsAreRead) {
  auto c = nvcc({"-c", "k.cu"}, "-Xptxas -O1", "-arch=sm_90");
  EXPECT_EQ(c.sassArchs(), std::vector<std::string>{"sm_90"});
  ASSERT_EQ(c.ptxasOptions.size(), 1u);
  EXPECT_EQ(c.ptxasOptions[0].origin, Origin::PrependEnv);
}

TEST(WrapperArgs, AtFileIsAnInputAsForNvcc) {
  auto c = nvcc({"-c", "@args.rsp"});
  EXPECT_EQ(c.inputs, std::vector<std::string>{"@args.rsp"});
}

TEST(WrapperInject, AppendsCandidateUnchangedUserArgs) {
  auto c = nvcc({"-c", "k k.cu", "-DX=1;2", "-Xptxas", "-warn-spills"});
  auto inj = injectNvcc(c, cand({"--opt-level=2"}, {"T=a,b"}), {"nvcc"}, true);
  EXPECT_EQ(inj.argv, (std::vector<std::string>{"nvcc", "-c", "k k.cu", "-DX=1;2", "-Xptxas", "-warn-spills",
                                                "-DT=a\\,b", "-Xptxas", "--opt-level=2", "-Xptxas", "-v"}));
  EXPECT_TRUE(inj.addedVerbose);
  EXPECT_TRUE(inj.overridden.empty());
}

TEST(WrapperInject, CandidateWinsOverUserOption) {
  auto c = nvcc({"-c", "k.cu", "-Xptxas", "-v,-O3,-warn-spills", "-maxrregcount=64", "-DT=1,U=2"});
  auto inj = injectNvcc(c, cand({"--opt-level=2", "--maxrregcount=32"}, {"T=4"}), {"nvcc"}, true);
  EXPECT_EQ(inj.argv, (std::vector<std::string>{"nvcc", "-c", "k.cu", "-Xptxas", "-v,-warn-spills", "-DU=2",
                                                "-DT=4", "-Xptxas", "--opt-level=2", "-Xptxas",
                                                "--maxrregcount=32"}));
  EXPECT_FALSE(inj.addedVerbose); // the user asked for -v: nothing to filter
  EXPECT_EQ(inj.overridden, (std::vector<std::string>{"-Xptxas -O3", "-maxrregcount=64", "-DT=1"}));
}

TEST(WrapperInject, ConflictInOptionsFileExpandsIt) {
  ciq::test::Scratch optf("ciq-optf", "txt");
  const std::string &f = optf.path();
  std::ofstream(f) << "-arch=sm_90 -Xptxas -O1";
  auto c = nvcc({"-c", "k.cu", "-optf", f});
  auto inj = injectNvcc(c, cand({"-O2"}), {"nvcc"}, false);
  EXPECT_EQ(inj.argv, (std::vector<std::string>{"nvcc", "-c", "k.cu", "-arch=sm_90", "-Xptxas", "-O2"}));
}

TEST(WrapperInject, ConflictInEnvIsAnError) {
  auto c = nvcc({"-c", "k.cu"}, "", "-Xptxas -O1");
  auto inj = injectNvcc(c, cand({"--opt-level=2"}), {"nvcc"}, true);
  EXPECT_NE(inj.error.find("NVCC_APPEND_FLAGS"), std::string::npos);
  EXPECT_TRUE(inj.argv.empty());
}

TEST(WrapperInject, AcfPathWithCommaSurvives) {
  auto c = nvcc({"-c", "k.cu"});
  auto cm = cand({});
  cm.acfs.push_back({"ptxas", "/a,b/x.acf", "00"});
  auto inj = injectNvcc(c, cm, {"nvcc"}, false);
  ASSERT_GE(inj.argv.size(), 2u);
  EXPECT_EQ(inj.argv.back(), "--apply-controls=/a\\,b/x.acf");
  EXPECT_EQ(splitNvccList(inj.argv.back()), std::vector<std::string>{"--apply-controls=/a,b/x.acf"});
}

TEST(WrapperInject, PtxasStandin) {
  auto p = parsePtxas({"-arch=sm_90", "-O3", "k.ptx", "-o", "k.cubin"}, "/tmp");
  EXPECT_TRUE(p.ptxasRuns);
  EXPECT_EQ(p.output, "k.cubin");
  auto cm = cand({"--opt-level=1"}, {"X=1"});
  cm.acfs.push_back({"ptxas", "/r/acf/ab.acf", "ab"});
  auto inj = injectPtxas(p, cm, {"/cuda/ptxas"}, true);
  EXPECT_EQ(inj.argv, (std::vector<std::string>{"/cuda/ptxas", "-arch=sm_90", "k.ptx", "-o", "k.cubin",
                                                "--opt-level=1", "--apply-controls", "/r/acf/ab.acf", "-v"}));
  EXPECT_EQ(inj.overridden, std::vector<std::string>{"-O3"});
  EXPECT_EQ(inj.skipped.size(), 1u); // the define cannot reach ptxas
  EXPECT_TRUE(parsePtxas({"--version"}, "/tmp").versionQuery);
  EXPECT_FALSE(parsePtxas({"-arch=compute_90", "k.ptx"}, "/tmp").ptxasRuns);
}

TEST(WrapperStats, ParsesMultiArchReport) {
  const char *text =
      "ptxas info    : 0 bytes gmem, 256 bytes cmem[3]\n"
      "ptxas info    : Compiling entry function '_Z5heavyPfPKf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Function properties for _Z5heavyPfPKf\n"
      "    256 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 128 bytes smem, 368 bytes cmem[0], 8 bytes cmem[2]\n"
      "ptxas info    : Compile time = 26.874 ms\n"
      "ptxas warning : something the user sees\n"
      "ptxas info    : Compiling entry function 'plain' for 'sm_90'\n"
      "ptxas info    : Function properties for plain\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n";
  auto k = parsePtxasVerbose(text);
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].name, "_Z5heavyPfPKf");
  EXPECT_EQ(k[0].demangled, "heavy(float*, float const*)");
  EXPECT_EQ(k[0].arch, "sm_80");
  EXPECT_EQ(k[0].registers, 32);
  EXPECT_EQ(k[0].barriers, 1);
  EXPECT_EQ(k[0].stackFrame, 256);
  EXPECT_EQ(k[0].spillStores, 12);
  EXPECT_EQ(k[0].spillLoads, 16);
  EXPECT_EQ(k[0].sharedBytes, 128);
  EXPECT_EQ(k[0].constantBytes, 376);
  EXPECT_DOUBLE_EQ(k[0].compileMs, 26.874);
  // The device function is recorded for the architecture it was compiled for.
  EXPECT_EQ(k[1].name, "_Z6helperv");
  EXPECT_FALSE(k[1].entry);
  EXPECT_EQ(k[1].arch, "sm_80");
  EXPECT_EQ(k[1].spillStores, 4);
  EXPECT_EQ(k[2].name, "plain");
  EXPECT_EQ(k[2].demangled, "");
  EXPECT_EQ(k[2].arch, "sm_90");
  EXPECT_EQ(k[2].registers, 8);
  EXPECT_EQ(stripPtxasVerbose(text), "ptxas warning : something the user sees\n");
}

// Issue 12, case 10: a __noinline__ device function that spills (ptxas 13.0's
// own report of examples like tests/lit/wrapper/Inputs/helper-spill.cu): its
// spills are recorded, per architecture, and count in spill_bytes.
TEST(PtxasStats, DeviceFunctionSpillsAreRecordedPerArch) {
  const char *text =
      "ptxas info    : Compiling entry function '_Z1kPfi' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1kPfi\n"
      "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers, 712 bytes cumulative stack size\n"
      "ptxas info    : Function properties for _Z6helperPfi\n"
      "    0 bytes stack frame, 1024 bytes spill stores, 1152 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z1kPfi' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z1kPfi\n"
      "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 0 barriers\n"
      "ptxas info    : Function properties for _Z6helperPfi\n"
      "    16 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n";
  auto k = parsePtxasVerbose(text);
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k[1].name, "_Z6helperPfi");
  EXPECT_EQ(k[1].demangled, "helper(float*, int)");
  EXPECT_EQ(k[1].arch, "sm_90");
  EXPECT_FALSE(k[1].entry);
  EXPECT_TRUE(k[1].frameKnown);
  EXPECT_FALSE(k[1].usageKnown);
  EXPECT_EQ(k[1].spillStores + k[1].spillLoads, 2176);
  EXPECT_EQ(k[3].arch, "sm_80");
  EXPECT_EQ(k[3].stackFrame, 16);
  EXPECT_EQ(k[2].registers, 24); // the second entry's Used line is its own
}

// Issue 12, case 11: a report without the properties (or Used) line leaves
// those statistics unknown, not 0; no report at all means ptxas did not run.
TEST(PtxasStats, MissingLinesAreUnknownNotZero) {
  auto k = parsePtxasVerbose("ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                             "ptxas info    : Used 12 registers, used 0 barriers\n");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_FALSE(k[0].frameKnown);
  EXPECT_TRUE(k[0].usageKnown);
  auto none = parsePtxasVerbose("ptxas info    : Compiling entry function 'k' for 'sm_90'\n");
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].usageKnown);
  EXPECT_TRUE(ptxasReported("ptxas info    : 0 bytes gmem\n"));
  EXPECT_FALSE(ptxasReported("nvcc warning : something else\n"));
}

TEST(PtxasStats, StripRemovesOnlyWholeReportLines) {
  // Near misses are the user's (or another tool's) text and stay.
  const char *text = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\r\n"
                     "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads (more)\n"
                     "0 bytes stack frame, 0 bytes spill stores\n"
                     "ptxas info: not the report's prefix\n"
                     "last line without newline";
  EXPECT_EQ(stripPtxasVerbose(text),
            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads (more)\n"
            "0 bytes stack frame, 0 bytes spill stores\n"
            "ptxas info: not the report's prefix\n"
            "last line without newline");
}
