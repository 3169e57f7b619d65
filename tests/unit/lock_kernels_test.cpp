// Locks per kernel (issue 40 item 5): where each per-kernel control took
// effect is recorded from the winner's receipts (appliedKernels,
// kernelUnitsOf), kept in the lock (kernel_units, typed and hashed), and a
// compile of a translation unit that no longer has the kernel names it in
// one line (wrapper/LockKernels.h).
#include "common/JsonRead.h"
#include "common/Lockfile.h"
#include "engine/compile/KernelControlCheck.h"
#include "engine/winner/LockUnits.h"
#include "tests/unit/scratch.h"
#include "wrapper/LockKernels.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace ciq;
using namespace ciq::wrapper;
using nlohmann::json;

namespace {

const std::string kKernel = "_ZN48_GLOBAL__N__xxxxxxxx_15_spill_kernel_cu_b1130c7c13sgemm_blockedEiiifPKfS1_fPf";

std::vector<KernelDirective> directives() { return {{kKernel, "minnctapersm", 2, "sgemm_blocked"}}; }

DirectiveOutcome found(const std::string &arch) { return {kKernel, arch, "minnctapersm", 2, "applied", ""}; }

} // namespace

TEST(LockKernels, ReceiptsRecordWhereEachDirectiveTookEffect) {
  Receipt rc;
  rc.directives = {found("sm_90"),
                   found("sm_80"),
                   found("sm_90"),
                   {"_Z1bv", "sm_90", "minnctapersm", 2, "not_applicable", "no __launch_bounds__"},
                   {"_Z1cv", "", "maxnreg", 64, "not_applicable", "cannot be split"}};
  auto applied = appliedKernels(rc);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[kKernel], (std::vector<std::string>{"sm_80", "sm_90"}));

  Evaluation win;
  win.rendered.kernels = directives();
  ObjectRecord kern, other;
  kern.source = "/src/proj/spill_kernel.cu";
  kern.directiveKernels = applied;
  other.source = "/src/proj/main.cu";
  win.objects = {kern, other};
  KernelUnits units = kernelUnitsOf(win, "/src/proj");
  EXPECT_EQ(units, (KernelUnits{{kKernel, {{"spill_kernel.cu", {"sm_80", "sm_90"}}}}}));
}

TEST(LockKernels, KernelUnitsAreKeptTypedAndHashed) {
  test::Scratch dir("ciq-lock-kernels");
  Lockfile l;
  l.target = "bench";
  l.architectures = {"sm_90"};
  l.candidateId = "c3";
  l.kernelDirectives = directives();
  l.kernelUnits = {{kKernel, {{"spill_kernel.cu", {"sm_90"}}}}};
  l.deviceCodeSha256 = std::string(64, '0');
  l.candidateHash = candidateHashOf({}, {}, {}, {}, l.kernelDirectives);
  std::string path = dir.path() + "/bench.ciq.lock", err;
  ASSERT_TRUE(writeLockfile(path, l, err)) << err;
  auto back = readLockfile(path, err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->kernelUnits, l.kernelUnits);
  EXPECT_FALSE(back->extra.contains("kernel_units")); // a field of its own, not an unknown one
  EXPECT_EQ(kernelUnitsPhrase(*back, kKernel), "spill_kernel.cu (sm_90)");
  json j;
  ASSERT_TRUE(parseJsonFile(path, j, err)) << err;
  // The lock's own hash covers it: an edit is refused.
  json edited = j;
  json &section = edited["architectures"]["sm_90"]; // the winner's section (schema 2)
  section["kernel_units"][kKernel]["other.cu"] = {"sm_90"};
  std::ofstream(path) << edited.dump(2);
  EXPECT_FALSE(readLockfile(path, err));
  EXPECT_NE(err.find("\"lock_sha256\" does not match"), std::string::npos) << err;
  // A wrong type, without the hash (written by hand): one line naming the key.
  section["kernel_units"][kKernel]["other.cu"] = "sm_90";
  edited.erase(kLockShaKey);
  std::ofstream(path) << edited.dump(2);
  EXPECT_FALSE(readLockfile(path, err));
  EXPECT_NE(err.find("\"kernel_units\"\"" + kKernel + "\": \"other.cu\": expected an array"), std::string::npos) << err;
  // A lock written before kernel_units: read as it was, with no units.
  j["architectures"]["sm_90"].erase("kernel_units");
  j.erase(kLockShaKey);
  std::ofstream(path) << j.dump(2);
  back = readLockfile(path, err);
  ASSERT_TRUE(back) << err;
  EXPECT_TRUE(back->kernelUnits.empty());
  EXPECT_EQ(kernelUnitsPhrase(*back, kKernel), "");
}

