// The kernel traces libciq-kernel-trace writes, as the engine reads them
// (engine/measure/KernelTrace.h): the format, the merge of several processes,
// the kernels a pattern picks, and one line for every way a run can give no
// kernel times.
#include "engine/measure/KernelTrace.h"
#include "scratch.h"

#include <fstream>
#include <gtest/gtest.h>

using namespace ciq;

namespace {

std::string kernel(const std::string &name, int launches, long totalNs) {
  return "{\"name\": \"" + name + "\", \"launches\": " + std::to_string(launches) +
         ", \"total_ns\": " + std::to_string(totalNs) +
         ", \"min_ns\": 10, \"max_ns\": 90, \"grid\": [4, 2, 1], \"block\": [128, 1, 1], \"registers\": 40, "
         "\"static_shared_bytes\": 1024, \"dynamic_shared_bytes\": 0}";
}

std::string doc(const std::string &kernels, const std::string &status = "ok", const std::string &error = "",
                int dropped = 0) {
  return "{\"format\": \"ciq-kernel-trace\", \"version\": 1, \"pid\": 42, \"status\": \"" + status +
         "\", \"error\": \"" + error + "\", \"dropped_records\": " + std::to_string(dropped) + ", \"kernels\": [" +
         kernels + "]}";
}

void write(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

} // namespace

TEST(KernelTrace, ParsesOneProcessAndDemangles) {
  std::string err;
  auto t = parseKernelTrace(doc(kernel("_Z4axpyfPfS_", 3, 3000000) + "," + kernel("plain_c_kernel", 1, 500)), "t",
                            err);
  ASSERT_TRUE(t) << err;
  ASSERT_EQ(t->kernels.size(), 2u);
  const KernelTime &k = t->kernels[0];
  EXPECT_EQ(k.mangled, "_Z4axpyfPfS_");
  EXPECT_EQ(k.demangled, "axpy(float, float*, float*)");
  EXPECT_EQ(k.launches, 3u);
  EXPECT_DOUBLE_EQ(k.gpuMs, 3.0);
  EXPECT_EQ(k.grid[0], 4);
  EXPECT_EQ(k.block[0], 128);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.staticSharedBytes, 1024);
  EXPECT_EQ(t->kernels[1].demangled, "plain_c_kernel"); // not mangled: the name itself
}

TEST(KernelTrace, MergesEveryProcessOfTheRun) {
  test::Scratch dir("ciq-ktrace");
  std::string prefix = dir.path() + "/run";
  write(prefix + ".100.json", doc(kernel("_Z1av", 2, 2000000)));
  write(prefix + ".200.json", doc(kernel("_Z1av", 1, 1000000) + "," + kernel("_Z1bv", 1, 5000000)));
  write(prefix + ".300.json.tmp", "half a file"); // being written: not a trace yet
  write(dir.path() + "/other.1.json", "{}");      // another prefix
  std::string err;
  auto t = readKernelTrace(prefix, err);
  ASSERT_TRUE(t) << err;
  EXPECT_EQ(t->processes, 2);
  ASSERT_EQ(t->kernels.size(), 2u);
  EXPECT_EQ(t->kernels[0].mangled, "_Z1bv"); // most GPU time first
  EXPECT_EQ(t->kernels[1].launches, 3u);
  EXPECT_DOUBLE_EQ(t->kernels[1].gpuMs, 3.0);
  auto all = kernelTimeMs(t->kernels, "", err);
  ASSERT_TRUE(all) << err;
  EXPECT_DOUBLE_EQ(*all, 8.0);
  auto a = kernelTimeMs(t->kernels, "^a\\(\\)$", err); // the demangled name
  ASSERT_TRUE(a) << err;
  EXPECT_DOUBLE_EQ(*a, 3.0);
  auto b = kernelTimeMs(t->kernels, "_Z1b", err); // the mangled name
  ASSERT_TRUE(b) << err;
  EXPECT_DOUBLE_EQ(*b, 5.0);
  EXPECT_TRUE(removeKernelTraces(prefix, err)) << err;
  EXPECT_TRUE(kernelTraceFiles(prefix).empty());
}

TEST(KernelTrace, NoFileSaysTheInjectionDidNotLoad) {
  test::Scratch dir("ciq-ktrace");
  std::string err;
  EXPECT_FALSE(readKernelTrace(dir.path() + "/run", err));
  EXPECT_NE(err.find("no kernel times: the benchmark launched no kernel or the injection did not load"),
            std::string::npos)
      << err;
}

