// common/DeviceCode.h against the real nvcc: compressed device code (nvcc 13
// compresses -rdc cubins and every -compress-mode but none) hashes as the SASS
// it holds, so spellings of the same compile agree and real changes differ.
#include "common/DeviceCode.h"
#include "common/Subprocess.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

#include <fstream>

using namespace ciq;

namespace {

// Big enough that every compress mode, LZ4 included, has something to compress.
const char *kKernel = R"(
__global__ void big(float *a, int n) {
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < 64; ++j) acc += __sinf(a[(threadIdx.x * 7 + j) % n]) * j;
  a[threadIdx.x] = acc;
}
)";

class DeviceCodeTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> p;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ciq-devcode", p));
    dir_ = p.str().str();
    std::ofstream(dir_ + "/k.cu") << kKernel;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  // nvcc <args> k.cu -o <out>; returns the output's device code.
  DeviceCode compile(std::vector<std::string> args, const std::string &out) {
    std::vector<std::string> argv{CIQ_TEST_NVCC};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {dir_ + "/k.cu", "-o", dir_ + "/" + out});
    auto r = runSubprocess(argv);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::string err;
    auto dc = readDeviceCode(dir_ + "/" + out, err);
    EXPECT_TRUE(dc) << err;
    return dc ? *dc : DeviceCode{};
  }

  std::string dir_;
};

} // namespace

TEST_F(DeviceCodeTest, RdcObjectHashesItsSassNotThePtxasCommandLine) {
  auto plain = compile({"-rdc=true", "-arch=sm_90", "-c"}, "a.o");
  auto verbose = compile({"-rdc=true", "-arch=sm_90", "-c", "-Xptxas", "-v"}, "b.o");
  EXPECT_EQ(plain.section, "__nv_relfatbin cubins");
  EXPECT_EQ(plain.sha256, verbose.sha256);
  // A real change of the code still changes the hash.
  auto capped = compile({"-rdc=true", "-arch=sm_90", "-c", "-maxrregcount=16"}, "c.o");
  EXPECT_NE(plain.sha256, capped.sha256);
}

TEST_F(DeviceCodeTest, EveryCompressModeHashesTheSameSass) {
  auto none = compile({"-arch=sm_90", "-c", "-compress-mode=none"}, "none.o");
  EXPECT_EQ(none.section, ".nv_fatbin cubins");
  for (const char *mode : {"size", "speed", "balance"}) {
    auto dc = compile({"-arch=sm_90", "-c", std::string("-compress-mode=") + mode, "-Xptxas", "-v"},
                      std::string(mode) + ".o");
    EXPECT_EQ(dc.section, ".nv_fatbin cubins") << mode;
    EXPECT_EQ(dc.sha256, none.sha256) << mode;
  }
  // The same for fatbin files (-fatbin) and relocatable ones.
  EXPECT_EQ(compile({"-arch=sm_90", "-fatbin", "-compress-mode=size"}, "s.fatbin").sha256,
            compile({"-arch=sm_90", "-fatbin", "-compress-mode=none", "-Xptxas", "-v"}, "n.fatbin").sha256);
}

TEST_F(DeviceCodeTest, MultiArchitectureRdcFatbin) {
  std::vector<std::string> two{"-rdc=true", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
                               "arch=compute_90,code=[sm_90,compute_90]", "-fatbin"};
  auto a = compile(two, "a.fatbin");
  two.insert(two.end(), {"-Xptxas", "-v"});
  auto b = compile(two, "b.fatbin");
  EXPECT_EQ(a.section, "file cubins");
  EXPECT_EQ(a.sha256, b.sha256);
  // Both architectures count: sm_90 alone is other device code.
  EXPECT_NE(a.sha256, compile({"-rdc=true", "-arch=sm_90", "-fatbin"}, "c.fatbin").sha256);
}

TEST_F(DeviceCodeTest, DamagedCompressedEntryIsAnErrorNotAHash) {
  compile({"-arch=sm_90", "-fatbin", "-compress-mode=size"}, "s.fatbin");
  std::string path = dir_ + "/s.fatbin";
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 200u);
  // Overwrite the start of the first entry's Zstandard frame (after 16 + 64 header bytes).
  for (size_t i = 80; i < 120; ++i)
    bytes[i] = 'x';
  std::ofstream(path, std::ios::binary) << bytes;
  std::string err;
  EXPECT_FALSE(readDeviceCode(path, err));
  EXPECT_NE(err.find("s.fatbin: fatbin entry 1 (sm_90): Zstandard:"), std::string::npos) << err;
}

// narrow_architectures: a lock tuned on sm_90 SASS alone verifies against a
// full build through the sm_90 cubins only (`ciq lock verify`).
TEST_F(DeviceCodeTest, OneArchitectureOfAFullBuildHashesAsTheNarrowedCompile) {
  auto full = compile({"--generate-code=arch=compute_80,code=[compute_80,sm_80]",
                       "--generate-code=arch=compute_90,code=[compute_90,sm_90]", "-c"},
                      "full.o");
  compile({"--generate-code=arch=compute_90,code=sm_90", "-c", "-Xptxas", "-v"}, "narrow.o");
  std::string err;
  auto full90 = readDeviceCode(dir_ + "/full.o", err, 90);
  auto narrow90 = readDeviceCode(dir_ + "/narrow.o", err, 90);
  ASSERT_TRUE(full90 && narrow90) << err;
  EXPECT_EQ(full90->sha256, narrow90->sha256);
  EXPECT_NE(full.sha256, full90->sha256);
}
