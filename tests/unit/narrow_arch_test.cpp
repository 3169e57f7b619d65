// wrapper/NarrowArch.h: every spelling of a GPU target option is replaced by
// one --generate-code for the tuned architecture, and nvcc (parsed the way
// ciq-ptxas parses it) then compiles SASS for that architecture only.
#include "scratch.h"
#include "common/CommandLine.h"
#include "wrapper/NarrowArch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace ciq::wrapper;

namespace {
std::vector<std::string> narrowed(const std::vector<std::string> &args, const std::string &sm = "sm_90") {
  std::vector<std::string> out;
  std::string err;
  EXPECT_TRUE(narrowNvccArgs(args, sm, "/tmp", out, err)) << err;
  return out;
}
std::vector<std::string> sass(const std::vector<std::string> &args) {
  return parseNvcc(args, "", "", "/tmp").sassArchs();
}
} // namespace

TEST(NarrowArch, EverySpellingOfATargetBecomesOneGencode) {
  std::vector<std::string> nine = {"-c", "k.cu", "-o", "k.o"};
  for (int a : {50, 52, 60, 61, 70, 75, 80, 86})
    nine.insert(nine.end(), {"-gencode", "arch=compute_" + std::to_string(a) + ",code=sm_" + std::to_string(a)});
  nine.push_back("--generate-code=arch=compute_90,code=[compute_90,sm_90]");
  EXPECT_EQ(sass(nine).size(), 9u);
  auto out = narrowed(nine);
  EXPECT_EQ(out, (std::vector<std::string>{"-c", "k.cu", "-o", "k.o", "--generate-code=arch=compute_90,code=sm_90"}));
  EXPECT_EQ(sass(out), std::vector<std::string>{"sm_90"});

  EXPECT_EQ(narrowed({"-arch", "sm_86", "-c", "k.cu"}),
            (std::vector<std::string>{"-c", "k.cu", "--generate-code=arch=compute_90,code=sm_90"}));
  EXPECT_EQ(narrowed({"--gpu-architecture=compute_80", "--gpu-code=sm_80,sm_86", "-c", "k.cu"}),
            (std::vector<std::string>{"-c", "k.cu", "--generate-code=arch=compute_90,code=sm_90"}));
  EXPECT_EQ(sass(narrowed({"-arch=native", "-c", "k.cu"}, "sm_90a")), std::vector<std::string>{"sm_90a"});
  // Other options are left exactly as written.
  EXPECT_EQ(narrowed({"-Xptxas", "-O3", "-arch=sm_80", "-DX=1", "-c", "k.cu"}),
            (std::vector<std::string>{"-Xptxas", "-O3", "-DX=1", "-c", "k.cu",
                                      "--generate-code=arch=compute_90,code=sm_90"}));
}

TEST(NarrowArch, OptionsFileIsRewrittenInPlace) {
  ciq::test::Scratch optf("ciq-narrow-optf", "txt");
  const std::string &f = optf.path();
  std::ofstream(f) << "-gencode arch=compute_80,code=sm_80 -lineinfo\n";
  auto out = narrowed({"--options-file", f, "-c", "k.cu"});
  EXPECT_EQ(out, (std::vector<std::string>{"-lineinfo", "-c", "k.cu", "--generate-code=arch=compute_90,code=sm_90"}));
}

TEST(NarrowArch, RefusesWhatItCannotRewrite) {
  std::vector<std::string> out;
  std::string err;
  setenv("NVCC_APPEND_FLAGS", "-arch=sm_80", 1);
  EXPECT_FALSE(narrowNvccArgs({"-c", "k.cu"}, "sm_90", "/tmp", out, err));
  unsetenv("NVCC_APPEND_FLAGS");
  EXPECT_EQ(err, "narrow_architectures: '-arch=sm_80' in NVCC_APPEND_FLAGS cannot be narrowed to sm_90; move it to "
                 "the build's flags, or tune without narrow_architectures");
  EXPECT_FALSE(narrowNvccArgs({"-c", "k.cu"}, "compute_90", "/tmp", out, err));
  EXPECT_EQ(err, "narrow_architectures: 'compute_90' is not an SASS architecture like sm_90");
}

// Issue 50 item 5: CUDA_ARCHITECTURES all-major (all, native) reaches the
// compile line as -arch=all-major; the architecture warnings read it as the
// architectures nvcc expands it to, not as one named "all-major".
#include "engine/compile/Architectures.h"

TEST(ArchitectureWarnings, MetaArchitecturesCoverTheMeasuredOne) {
  ciq::MeasuredArchitecture m{"sm_90", "the GPU (H100, compute capability 9.0)"};
  for (const char *meta : {"all-major", "all", "native"}) {
    auto built = parseNvcc({std::string("-arch=") + meta, "-c", "a.cu", "-o", "a.o"}, "", "", "/").sassArchs();
    ASSERT_EQ(built, std::vector<std::string>{meta});
    EXPECT_TRUE(ciq::coversArchitecture(built, "sm_90")) << meta;
    EXPECT_EQ(ciq::jitOnlyProblem(m, built, "ciq.yaml"), "") << meta;
    for (const auto &w : ciq::architectureWarnings(m, built, false, "ciq.yaml"))
      EXPECT_EQ(w.find("but not for"), std::string::npos) << meta << ": " << w;
  }
  // Issue 56 item 7: all-major compiles sm_80 (sm_75, sm_90, ..., sm_120):
  // an sm_86 or sm_89 GPU runs the sm_80 SASS, an sm_121 the sm_120 SASS; no
  // JIT, no warning. A GPU newer than any major nvcc knows runs PTX.
  for (const char *gpu : {"sm_75", "sm_86", "sm_89", "sm_90", "sm_103", "sm_121"}) {
    EXPECT_TRUE(ciq::coversArchitecture({"all-major"}, gpu)) << gpu;
    EXPECT_EQ(ciq::jitOnlyProblem({gpu, "the GPU"}, {"all-major"}, "ciq.yaml"), "") << gpu;
  }
  EXPECT_FALSE(ciq::coversArchitecture({"all-major"}, "sm_130"));
  EXPECT_NE(ciq::jitOnlyProblem({"sm_130", "the GPU"}, {"all-major"}, "ciq.yaml"), "");
  // The same rule for a list: SASS of a lower minor of the same major runs;
  // a higher minor, another major or arch-specific SASS (sm_90a) does not.
  EXPECT_TRUE(ciq::coversArchitecture({"sm_80"}, "sm_86"));
  EXPECT_FALSE(ciq::coversArchitecture({"sm_86"}, "sm_80"));
  EXPECT_FALSE(ciq::coversArchitecture({"sm_80"}, "sm_90"));
  EXPECT_FALSE(ciq::coversArchitecture({"sm_90a"}, "sm_91"));
  EXPECT_TRUE(ciq::coversArchitecture({"sm_90a"}, "sm_90a"));
  EXPECT_NE(ciq::jitOnlyProblem({"sm_90", "the GPU"}, {"sm_80"}, "ciq.yaml"), "");
  // Each candidate compiles every architecture: the narrowing advice stays.
  auto w = ciq::architectureWarnings(m, {"all-major"}, false, "ciq.yaml");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("every major architecture nvcc supports"), std::string::npos) << w[0];
  EXPECT_TRUE(ciq::architectureWarnings(m, {"all-major"}, true, "ciq.yaml").empty());
}
