// The search loop as a library (engine/run/Tune.h): a search that cannot start
// returns its one error line in the outcome and prints nothing of its own;
// the command prints it.
#include "engine/run/Tune.h"
#include "engine/executors/Workers.h"
#include "tests/unit/engine_test_util.h"

#include <gmock/gmock.h>

using namespace ciq;
using ciq::test::TempProject;
using ::testing::HasSubstr;

namespace {

void writeJournal(const TuneConfig &cfg, const std::string &lines) {
  llvm::sys::fs::create_directories(cfg.runDir);
  std::ofstream(cfg.runDir + "/journal.jsonl") << lines;
}

// Runs the search with stdout captured; returns the outcome and what it printed there.
std::pair<TuneOutcome, std::string> runQuietly(const TuneConfig &cfg, const TuneOptions &o) {
  testing::internal::CaptureStdout();
  TuneOutcome out = runTune(cfg, o);
  return {out, testing::internal::GetCapturedStdout()};
}

TEST(TuneLibrary, ResumeWithoutJournalIsAnOutcomeNotAPrint) {
  TempProject p;
  TuneConfig cfg = p.loadOk("target: app\n");
  TuneOptions o;
  o.resume = true;
  std::vector<std::string> warned;
  o.onWarning = [&](const std::string &w) { warned.push_back(w); };
  auto [out, printed] = runQuietly(cfg, o);
  EXPECT_EQ(out.status, TuneOutcome::Status::Failed);
  EXPECT_THAT(out.error, HasSubstr("nothing to resume in " + cfg.runDir + " (no journal.jsonl)"));
  EXPECT_THAT(out.error, HasSubstr("start with `ciq tune`"));
  EXPECT_FALSE(out.summary.has_value());
  EXPECT_EQ(out.lock, TuneOutcome::Lock::NotWritten);
  EXPECT_TRUE(warned.empty());
  EXPECT_EQ(printed, "");
}

TEST(TuneLibrary, ResumeOfAnotherSpaceFails) {
  TempProject p;
  TuneConfig cfg = p.loadOk("target: app\n");
  writeJournal(cfg, R"({"op": "start", "version": 1, "space_identity": "not-this-space", "seed": 1, "strategy": "genetic"})" "\n");
  TuneOptions o;
  o.resume = true;
  auto [out, printed] = runQuietly(cfg, o);
  EXPECT_EQ(out.status, TuneOutcome::Status::Failed);
  EXPECT_THAT(out.error, HasSubstr("the search space, seed or strategy changed since this search started"));
  EXPECT_EQ(printed, "");
}

TEST(TuneLibrary, RunDirOfAnotherConfigFails) {
  TempProject p;
  TuneConfig cfg = p.loadOk("target: app\n");
  writeJournal(cfg, R"({"op": "start", "version": 1, "config_path": "/elsewhere/ciq.yaml", "space_identity": "x", "seed": 1})" "\n");
  auto [out, printed] = runQuietly(cfg, TuneOptions{});
  EXPECT_EQ(out.status, TuneOutcome::Status::Failed);
  EXPECT_THAT(out.error, HasSubstr(cfg.runDir + " holds the search of /elsewhere/ciq.yaml; give " + cfg.path));
  EXPECT_EQ(printed, "");
}

// Sets or unsets CUDA_VISIBLE_DEVICES for one test, restoring it after.
class VisibleDevices {
public:
  explicit VisibleDevices(const char *value) {
    if (const char *v = getenv("CUDA_VISIBLE_DEVICES"))
      saved_ = v;
    value ? setenv("CUDA_VISIBLE_DEVICES", value, 1) : unsetenv("CUDA_VISIBLE_DEVICES");
  }
  ~VisibleDevices() { saved_ ? setenv("CUDA_VISIBLE_DEVICES", saved_->c_str(), 1) : unsetenv("CUDA_VISIBLE_DEVICES"); }

private:
  std::optional<std::string> saved_;
};

// Worker GPUs and the worker count come from the one reading of the variable (Workers.cpp).
TEST(TuneLibrary, CudaVisibleDevicesIsReadOnce) {
  {
    VisibleDevices v("0,GPU-1b2c,3");
    EXPECT_EQ(workerGpus(4), (std::vector<std::string>{"0", "GPU-1b2c", "3", "0"}));
    EXPECT_EQ(visibleGpuCount(), 3);
  }
  for (const char *none : {"", "-1", "none"}) {
    VisibleDevices v(none);
    EXPECT_EQ(visibleGpuCount(), 0) << none;
    EXPECT_EQ(workerGpus(2), (std::vector<std::string>{"0", "1"})) << none;
  }
}

} // namespace
