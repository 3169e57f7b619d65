// common/DeviceCode.h against the real nvcc: compressed device code (nvcc 13
// compresses -rdc cubins and every -compress-mode but none) hashes as the SASS
// it holds, so spellings of the same compile agree and real changes differ.
#include "common/DeviceCode.h"
#include "common/Subprocess.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

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

namespace {

// A reduction as the official samples write it (a template, cg::reduce on a
// warp tile, dynamic shared memory), a grid sync and a cuda::std atomic:
// file-local device entities that nvcc names after the translation unit
// ("_INTERNAL_<8 hex>_...", the hex a hash of the source's absolute path).
const char *kSamplesReduction = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda/std/atomic>
namespace cg = cooperative_groups;
namespace {
__device__ int blocksDone;
__device__ float twice(float x) { return 2.f * x; }
}
static __device__ float plusOne(float v) { return v + 1.f; }
template <class T> __global__ void reduce(const T *in, T *out, unsigned n) {
  extern __shared__ unsigned char smemRaw[];
  T *smem = reinterpret_cast<T *>(smemRaw);
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  T v = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    v += twice(plusOne(in[i]));
  v = cg::reduce(tile, v, cg::plus<T>());
  if (tile.thread_rank() == 0) smem[tile.meta_group_rank()] = v;
  cg::sync(cta);
  if (threadIdx.x == 0) {
    T s = 0;
    for (unsigned w = 0; w < tile.meta_group_size(); ++w) s += smem[w];
    out[blockIdx.x] = s;
    atomicAdd(&blocksDone, 1);
  }
}
__global__ void gridSum(float *a, unsigned n) {
  cg::grid_group g = cg::this_grid();
  a[g.thread_rank() % n] += 1.f;
  g.sync();
  cuda::std::atomic_ref<float> first(a[0]);
  first.fetch_add(1.f);
}
template __global__ void reduce<float>(const float *, float *, unsigned);
template __global__ void reduce<double>(const double *, double *, unsigned);
)";

// `nvcc <args> <dir>/red.cu -o <dir>/<out>` in its own process, run from <dir>.
DeviceCode compileIn(const std::string &dir, std::vector<std::string> args, const std::string &out) {
  std::vector<std::string> argv{CIQ_TEST_NVCC};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {dir + "/red.cu", "-o", dir + "/" + out});
  SubprocessOptions o;
  o.cwd = dir;
  auto r = runSubprocess(argv, o);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::string err;
  auto dc = readDeviceCode(dir + "/" + out, err);
  EXPECT_TRUE(dc) << err;
  return dc ? *dc : DeviceCode{};
}

} // namespace

