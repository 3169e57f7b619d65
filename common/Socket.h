// Newline-delimited JSON over a Unix stream socket: the wrapper <-> engine wire.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ciq {

// One connected stream; messages are one JSON object per line.
class LineSocket {
public:
  explicit LineSocket(int fd = -1) : fd_(fd) {}
  LineSocket(LineSocket &&o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)) { o.fd_ = -1; }
  LineSocket &operator=(LineSocket &&o) noexcept;
  ~LineSocket();
  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool send(const nlohmann::json &msg);
  // Waits up to timeoutSeconds (<=0: forever) for one line; nullopt on EOF,
  // timeout or a line that is not JSON (error() says which).
  std::optional<nlohmann::json> receive(double timeoutSeconds);
  const std::string &error() const { return error_; }

private:
  int fd_;
  std::string buf_;
  std::string error_;
};

// Connects to a socket path, retrying until timeoutSeconds; error says why not.
std::optional<LineSocket> connectUnix(const std::string &path, double timeoutSeconds,
                                      std::string &error);

// A listening socket with mode 0600 (owner only).
class UnixListener {
public:
  ~UnixListener();
  bool listen(const std::string &path, std::string &error);
  // Waits up to timeoutSeconds for a client; invalid socket on timeout.
  LineSocket accept(double timeoutSeconds);
  void close();
  const std::string &path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
};

} // namespace ciq
