// One measurement per GPU at a time, across processes and users: an OS lock
// (flock) on a file named after the GPU's UUID in a directory every user can
// create files in (sticky, like /tmp). A second search on the same GPU waits,
// saying who holds the GPU; the lock ends with the process, even when it is
// killed, so a dead holder never blocks anyone.
#pragma once
#include <functional>
#include <string>

namespace ciq {

// The lock directory: $CIQ_GPU_LOCK_DIR, else <tmp>/ciq-gpu-locks.
std::string gpuLockDir();

class GpuLock {
public:
  GpuLock() = default;
  GpuLock(const GpuLock &) = delete;
  GpuLock &operator=(const GpuLock &) = delete;
  ~GpuLock() { release(); }

  // Blocks until this process holds the GPU `key` (its UUID; "host" when
  // unknown). `holder` is recorded for others to read ("pid 12 alice: ciq
  // tune app"); `waiting` is called once, with the current holder's line,
  // when another process holds it. False with `error` when the lock file
  // cannot be opened.
  bool acquire(const std::string &key, const std::string &holder, std::string &error,
               const std::function<void(const std::string &)> &waiting = {});
  void release();
  bool held() const { return fd_ >= 0; }
  const std::string &path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
};

} // namespace ciq
