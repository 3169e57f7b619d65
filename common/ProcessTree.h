// Every process a run starts ends with that run, including those that left
// its process group (setsid, a daemon's double fork) or whose parent exited.
//
// A process group reaches only what stays in it. This process becomes a
// child subreaper (PR_SET_CHILD_SUBREAPER), so an orphan anywhere below it
// is re-parented to it instead of to init, and stays a descendant: found by
// walking /proc's parent links from this process, killed and reaped here.
// Each run's environment carries a tag (CIQ_PROCESS_TAGS, one word per run
// that encloses it), so that the end of one run (one worker's benchmark)
// ends only its own descendants, not another worker's build.
//
// No cgroup: not writable everywhere (containers, CI runners); no
// /proc/<pid>/task/<tid>/children either: only kernels with
// CONFIG_PROC_CHILDREN have it. /proc/<pid>/stat is everywhere.
#pragma once
#include <string>

namespace ciq {

// PR_SET_CHILD_SUBREAPER on this process. The setting survives execve, so
// a process that execs a compiler in its place turns it off first.
void becomeSubreaper();
void stopBeingSubreaper();

// A new tag for one run ("<pid>.<n>"), and the value of CIQ_PROCESS_TAGS
// its child gets: the inherited value with the tag added.
std::string newRunTag();
std::string runTagsValue(const std::string &tag);

// Kills (SIGKILL) every live descendant of this process whose environment
// carries `tag`, again until none is left (a dying parent's children come
// back re-parented), and reaps those that are its children; also reaps
// orphans that already ended here (zombies) unless `isLiveSpawn` names them
// (another run's child, which that run reaps itself). Returns how many were
// killed. Bounded: gives up after about 10 s (a process stuck in the kernel).
int endTaggedDescendants(const std::string &tag, bool (*isLiveSpawn)(int pid));

// Async-signal-safe (open, getdents64, read, kill, waitpid, nanosleep):
// kills every descendant and reaps until this process has no child left, or
// `seconds` passed. For the termination handler and the end of `ciq`.
void endAllDescendants(double seconds);

// Async-signal-safe: sends `sig` to every live descendant of this process
// (whatever its group or session); returns how many it signalled. For the
// build guard (ciq-build-guard), which asks a build to end before it ends it.
int signalAllDescendants(int sig);

// True when this process has at least one child (a zombie included).
bool haveChildren();

} // namespace ciq
