// Writes the file system refuses (issue 29): a full (ENOSPC, EDQUOT),
// read-only (EROFS) or failing (EIO) disk. That is never the candidate's
// doing, so it is never an INVALID candidate: the search stops where it
// happened, with one line naming the path and the errno, nothing is recorded
// for the candidate, and `ciq resume` continues once the disk is back. The
// wrapper reports such a compile in its receipt (Receipt::ioErrno); the
// engine checks its own writes (journal, results.csv) and failed builds.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// ENOSPC, EDQUOT, EROFS, EIO.
bool isDiskFault(int err);

// "No space left on device (ENOSPC)": the C library's text and the errno's name.
std::string errnoText(int err);

struct DiskFault {
  int err = 0;        // errno
  std::string path;   // the file or folder the write went to
  // "<path>: No space left on device (ENOSPC)"
  std::string describe() const;
  // What to do about it: remedyFor(err).
  std::string remedy() const;
};

// What a user does about a disk fault, as the clause before "then `ciq
// resume`": "free space" (ENOSPC, EDQUOT), "remount it read-write" (EROFS),
// "check the disk (an I/O error: dmesg, then fsck once it is unmounted)"
// (EIO; a file system that failed may say EIO to an fsync and EROFS to the
// next write, whichever comes first), "make it writable (...)" (EPERM,
// EACCES: permissions, an immutable file), "free space (or make it
// writable)" for 0 (not known) or another errno.
std::string remedyFor(int err);

// Less free space than this (to this user) counts as a full file system: a
// compile that failed writing a large object has removed it again by the
// time its folder is looked at.
constexpr unsigned long long kNearlyFullBytes = 1ull << 20;

// The disk fault a tool's output names in the C library's words ("No space
// left on device", in English or in the language of the environment's
// locale, which the tool printed in), or 0.
int diskFaultInOutput(const std::string &text);

// Why a tool that wrote into `folders` failed, if it was the disk: one of
// them (or its nearest existing parent) is on a read-only file system, has
// less than kNearlyFullBytes (or no inode) free, or refuses a small probe
// file with a disk fault (written and removed again), or the tool's output names
// a disk fault (then the folder with the least free space is named; the
// first when none can be examined). nullopt: the tool failed on its own.
// Some tools report no errno at all (ptxas: "Output file could not be
// opened"; nvcc: "Could not open output file"), hence the folders.
std::optional<DiskFault> diskFaultOfFailedTool(const std::string &output, const std::vector<std::string> &folders);

// The folder compilers write their temporary files to ($TMPDIR, else /tmp).
std::string temporaryFolder();

} // namespace ciq
