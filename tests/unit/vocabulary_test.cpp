// Issue 13, point 1: each vocabulary (INVALID reasons, strategies, metrics,
// metric sources, accumulating nvcc options, CIQ_* variables) is one table,
// the docs list exactly its rows, and no other file spells its names.
#include "common/EnvNames.h"
#include "common/InvalidReason.h"
#include "engine/measure/MetricSources.h"
#include "engine/config/Metrics.h"
#include "common/OptionTable.h"
#include "engine/config/StrategyTable.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

using namespace ciq;

namespace {

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string docs(const std::string &name) { return slurp(std::string(CIQ_TEST_SOURCE_DIR) + "/docs/" + name); }

// The rows of the markdown table whose header line is `header`.
size_t tableRows(const std::string &text, const std::string &header) {
  size_t start = text.find(header);
  if (start == std::string::npos)
    return 0;
  size_t end = text.find("\n\n", start);
  std::string table = text.substr(start, end - start);
  return (size_t)std::count(table.begin(), table.end(), '\n') - 1; // less the separator line
}

// Every C++ source of common/, engine/ and wrapper/ (path, text).
std::vector<std::pair<std::string, std::string>> sources() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char *dir : {"common", "engine", "wrapper", "bench", "trace"}) {
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(std::string(CIQ_TEST_SOURCE_DIR) + "/" + dir, ec), end;
         it != end && !ec; it.increment(ec)) {
      llvm::StringRef p = it->path();
      if (p.endswith(".cpp") || p.endswith(".h") || p.endswith(".def"))
        out.emplace_back(p.str(), slurp(p.str()));
    }
  }
  return out;
}

std::string fromText(MetricFrom f) {
  switch (f) {
  case MetricFrom::PtxasFrame: return "ptxas statistics (\"bytes stack frame\" line; device functions count)";
  case MetricFrom::PtxasUsage: return "ptxas statistics (\"Used N registers\" line; kernels only)";
  case MetricFrom::Objects: return "the wrapper's receipt of every object";
  case MetricFrom::Benchmark: return "the benchmark (needs a `benchmark:` section)";
  }
  return "";
}

} // namespace

TEST(Vocabulary, InvalidReasonNamesAreSpelledOnlyInTheirTable) {
  for (const auto &[path, text] : sources()) {
    if (path.find("common/InvalidReason.") != std::string::npos)
      continue;
    for (const auto &r : invalidReasons())
      EXPECT_EQ(text.find(std::string("\"") + r.name + "\""), std::string::npos)
          << path << " spells \"" << r.name << "\"; use reason:: of common/InvalidReason.h";
  }
}

TEST(Vocabulary, CMakeModuleStrategiesAreTheTable) {
  std::string gen = slurp(std::string(CIQ_TEST_MODULE_DIR) + "/CompileIQStrategies.cmake");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(gen, m, std::regex("set\\(_CIQ_STRATEGIES ([a-z_;]+)\\)"))) << gen;
  std::string want;
  for (const auto &s : kStrategies)
    want += (want.empty() ? "" : ";") + std::string(s.name);
  EXPECT_EQ(m[1].str(), want);
  // The module checks ciq_tune(STRATEGY) against that list, never a copy.
  std::string module = slurp(std::string(CIQ_TEST_SOURCE_DIR) + "/cmake-module/CompileIQ.cmake");
  for (const auto &s : kStrategies)
    EXPECT_EQ(module.find(std::string(s.name) + ";"), std::string::npos) << "CompileIQ.cmake lists " << s.name;
}

TEST(Vocabulary, DocsListEveryMetric) {
  std::string text = docs("config.md");
  for (const auto &m : knownMetrics()) {
    std::string row = std::string("| `") + m.name + "` | " + m.unit + " | " + m.description + " | " + fromText(m.from) + " |";
    EXPECT_NE(text.find(row), std::string::npos) << "docs/config.md lacks the row\n" << row;
    EXPECT_EQ(m.from == MetricFrom::Benchmark, m.perKernel == nullptr && m.perObject == nullptr) << m.name;
    EXPECT_EQ(m.from == MetricFrom::Objects, m.perObject != nullptr) << m.name;
  }
  EXPECT_EQ(tableRows(text, "| metric | unit | what it counts | from |"), knownMetrics().size());
  EXPECT_EQ(findMetric("spil_bytes"), nullptr);
}

