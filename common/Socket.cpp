#include "common/Socket.h"
#include "common/JsonRead.h"

#include <cerrno>
#include <cstdio>
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
    scanned_ = o.scanned_;
    o.fd_ = -1;
  }
  return *this;
}

LineSocket::~LineSocket() {
  if (fd_ >= 0)
    ::close(fd_);
}

bool LineSocket::send(const nlohmann::json &msg) {
  // Invalid UTF-8 (a path, a quoted bad message) is replaced, never thrown on.
  std::string line = msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
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

// Takes one line out of the buffer if a newline arrived. Only bytes not
// searched before are searched (a long line arriving in chunks costs linear
// time, not quadratic).
std::optional<std::string> LineSocket::takeLine() {
  size_t nl = buf_.find('\n', scanned_);
  if (nl == std::string::npos) {
    scanned_ = buf_.size();
    return std::nullopt;
  }
  std::string line = buf_.substr(0, nl);
  buf_.erase(0, nl + 1);
  scanned_ = 0;
  return line;
}

std::optional<nlohmann::json> LineSocket::receive(double timeoutSeconds) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeoutSeconds);
  while (true) {
    if (auto line = takeLine()) {
      nlohmann::json j;
      std::string why;
      if (!parseJson(*line, "message", j, why) || !j.is_object()) {
        error_ = "malformed message: " + (why.empty() ? "not a JSON object" : why) + ": " + line->substr(0, 200);
        return std::nullopt;
      }
      return j;
    }
    if (buf_.size() > maxLineBytes_) {
      error_ = "message longer than " + std::to_string(maxLineBytes_) + " bytes without a newline";
      buf_.clear();
      scanned_ = 0;
      return std::nullopt;
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
    char chunk[65536];
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

bool peerIsThisUser(int fd, std::string &error) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    error = std::string("cannot read the peer's credentials (SO_PEERCRED): ") + strerror(errno);
    return false;
  }
  if (cred.uid != getuid()) {
    error = "the process at the other end (pid " + std::to_string(cred.pid) + ") belongs to uid " +
            std::to_string(cred.uid) + ", not to this user (uid " + std::to_string(getuid()) + ")";
    return false;
  }
  return true;
}

int peerPid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;
}

bool ensurePrivateDirectory(const std::string &dir, std::string &error) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    error = "cannot create " + dir + ": " + strerror(errno);
    return false;
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    error = "cannot inspect " + dir + ": " + strerror(errno);
    return false;
  }
  std::string fix = "; remove it (or set XDG_RUNTIME_DIR to a private directory) and run again";
  if (!S_ISDIR(st.st_mode)) {
    error = dir + " is not a directory (a symbolic link or file in its place)" + fix;
    return false;
  }
  if (st.st_uid != getuid()) {
    error = dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
            std::to_string(getuid()) + "): another user could replace the engine's socket there" + fix;
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    error = dir + " has mode " + mode + ", not 0700: other users could replace the engine's socket there" + fix;
    return false;
  }
  return true;
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
    if (::connect(fd, (sockaddr *)&addr, sizeof addr) == 0) {
      // The engine must be this user's: a socket planted by someone else
      // could answer with options that run their programs as us.
      if (!peerIsThisUser(fd, error)) {
        ::close(fd);
        error = kRefusedSocket + path + ": " + error;
        return std::nullopt;
      }
      return LineSocket(fd);
    }
    int why = errno;
    error = strerror(why);
    ::close(fd);
    // No socket file, or nobody listening: a listener exists before any
    // client is started, so waiting for one cannot help.
    if (why == ENOENT || why == ECONNREFUSED || std::chrono::steady_clock::now() >= deadline)
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
