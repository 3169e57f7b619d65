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
  LineSocket(LineSocket &&o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)), scanned_(o.scanned_) { o.fd_ = -1; }
  LineSocket &operator=(LineSocket &&o) noexcept;
  ~LineSocket();
  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool send(const nlohmann::json &msg);
  // Waits up to timeoutSeconds (<=0: forever) for one line; nullopt on EOF,
  // timeout, a line that is not a JSON object (bounded nesting) or one longer
  // than maxLineBytes (error() says which).
  std::optional<nlohmann::json> receive(double timeoutSeconds);
  const std::string &error() const { return error_; }
  void setMaxLineBytes(size_t n) { maxLineBytes_ = n; }

private:
  std::optional<std::string> takeLine();
  int fd_;
  std::string buf_;
  size_t scanned_ = 0;                  // bytes of buf_ already searched for '\n'
  size_t maxLineBytes_ = 16u << 20;     // a receipt of a huge TU stays far below this
  std::string error_;
};

// Is the process at the other end of a connected Unix socket this user's
// (SO_PEERCRED)? error says whose it is when not.
bool peerIsThisUser(int fd, std::string &error);
// The pid of the process at the other end (SO_PEERCRED), 0 when unknown.
int peerPid(int fd);

// Creates dir with mode 0700 if missing, then verifies it is a real directory
// owned by this user with no access for others; error says what is wrong.
bool ensurePrivateDirectory(const std::string &dir, std::string &error);

// Connects to a socket path, retrying until timeoutSeconds; error says why not.
// A socket whose listener is another user's is refused at once, with an
// error that begins with kRefusedSocket.
inline constexpr const char *kRefusedSocket = "refusing the engine socket ";
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
