// One measurement per GPU at a time, across processes and users: an OS lock
// (flock) on a file named after the GPU's UUID in a folder every user can
// create files in and no user controls: the system's temporary folder itself
// (root's, sticky), or $CIQ_GPU_LOCK_DIR. A second search on the same GPU
// waits, saying who holds the GPU; the lock ends with the process, even when
// it is killed, so a dead holder never blocks anyone.
//
// Another user may have put anything under the lock's name first. The file
// is opened without following a link, only when it is a regular file with
// one name, and its mode and size are never changed unless it is ours: a
// planted link or hard link cannot turn the lock into a write of the
// victim's file. A folder owned by another user (who could replace the files
// in it) is refused with one line naming it.
#pragma once
#include <functional>
#include <string>

namespace ciq {

// The lock folder: $CIQ_GPU_LOCK_DIR, else <tmp>.
std::string gpuLockDir();
// The lock file of GPU `key` (its UUID; "host" when unknown) in that folder:
// <key>.lock under $CIQ_GPU_LOCK_DIR, else <tmp>/ciq-gpu-<key>.lock.
std::string gpuLockPath(const std::string &key);

class GpuLock {
public:
  GpuLock() = default;
  GpuLock(const GpuLock &) = delete;
  GpuLock &operator=(const GpuLock &) = delete;
  ~GpuLock() { release(); }

  // Blocks until this process holds the GPU `key`. `holder` is recorded for
  // others to read ("pid 12 alice: ciq tune app"); `waiting` is called once,
  // with the current holder's line, when another process holds it. False
  // with `error` when the folder or the file is not one to trust, or cannot
  // be opened.
  bool acquire(const std::string &key, const std::string &holder, std::string &error,
               const std::function<void(const std::string &)> &waiting = {});
  void release();
  bool held() const { return fd_ >= 0; }
  const std::string &path() const { return path_; }

private:
  int fd_ = -1;
  bool writable_ = false; // the holder line may be written into the file
  std::string path_;
};

} // namespace ciq