TEST(KernelTrace, NoKernelLaunched) {
  test::Scratch dir("ciq-ktrace");
  write(dir.path() + "/run.7.json", doc(""));
  std::string err;
  EXPECT_FALSE(readKernelTrace(dir.path() + "/run", err));
  EXPECT_NE(err.find("launched no kernel (1 process(es) initialized CUDA"), std::string::npos) << err;
}

TEST(KernelTrace, EveryBadDocumentIsOneLine) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"not json", "t: "},
      {"[1, 2]", "t: "},
      {"{\"format\": \"other\", \"status\": \"ok\"}", "not a ciq kernel trace"},
      {doc("", "error", "cuptiActivityEnable(CONCURRENT_KERNEL) failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"),
       "process 42: kernel tracing failed: cuptiActivityEnable(CONCURRENT_KERNEL) failed: "
       "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
      {doc("", "incomplete", "the process ended before its exit handlers ran"),
       "process 42: the process ended before its exit handlers ran"},
      {doc(kernel("_Z1av", 1, 10), "ok", "", 5), "CUPTI dropped 5 kernel records"},
      {doc("", "strange"), "unknown trace status 'strange'"},
      {doc("{\"name\": 7, \"launches\": 1, \"total_ns\": 1}"), "kernels[0]: \"name\": expected a string"},
      {doc("{\"name\": \"k\", \"total_ns\": 1}"), "kernels[0]"},
      {doc("{\"name\": \"k\", \"launches\": 1, \"total_ns\": 1, \"grid\": [1]}"), "grid and block"},
      {"{\"format\": \"ciq-kernel-trace\", \"status\": \"ok\", \"kernels\": 3}", "\"kernels\""},
  };
  for (const Case &c : cases) {
    std::string err;
    EXPECT_FALSE(parseKernelTrace(c.text, "t", err)) << c.text;
    EXPECT_NE(err.find(c.want), std::string::npos) << c.text << "\n  got: " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

TEST(KernelTrace, ABadFileFailsTheWholeRun) {
  // One process's failure makes the run's sum wrong: never a partial score.
  test::Scratch dir("ciq-ktrace");
  write(dir.path() + "/run.1.json", doc(kernel("_Z1av", 1, 1000)));
  write(dir.path() + "/run.2.json", doc("", "error", "CUPTI (libcupti.so.13) not found"));
  std::string err;
  EXPECT_FALSE(readKernelTrace(dir.path() + "/run", err));
  EXPECT_NE(err.find("run.2.json: process 42: kernel tracing failed: CUPTI (libcupti.so.13) not found"),
            std::string::npos)
      << err;
}

TEST(KernelTrace, UnusualNames) {
  // Templates, lambdas, anonymous namespaces, a name that does not demangle,
  // and regex metacharacters in the name itself.
  std::string names[] = {"_ZN12_GLOBAL__N_14gemmILi64ELi8EEEvPKfS2_Pfi", "_Z6kernelIZ4mainEUlvE_Evv",
                         "_Zbroken(", "kernel<float>[1]+$"};
  std::string ks;
  for (const std::string &n : names)
    ks += (ks.empty() ? "" : ",") + kernel(n, 1, 1000000);
  std::string err;
  auto t = parseKernelTrace(doc(ks), "t", err);
  ASSERT_TRUE(t) << err;
  ASSERT_EQ(t->kernels.size(), 4u);
  EXPECT_EQ(t->kernels[0].demangled, "void (anonymous namespace)::gemm<64, 8>(float const*, float const*, float*, int)");
  EXPECT_EQ(t->kernels[2].demangled, "_Zbroken("); // left as it is
  auto m = kernelTimeMs(t->kernels, "kernel<float>\\[1\\]\\+\\$", err);
  ASSERT_TRUE(m) << err;
  EXPECT_DOUBLE_EQ(*m, 1.0);
  auto g = kernelTimeMs(t->kernels, "gemm<64", err);
  ASSERT_TRUE(g) << err;
  EXPECT_DOUBLE_EQ(*g, 1.0);
}

TEST(KernelTrace, APatternThatMatchesNothingListsWhatRan) {
  KernelTimes ks(1);
  ks[0].mangled = "_Z1av";
  ks[0].demangled = "a()";
  ks[0].gpuMs = 1;
  std::string err;
  EXPECT_FALSE(kernelTimeMs(ks, "gemm", err));
  EXPECT_NE(err.find("no launched kernel matches benchmark.kernels 'gemm' (launched: a())"), std::string::npos) << err;
  EXPECT_FALSE(kernelTimeMs(ks, "(", err));
  EXPECT_NE(err.find("is not a regular expression"), std::string::npos) << err;
}
