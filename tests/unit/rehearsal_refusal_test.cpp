// The rehearsal's refusals that no command reaches (issue 56 item 3): the
// others are lit tests (tests/lit/e2e/rehearsal-differs.test,
// rehearsal-objcopy.test, rehearsal-fails.test).
#include "engine/compile/CandidateBuild.h"
#include "common/InvalidReason.h"
#include "tests/unit/engine_test_util.h"

#include <gtest/gtest.h>

using namespace ciq;

// A command build learns its CUDA objects from the baseline's receipts
// (tune, validate and resume always build or read one first). A lock build
// with none known has nothing to compare: never "device code matches".
TEST(RehearsalRefusals, NoKnownObjectIsNoMatch) {
  test::TempProject p;
  TuneConfig cfg = p.loadOk("target: app\nbuild:\n  command: [\"true\"]\nobjectives: [registers]\n");
  std::string err;
  CandidateBuilder b(cfg, {[](const std::string &) {}, [](const std::string &) {}});
  ASSERT_TRUE(b.start(cfg.runDir + "/r.sock", err)) << err;
  ASSERT_TRUE(b.driver().objects().empty());
  Evaluation e;
  e.candidateId = "c0001";
  b.buildLocked(e, p.dir() + "/app.ciq.lock", cfg.runDir + "/logs/c0001.rehearsal.log");
  EXPECT_FALSE(e.ok);
  EXPECT_EQ(e.reason, reason::RehearsalFailed);
  EXPECT_NE(e.message.find("no CUDA object of build.command is known to compare"), std::string::npos) << e.message;
  EXPECT_TRUE(e.deviceCodeSha256.empty());
}
