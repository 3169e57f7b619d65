#include "Socket.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace ciq {

LineSocket &LineSocket::operator=(LineSocket &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = o.fd_;
    buf_ = std::move(o.buf_);
    o.fd_ = -1;
  }
  return *this;
}

LineSocket::~LineSocket() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool LineSocket::send(const nlohmann::json &msg) {
  std::string line = msg.dump() + "\n";
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = ::send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error_ = std::string("send failed: ") + strerror(errno);
      return false;
    }
    off += n;
  }
  return true;
}

std::optional<nlohmann::json> LineSocket::receive(double timeoutSeconds) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds);
  while (true) {
    auto nl = buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        error_ = "malformed message: " + line.substr(0, 200);
        return std::nullopt;
      }
      return j;
    }
    int waitMs = -1;
    if (timeoutSeconds > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        error_ = "timed out";
        return std::nullopt;
      }
      waitMs = (int)left;
    }
    pollfd p{fd_, POLLIN, 0};
    int r = poll(&p, 1, waitMs);
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0)
      continue; // deadline checked above
    char chunk[8192];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error_ = "connection closed";
      return std::nullopt;
    }
    buf_.append(chunk, n);
  }
}

static bool fillAddress(const std::string &path, sockaddr_un &addr, std::string &error) {
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    error = "socket path is longer than " + std::to_string(sizeof addr.sun_path - 1) +
            " bytes: " + path;
    return false;
  }
  memcpy(addr.sun_path, path.c_str(), path.size());
  return true;
}

std::optional<LineSocket> connectUnix(const std::string &path, double timeoutSeconds,
                                      std::string &error) {
  sockaddr_un addr;
  if (!fillAddress(path, addr, error))
    return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  while (true) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = strerror(errno);
      return std::nullopt;
    }
    if (::connect(fd, (sockaddr *)&addr, sizeof addr) == 0)
      return LineSocket(fd);
    error = strerror(errno);
    ::close(fd);
    if (std::chrono::steady_clock::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

UnixListener::~UnixListener() { close(); }

bool UnixListener::listen(const std::string &path, std::string &error) {
  sockaddr_un addr;
  if (!fillAddress(path, addr, error))
    return false;
  ::unlink(path.c_str());
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    error = strerror(errno);
    return false;
  }
  // Bind under a restrictive umask so the socket is never world-connectable.
  mode_t old = umask(0177);
  int rc = ::bind(fd_, (sockaddr *)&addr, sizeof addr);
  umask(old);
  if (rc != 0 || ::listen(fd_, 128) != 0) {
    error = "cannot listen on " + path + ": " + strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  chmod(path.c_str(), 0600);
  path_ = path;
  return true;
}

LineSocket UnixListener::accept(double timeoutSeconds) {
  pollfd p{fd_, POLLIN, 0};
  int r = poll(&p, 1, timeoutSeconds > 0 ? (int)(timeoutSeconds * 1000) : -1);
  if (r <= 0)
    return LineSocket();
  return LineSocket(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
}

void UnixListener::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(path_.c_str());
  }
}

} // namespace ciq
