// Folders outside the build tree that ciq writes and later trusts: its cache
// (compiler versions, release manifests, downloaded spaces), staged ACFs,
// Slurm scratch workspaces, and the per-user fallback under the temporary
// directory. Another user who could write to such a folder, or replace it
// through a folder above it, could plant an entry ciq believes, or a link
// that turns ciq's next write into a write of the victim's file (under root,
// any file). These checks refuse such folders; the GPU locks, which every
// user shares on purpose, have their own rules (engine/measure/GpuLock.cpp).
#pragma once
#include <optional>
#include <string>
#include <sys/stat.h>

namespace ciq {

// A folder every user may share (the temporary folder, the GPU locks'): ""
// when it is root's or this user's and, where others may write to it,
// sticky (they cannot then rename or remove another's entries); else what is
// wrong, e.g. "belongs to uid 1001, not to root or you (uid 0)" or "has mode 0777".
std::string sharedFolderProblem(const struct stat &st);

// True when `dir` (links resolved) is a folder owned by this user that group
// and others cannot write (a group whose one member is the owner may), and every folder above it is root's or this
// user's and not writable by others unless sticky (as /tmp is). Else false
// with `error`: "<folder> <what is wrong>: <why it matters>" (the caller adds
// what to do).
bool isOwnedDir(const std::string &dir, std::string &error);

// Creates `dir` and its missing parents (mode 0700, before the umask) and
// checks it with isOwnedDir.
bool ensureOwnedDir(const std::string &dir, std::string &error);

// The run directory of a search (<build>/ciq/<target>, or run_dir:): the
// stand-ins it puts first on PATH, the process records whose groups it ends,
// the journal it resumes from. Checked before anything in it is opened or
// written: not a link, and isOwnedDir (created 0700 when `create` and
// missing; when not `create`, a missing folder is no problem).
bool checkRunDir(const std::string &dir, bool create, std::string &error);

// <TMPDIR or /tmp>/ciq-<uid>: this user's own folder under the shared
// temporary directory, for what has no home (no HOME, no XDG_CACHE_HOME).
// Created 0700; refused when it is a link, another user's, or open to group
// or others (someone made it first).
std::optional<std::string> userTempDir(std::string &error);

} // namespace ciq