TEST(Vocabulary, DocsListEveryMetricSource) {
  std::string text = docs("config.md");
  size_t n = 0;
  for (const auto &s : kMetricSources) {
    std::string value = s.value == MetricSourceValue::Pattern ? "the pattern"
                        : s.value == MetricSourceValue::File  ? "the file NVBench wrote"
                                                              : "`true`";
    std::string row = std::string("| `") + s.name + "` | " + value + " | " + s.description + " |";
    EXPECT_NE(text.find(row), std::string::npos) << "docs/config.md lacks the row\n" << row;
    ++n;
  }
  EXPECT_EQ(tableRows(text, "| key | its value | what is read |"), n);
  EXPECT_EQ(metricSourceNames(" or "), "regex, json_pointer, nvbench_csv, nvbench_json, wall_time or kernel_time");
}

TEST(Vocabulary, AccumulatingNvccOptionsComeFromTheOptionTable) {
  using wrapper::parseNvccOption;
  std::string v = "x";
  for (const char *a : {"-DX=1", "--define-macro", "-Iinc", "-Xptxas", "--ptxas-options=-v", "-lfoo",
                        "--generate-code=arch=compute_90,code=sm_90", "-Xcompiler"})
    EXPECT_TRUE(parseNvccOption(a, &v).accumulates) << a;
  for (const char *a : {"-O3", "--maxrregcount=32", "-use_fast_math", "--ftz=true", "-arch=sm_90", "--unknown"})
    EXPECT_FALSE(parseNvccOption(a, &v).accumulates) << a;
}

// Every CIQ_* name in the C++ sources and the CMake module's $ENV{} reads is
// a row of common/EnvNames.def, and docs/config.md lists exactly those rows.
TEST(Vocabulary, EnvironmentVariablesAreOneListAndDocumented) {
  std::set<std::string> known;
  std::string text = docs("config.md");
  for (const auto &e : env::kAll) {
    known.insert(e.name);
    std::string row = std::string("| `") + e.name + "` | " + e.reader + " |";
    EXPECT_NE(text.find(row), std::string::npos) << "docs/config.md lacks a row for " << e.name;
  }
  EXPECT_EQ(tableRows(text, "| variable | read by | what it does |"), known.size());
  // Macros and test-only names that share the prefix.
  const std::set<std::string> notEnv = {"CIQ_VERSION", "CIQ_STRATEGY", "CIQ_ENV", "CIQ_DRIVER_FALLBACK",
                                        "CIQ_HAVE_RESOLVER", "CIQ_CANDIDATE", "CIQ_HTTP" /* CIQ_HTTP_*_S */,
                                        "CIQ_REAL" /* CIQ_REAL_<TOOL> */,
                                        // build-time definitions of the kernel trace (trace/CMakeLists.txt)
                                        "CIQ_CUPTI_SONAME", "CIQ_CUPTI_BUILD_DIR", "CIQ_KERNEL_TRACE_OFF",
                                        // CMake cache variables of the module, read from CMakeCache.txt
                                        "CIQ_APPLY_LOCKS", "CIQ_LOCK_LEFT_OUT" /* CIQ_LOCK_LEFT_OUT_<target> */};
  std::regex name("CIQ_[A-Z][A-Z_]*[A-Z]");
  for (const auto &[path, src] : sources())
    for (std::sregex_iterator it(src.begin(), src.end(), name), end; it != end; ++it) {
      std::string n = it->str();
      if (!known.count(n) && !notEnv.count(n) && n.rfind("CIQ_TEST_", 0) != 0)
        ADD_FAILURE() << path << " names " << n << ", which common/EnvNames.def does not list";
    }
  std::string module = slurp(std::string(CIQ_TEST_SOURCE_DIR) + "/cmake-module/CompileIQ.cmake");
  std::regex envRead("\\$ENV\\{(CIQ_[A-Z_]+)\\}");
  for (std::sregex_iterator it(module.begin(), module.end(), envRead), end; it != end; ++it)
    EXPECT_TRUE(known.count((*it)[1].str())) << "CompileIQ.cmake reads " << (*it)[1].str();
}