TEST(LockKernels, AKernelGoneFromItsTranslationUnitIsLost) {
  KernelUnits units = {{kKernel, {{"spill_kernel.cu", {"sm_90"}}}}};
  std::string src = "/p/spill_kernel.cu";
  // Still there: nothing lost.
  EXPECT_TRUE(lostKernels(units, "/p", src, {"sm_90"}, {found("sm_90")}, directives()).empty());
  // Renamed: its PTX has no entry of that name, so no outcome names it.
  auto lost = lostKernels(units, "/p", src, {"sm_90"}, {}, directives());
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].label, "sgemm_blocked");
  EXPECT_EQ(lost[0].directives, std::vector<std::string>{".minnctapersm 2"});
  EXPECT_FALSE(lost[0].partly);
  // Another source, or the same one spelled with "..": judged only where the lock found it.
  EXPECT_TRUE(lostKernels(units, "/p", "/p/main.cu", {"sm_90"}, {}, directives()).empty());
  EXPECT_EQ(lostKernels(units, "/p", "/p/sub/../spill_kernel.cu", {"sm_90"}, {}, directives()).size(), 1u);
  // sm_90a is sm_90's family.
  EXPECT_EQ(lostKernels(units, "/p", src, {"sm_90a"}, {}, directives()).size(), 1u);
  // A lock without kernel_units (an older ciq's) judges nothing.
  EXPECT_TRUE(lostKernels({}, "/p", src, {"sm_90"}, {}, directives()).empty());
}

TEST(LockKernels, AKernelOfSomeArchitecturesIsJudgedForThoseOnly) {
  KernelUnits units = {{kKernel, {{"k.cu", {"sm_90"}}}}};
  // A compile for sm_80 only: the lock never found the kernel there.
  EXPECT_TRUE(lostKernels(units, "/p", "/p/k.cu", {"sm_80"}, {}, directives()).empty());
  // Recorded for both, and still in sm_80's PTX but not sm_90's: lost for sm_90.
  units[kKernel]["k.cu"] = {"sm_80", "sm_90"};
  auto lost = lostKernels(units, "/p", "/p/k.cu", {"sm_80", "sm_90"}, {found("sm_80")}, directives());
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].archs, std::vector<std::string>{"sm_90"});
  EXPECT_TRUE(lost[0].partly);
  std::string line = lostKernelsLine(lost, "/p/b.ciq.lock", "/p/k.cu", true, "--lock-policy=warn");
  EXPECT_NE(line.find("(" + kKernel + ": .minnctapersm 2, for sm_90)"), std::string::npos) << line;
}

TEST(LockKernels, OneLineSaysWhatAndWhatToDo) {
  KernelUnits units = {{kKernel, {{"k.cu", {"sm_90"}}}}};
  auto lost = lostKernels(units, "/p", "/p/k.cu", {"sm_90"}, {}, directives());
  std::string refuse = lostKernelsLine(lost, "/p/b.ciq.lock", "/p/k.cu", true, "--lock-policy=warn");
  EXPECT_EQ(refuse, "/p/b.ciq.lock: kernel sgemm_blocked (" + kKernel +
                        ": .minnctapersm 2) is no longer in /p/k.cu (renamed, its signature changed, or removed "
                        "since the tune), so the lock's directive for it cannot be applied; tune again to lock the "
                        "kernels as they are now, or use --lock-policy=warn to build without its directive");
  std::string warn = lostKernelsLine(lost, "/p/b.ciq.lock", "/p/k.cu", false, "--lock-policy=warn");
  EXPECT_NE(warn.find("since the tune): compiling without its directive; the rest of the lock still applies (lock "
                      "policy warn)"),
            std::string::npos)
      << warn;
  EXPECT_EQ(warn.find('\n'), std::string::npos);
}
