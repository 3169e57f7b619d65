// Issue 29 item 2: a write the disk refuses is said with its path and errno,
// never swallowed (tests/lit/engine/disk-*.test run whole searches on a full,
// read-only and immutable disk).
#include "common/DiskFault.h"
#include "common/FileIO.h"
#include "engine/record/Journal.h"

#include <cerrno>
#include <cstring>
#include <sys/mount.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>

using namespace ciq;

TEST(DiskFault, ErrnoIsNamed) {
  EXPECT_EQ(errnoText(ENOSPC), "No space left on device (ENOSPC)");
  EXPECT_EQ(errnoText(EROFS), "Read-only file system (EROFS)");
  EXPECT_TRUE(isDiskFault(EIO));
  EXPECT_FALSE(isDiskFault(EACCES));
  EXPECT_EQ((DiskFault{EROFS, "/mnt/run"}).describe(), "/mnt/run: Read-only file system (EROFS)");
}

// What to do follows the errno: an ext4 that failed answers an fsync with
// EIO and the next write with EROFS, and "free space" helps with neither
// (the CI's read-only search said "free space" for an EIO).
TEST(DiskFault, RemedyFollowsTheErrno) {
  EXPECT_EQ(remedyFor(ENOSPC), "free space");
  EXPECT_EQ(remedyFor(EDQUOT), "free space");
  EXPECT_EQ(remedyFor(EROFS), "remount it read-write");
  EXPECT_EQ(remedyFor(EIO).rfind("check the disk", 0), 0u);
  EXPECT_EQ(remedyFor(EPERM).rfind("make it writable", 0), 0u);
  EXPECT_EQ(remedyFor(0), "free space (or make it writable)");
  EXPECT_EQ((DiskFault{EIO, "/mnt/run"}).remedy(), remedyFor(EIO));
}

// What the compilers print when the disk is full or read-only (nvcc's
// assembler, cicc with --keep), and what they print for their own errors.
TEST(DiskFault, ToolOutputNamesIt) {
  EXPECT_EQ(diskFaultInOutput("/tmp/x.s: Fatal error: can't write 284 bytes to section .text of k.o: "
                              "'No space left on device'"),
            ENOSPC);
  EXPECT_EQ(diskFaultInOutput("cc1plus: fatal error: opening output file k.cpp4.ii: Read-only file system"), EROFS);
  EXPECT_EQ(diskFaultInOutput("kern.cu(3): error: identifier \"x\" is undefined"), 0);
}

TEST(DiskFault, AFailedToolOnAHealthyDiskIsTheCandidates) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("ciq-disk", dir);
  std::string d = dir.str().str();
  EXPECT_FALSE(diskFaultOfFailedTool("kern.cu(3): error: #error TILE must be even", {d + "/obj", d}));
  // The output names the fault, the folders show nothing (the failed write
  // was removed again): the fault stands, on a folder the tool wrote.
  auto f = diskFaultOfFailedTool("Fatal error: can't write 284 bytes: 'No space left on device'", {d + "/obj"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->err, ENOSPC);
  EXPECT_EQ(f->path, d); // the nearest folder that exists
  // The probe file is gone again.
  std::error_code ec;
  EXPECT_EQ(llvm::sys::fs::directory_iterator(d, ec), llvm::sys::fs::directory_iterator());
  llvm::sys::fs::remove_directories(d);
}

// /dev/full refuses every write with ENOSPC: the journal says so with its
// path and refuses every later line (no line may follow a missing one).
TEST(DiskFault, JournalSaysWhyAndStops) {
  Journal j;
  std::string err;
  ASSERT_TRUE(j.open("/dev/full", err)) << err;
  EXPECT_FALSE(j.append({{"op", "start"}}));
  EXPECT_EQ(j.error(), "cannot append to the journal /dev/full: No space left on device (ENOSPC)");
  EXPECT_EQ(j.errorNumber(), ENOSPC);
  EXPECT_FALSE(j.append({{"op", "done"}}));
  // A journal that cannot be opened says why with its errno too (a resume
  // of an immutable or read-only journal says what to do for it).
  Journal k;
  EXPECT_FALSE(k.open("/nonexistent-ciq-folder/journal.jsonl", err));
  EXPECT_EQ(k.errorNumber(), ENOENT) << err;
}

// results.csv, the lock and the other whole-file writes check every write
// and the close: on a full tmpfs the error names the file and ENOSPC (it
// said "cannot write <file>" only, and results.csv's failure was a warning).
TEST(DiskFault, AtomicWriteSaysTheErrno) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to mount a small tmpfs";
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("ciq-full", dir);
  std::string d = dir.str().str();
  if (mount("tmpfs", d.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here: " << strerror(errno);
  std::string err;
  EXPECT_TRUE(writeFileAtomically(d + "/fill", std::string(60 * 1024, 'x'), err)) << err;
  int errNo = 0;
  EXPECT_FALSE(writeFileAtomically(d + "/results.csv", std::string(16 * 1024, 'y'), err, false, &errNo));
  EXPECT_EQ(errNo, ENOSPC); // the caller's advice follows it (remedyFor)
  EXPECT_NE(err.find("cannot write " + d + "/results.csv.tmp."), std::string::npos) << err;
  EXPECT_NE(err.find(": No space left on device (ENOSPC)"), std::string::npos) << err;
  EXPECT_FALSE(llvm::sys::fs::exists(d + "/results.csv"));
  auto f = diskFaultOfFailedTool("", {d});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->err, ENOSPC);
  EXPECT_EQ(f->path, d);
  umount2(d.c_str(), MNT_DETACH);
  llvm::sys::fs::remove_directories(d);
}