// Issue 31 item 2: the same file compiled in two folders (two checkouts, two
// build trees, two processes) is the same device code, for every way the
// samples build it; a real change still differs.
TEST_F(DeviceCodeTest, SameSourceInTwoFoldersHashesTheSame) {
  std::string a = dir_ + "/checkout-a", b = dir_ + "/elsewhere/checkout-b";
  for (const auto &d : {a, b}) {
    ASSERT_FALSE(llvm::sys::fs::create_directories(d));
    std::ofstream(d + "/red.cu") << kSamplesReduction;
  }
  const std::vector<std::vector<std::string>> variants = {
      {"-arch=sm_90", "-c"},
      {"-arch=sm_90", "-c", "-rdc=true"},
      {"-arch=sm_90", "-c", "-compress-mode=size"},
      {"-arch=sm_90", "-c", "-G"},
      {"-arch=sm_90", "-c", "-lineinfo"},
      {"-arch=sm_90", "-cubin", "-rdc=true"},
      // Issue 41 item 1: the flags of every cuda-sample. ptxas names a debug
      // section after the PTX file it read (`.nv_debug_ptx_txt.<number>`),
      // which moved .strtab's offsets and so the symbol table's bytes.
      {"-arch=sm_90", "-c", "-rdc=true", "-lineinfo"},
      {"-arch=sm_90", "-cubin", "-rdc=true", "-lineinfo"},
  };
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string out = "v" + std::to_string(i) + (variants[i][1] == "-c" ? ".o" : ".bin");
    auto x = compileIn(a, variants[i], out), y = compileIn(b, variants[i], out);
    EXPECT_FALSE(x.sha256.empty());
    EXPECT_EQ(x.sha256, y.sha256) << "nvcc " << llvm::join(variants[i], " ");
  }
  // Two processes in one folder (nvcc's temporary files differ by pid).
  auto once = compileIn(a, {"-arch=sm_90", "-c", "-rdc=true", "-lineinfo"}, "again1.o");
  EXPECT_EQ(once.sha256, compileIn(a, {"-arch=sm_90", "-c", "-rdc=true", "-lineinfo"}, "again2.o").sha256);
  // PTX reuse: ptxas on the PTX nvcc kept in one folder gives the cubin a
  // full compile gives in the other.
  auto r = runSubprocess({CIQ_TEST_NVCC, "-arch=sm_90", "-ptx", a + "/red.cu", "-o", a + "/red.ptx"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string ptxas = llvm::sys::path::parent_path(CIQ_TEST_NVCC).str() + "/ptxas";
  r = runSubprocess({ptxas, "-arch=sm_90", a + "/red.ptx", "-o", a + "/reused.cubin"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::string err;
  auto reused = readDeviceCode(a + "/reused.cubin", err);
  ASSERT_TRUE(reused) << err;
  EXPECT_EQ(reused->sha256, compileIn(b, {"-arch=sm_90", "-cubin"}, "full.cubin").sha256);
  EXPECT_NE(reused->sha256, compileIn(b, {"-arch=sm_90", "-cubin", "-Xptxas", "-O0"}, "o0.cubin").sha256);
}

// Issue 48 item 5a: cuda-samples' reduction compiled -rdc names its
// file-local entities with the compiling process's number after the unit id
// ("..._8d71df23_27043"), so two builds of one tree hashed differently. The
// number goes, with the length before the tag that counts it (a pid of
// another width changes it), as the path hash goes.
TEST(DeviceCode, UnitIdsCanonicalWhateverTheProcess) {
  std::string a = "__nv_static_32__59a1065c_5_rk_cu_8d71df23_27043__ZN41_INTERNAL_59a1065c_5_rk_cu_8d71df23_270434cuda3std"
                  "3__443_GLOBAL__N__59a1065c_5_rk_cu_8d71df23_270436ignoreE";
  std::string b = "__nv_static_33__3224d2c1_5_rk_cu_8d71df23_123456__ZN42_INTERNAL_3224d2c1_5_rk_cu_8d71df23_1234564cuda3"
                  "std3__444_GLOBAL__N__3224d2c1_5_rk_cu_8d71df23_1234566ignoreE";
  EXPECT_EQ(canonicalUnitIds(a), canonicalUnitIds(b));
  EXPECT_EQ(canonicalUnitIds(a), "__nv_static_#__00000000_5_rk_cu_00000000__ZN#_INTERNAL_00000000_5_rk_cu_000000004cuda3std"
                                 "3__4#_GLOBAL__N__00000000_5_rk_cu_000000006ignoreE");
  // Without a process number, as most units: the hashes go.
  EXPECT_EQ(canonicalUnitIds("_ZN36_INTERNAL_393f41ab_6_red_cu_2c143ad14cuda"),
            "_ZN#_INTERNAL_00000000_6_red_cu_000000004cuda");
  // Another source file (its name) still differs.
  EXPECT_NE(canonicalUnitIds("_ZN36_INTERNAL_393f41ab_6_red_cu_2c143ad14cuda"),
            canonicalUnitIds("_ZN36_INTERNAL_393f41ab_6_rex_cu_2c143ad14cuda"));
  EXPECT_NE(canonicalUnitIds("_ZN36_INTERNAL_393f41ab_6_red_cu_2c143ad14cuda"),
            canonicalUnitIds("_ZN36_INTERNAL_393f41ab_6_red_cu_2c143ad14cudb"));
  // Bytes that only look like a tag are left as they are.
  EXPECT_EQ(canonicalUnitIds("x_INTERNAL_zz__nv_static_9__q"), "x_INTERNAL_zz__nv_static_9__q");
}

// Issue 56 item 1: the forms seen at two checkout paths. Both hashes of a
// unit id differ between folders (-rdc, an anonymous namespace from libcu++'s
// cuda::std::ignore), a template-only unit's too, and a unit named after a
// function was not recognised at all; the file's name and what follows stay.
TEST(DeviceCode, UnitIdsCanonicalWhateverTheCheckoutPath) {
  EXPECT_EQ(canonicalUnitIds("_ZN4cuda3std3__441_GLOBAL__N__1953315c_4_m_cu_aae6e44c_57026ignoreE"),
            canonicalUnitIds("_ZN4cuda3std3__441_GLOBAL__N__9fc743f2_4_m_cu_33efb5f6_60356ignoreE"));
  EXPECT_EQ(canonicalUnitIds("_ZN4cuda3std3__441_GLOBAL__N__9fc743f2_4_m_cu_33efb5f6_60356ignoreE"),
            "_ZN4cuda3std3__4#_GLOBAL__N__00000000_4_m_cu_000000006ignoreE");
  EXPECT_EQ(canonicalUnitIds("__nv_static_31__e0ffe080_4_k_cu_92a545d7_24723__Z4tmplIiEvPT_"),
            canonicalUnitIds("__nv_static_31__1d66a427_4_k_cu_6c587949_24964__Z4tmplIiEvPT_"));
  EXPECT_EQ(canonicalUnitIds("__nv_static_31__1d66a427_4_k_cu_6c587949_24964__Z4tmplIiEvPT_"),
            "__nv_static_#__00000000_4_k_cu_00000000__Z4tmplIiEvPT_");
  // Function-named units: only the path hash goes, every length stays.
  EXPECT_EQ(canonicalUnitIds("_ZZ4mainE36_INTERNAL_fdfc7e2e_7_Main_cu_main5count"),
            "_ZZ4mainE36_INTERNAL_00000000_7_Main_cu_main5count");
  EXPECT_EQ(canonicalUnitIds("_INTERNAL_6e7e3d88_5_io_cu__Z4logoi"),
            canonicalUnitIds("_INTERNAL_0badf00d_5_io_cu__Z4logoi"));
  // What is not path-derived still counts: the file's name, its length, the
  // entity's name.
  EXPECT_NE(canonicalUnitIds("_INTERNAL_6e7e3d88_5_io_cu__Z4logoi"),
            canonicalUnitIds("_INTERNAL_6e7e3d88_5_ix_cu__Z4logoi"));
  EXPECT_NE(canonicalUnitIds("_INTERNAL_6e7e3d88_5_io_cu__Z4logoi"),
            canonicalUnitIds("_INTERNAL_6e7e3d88_5_io_cu__Z4logpi"));
  EXPECT_NE(canonicalUnitIds("__nv_static_31__1d66a427_4_k_cu_6c587949_24964__Z4tmplIiEvPT_"),
            canonicalUnitIds("__nv_static_31__1d66a427_4_q_cu_6c587949_24964__Z4tmplIiEvPT_"));
}

// Issue 56 item 1: `ciq lock verify` tells "the same code under other
// file-local names" from a build that differs.
TEST(DeviceCode, OnlyFileLocalNamesDifferIsToldApart) {
  std::vector<std::string> locked = {"sm_90 .text._ZN#_INTERNAL_00000000_4_k_cu_main5scaleEf 128 aaaa",
                                     "sm_90 .nv.info 40 cccc", "sm_90 .symtab bbbb"};
  std::vector<std::string> renamed = {"sm_90 .text._ZN#_INTERNAL_00000000_4_k_cu_main_77775scaleEf 128 aaaa",
                                      "sm_90 .nv.info 40 cccc", "sm_90 .symtab dddd"};
  auto names = onlyFileLocalNamesDiffer(locked, renamed);
  ASSERT_TRUE(names);
  EXPECT_NE(names->find("_main_77775scaleEf here"), std::string::npos) << *names;
  // Only the symbol table (the names of its symbols).
  EXPECT_TRUE(onlyFileLocalNamesDiffer({"sm_90 .text._Z1kv 64 aaaa", "sm_90 .symtab bbbb"},
                                       {"sm_90 .text._Z1kv 64 aaaa", "sm_90 .symtab dddd"}));
  // Other code, another size, a renamed kernel that is not file-local, or
  // the same lines: not that.
  auto other = renamed;
  other[1] = "sm_90 .nv.info 40 eeee";
  EXPECT_FALSE(onlyFileLocalNamesDiffer(locked, other));
  other = renamed;
  other[0] = "sm_90 .text._ZN#_INTERNAL_00000000_4_k_cu_main_77775scaleEf 128 ffff";
  EXPECT_FALSE(onlyFileLocalNamesDiffer(locked, other));
  EXPECT_FALSE(onlyFileLocalNamesDiffer({"sm_90 .text._Z1kv 64 aaaa"}, {"sm_90 .text._Z1jv 64 aaaa"}));
  EXPECT_FALSE(onlyFileLocalNamesDiffer(locked, locked));
  EXPECT_FALSE(onlyFileLocalNamesDiffer({}, renamed));
}

// Issue 56 item 1, on real cubins: PTX of one source from two folders (the
// path hash differs), the second folder's unit ids also given another second
// hash, in an order that sorts the other way: ptxas's cubins hash the same,
// for -rdc PTX (template-only units, anonymous namespaces) and whole-program
// PTX. What the rehearsal cannot show by building at one path.
TEST_F(DeviceCodeTest, CubinsFromTwoPathsAndOtherUnitHashesHashTheSame) {
  std::string a = dir_ + "/a", b = dir_ + "/far/away/b";
  const char *src = R"(
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
namespace { __device__ float twice(float x) { return 2.f * x; } }
static __device__ float plusOne(float v) { return v + 1.f; }
template <class T> static __global__ void bump(T *p) { p[threadIdx.x] += T(1); }
__global__ void red(const float *in, float *out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  float v = cg::reduce(tile, twice(in[threadIdx.x]), cg::plus<float>());
  if (tile.thread_rank() == 0) out[blockIdx.x] = plusOne(v);
}
void launch(float *x, int *n) { red<<<1, 32>>>(x, x); bump<<<1, 1>>>(n); }
)";
  std::string ptxas = llvm::sys::path::parent_path(CIQ_TEST_NVCC).str() + "/ptxas";
  for (const char *rdc : {"-rdc=true", "-rdc=false"}) {
    std::vector<std::string> hashes, raw;
    for (const auto &d : {a, b}) {
      ASSERT_FALSE(llvm::sys::fs::create_directories(d));
      std::ofstream(d + "/u.cu") << src;
      SubprocessOptions o;
      o.cwd = d;
      auto r = runSubprocess({CIQ_TEST_NVCC, "-arch=sm_90", rdc, "-ptx", d + "/u.cu", "-o", d + "/u.ptx"}, o);
      ASSERT_EQ(r.exitCode, 0) << r.err;
      std::ifstream in(d + "/u.ptx");
      std::string ptx((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // The unit id's second hash, in b replaced by another (of the same
      // length: the mangled lengths stay right).
      auto at = ptx.find("_4_u_cu_");
      ASSERT_NE(at, std::string::npos);
      std::string second = ptx.substr(at + 8, 8), first = ptx.substr(at - 8, 8);
      raw.push_back(first);
      if (d == b)
        for (size_t p = ptx.find(second); p != std::string::npos; p = ptx.find(second, p + 8))
          ptx.replace(p, 8, second[0] == '0' ? "ffffffff" : "00000000");
      std::ofstream(d + "/u2.ptx") << ptx;
      r = runSubprocess({ptxas, "-arch=sm_90", std::string(rdc) == "-rdc=true" ? "-c" : "-O3", d + "/u2.ptx", "-o",
                         d + "/u.cubin"});
      ASSERT_EQ(r.exitCode, 0) << r.err;
      std::string err;
      auto dc = readDeviceCode(d + "/u.cubin", err);
      ASSERT_TRUE(dc) << err;
      hashes.push_back(dc->sha256);
    }
    EXPECT_NE(raw[0], raw[1]) << "the two folders' path hashes";
    EXPECT_EQ(hashes[0], hashes[1]) << rdc;
    llvm::sys::fs::remove_directories(a);
    llvm::sys::fs::remove_directories(dir_ + "/far");
  }
}

// Issue 48 item 5: a device code that differs says which section: the lines
// the hash reads (DeviceCode::sections), compared section by section.
TEST_F(DeviceCodeTest, SectionsSayWhatDiffers) {
  auto plain = compile({"-arch=sm_90", "-c"}, "a.o");
  auto verbose = compile({"-arch=sm_90", "-c", "-Xptxas", "-v"}, "b.o");
  ASSERT_FALSE(plain.sections.empty());
  EXPECT_EQ(plain.sections, verbose.sections);
  EXPECT_EQ(deviceCodeSectionDifferences(plain.sections, verbose.sections), "");
  bool text = false;
  for (const auto &l : plain.sections)
    text = text || l.rfind("sm_90 .text.", 0) == 0;
  EXPECT_TRUE(text) << llvm::join(plain.sections, "\n");
  auto capped = compile({"-arch=sm_90", "-c", "-maxrregcount=16"}, "c.o");
  std::string diff = deviceCodeSectionDifferences(plain.sections, capped.sections);
  EXPECT_NE(diff.find("sm_90 .text."), std::string::npos) << diff;
  // Sizes where one section of each side differs; names only on one side; a cap on how many.
  EXPECT_EQ(deviceCodeSectionDifferences({"sm_90 .text.k 128 aaaa", "sm_90 .nv.info.k 40 bbbb"},
                                         {"sm_90 .text.k 144 cccc", "sm_90 .nv.info.k 40 dddd", "sm_90 .nv.shared.k 8 e"}),
            "sm_90 .nv.info.k: other contents; sm_90 .text.k: 128 bytes in the tuned build, 144 built; "
            "sm_90 .nv.shared.k: only in this build");
  EXPECT_EQ(deviceCodeSectionDifferences({"sm_90 a 1 x", "sm_90 b 1 x", "sm_90 c 1 x"}, {}, 2),
            "sm_90 a: not built; sm_90 b: not built; 1 more");
}
