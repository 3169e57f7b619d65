// Whole-file reads and atomic writes, the one copy the engine, the wrapper
// and the lockfile code share.
#pragma once
#include <optional>
#include <string>

namespace ciq {

// The file's bytes; nullopt when it cannot be read, with `error` (when
// given) saying "<path>: cannot be read (<why>)".
std::optional<std::string> readWholeFile(const std::string &path, std::string *error = nullptr);

// A small record ciq wrote itself into a folder of its own (a pid file, a
// process record): read only when it is a regular file of this user's,
// reached without following a link, and at most `maxBytes` (a FIFO or a
// device in its place is never opened blocking, never read without end).
// `dirFd`: the folder, for a name read from it (AT_FDCWD: `path` as given).
std::optional<std::string> readOwnFile(const std::string &path, size_t maxBytes, int dirFd = -100 /*AT_FDCWD*/);

// A file another program wrote for ciq to read (a benchmark's kernel trace):
// read only when it is a regular file reached without following a link,
// opened without blocking (a FIFO in its place never hangs the engine) and
// at most `maxBytes` (a link to /dev/zero never reads without end). Else
// nullopt with `error` "<path>: <why>; <what to do>".
std::optional<std::string> readRegularFile(const std::string &path, size_t maxBytes, std::string &error);

// Writes `bytes` to "<path>.tmp.<pid>" and renames it over `path`, so a
// concurrent reader sees the old file or the new one, never half of one.
// Creates the parent folders. `durable`: fsync the file and its folder, so
// the new content survives a crash of the machine, not only of the process.
// On failure `error` names the file and the errno, and `errNo` (when given)
// holds the errno, for the caller to say what to do (remedyFor, DiskFault.h).
bool writeFileAtomically(const std::string &path, const std::string &bytes, std::string &error,
                         bool durable = false, int *errNo = nullptr);

// Whether a file can be created in the folder `dir` now: creates a file of
// a unique name there and removes it (access(2) says yes to root on a
// read-only mount). False with `error` "<dir>: <why>" and `errNo`: ENOENT
// for a folder that does not exist.
bool canCreateFileIn(const std::string &dir, std::string &error, int *errNo = nullptr);

// Removes `path` and, when it is a folder, everything under it. A link is
// removed, never what it leads to: llvm::sys::fs::remove_directories lists
// the folder a link leads to and empties it (run_dir/programs linked to a
// bigger disk lost that folder's other files). Entries under the folder are
// never followed either. False when something could not be removed.
bool removeTree(const std::string &path);

// Removes the temporary copies "<name>.tmp.<pid>" that a writer of `path`
// killed before its rename left beside it (a kill -9 of ciq tune while it
// wrote the lock left one in the project's source folder, for `git add` to
// commit), those of processes no longer alive on this host. Called by the
// lock writers only: it lists the folder, which the writes of the wrapper's
// hot path (ACF staging, the compiler-version cache) must not pay for.
void removeKilledWritersTemps(const std::string &path);

} // namespace ciq
