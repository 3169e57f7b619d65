// The wrapper's side of the tuning-run protocol (docs/protocol.md): one
// connection per compiler invocation, every wait bounded by CIQ_SOCKET_TIMEOUT.
#pragma once
#include "common/Protocol.h"
#include "common/Socket.h"

#include <optional>
#include <string>

namespace ciq::wrapper {

class EngineClient {
public:
  // socketPath: CIQ_SOCKET; timeoutSeconds: CIQ_SOCKET_TIMEOUT (default 20 s).
  EngineClient(std::string socketPath, double timeoutSeconds)
      : path_(std::move(socketPath)), timeout_(timeoutSeconds) {}
  // hello -> candidate. nullopt with error() set when the engine is unreachable,
  // silent past the timeout, or answers {"op":"error"}.
  std::optional<CandidateMessage> requestCandidate(const CompileRequest &req);
  // When requestCandidate returned nullopt: true when this compile runs
  // unchanged instead of failing (no live tuning run behind CIQ_SOCKET, or the
  // engine answered "pass": not a compile of the tuned targets); notice() is
  // then the one line to print, or "".
  bool compileUnchanged() const { return unchanged_; }
  const std::string &notice() const { return notice_; }
  // receipt -> ack.
  bool sendReceipt(const Receipt &r);
  const std::string &error() const { return error_; }
  // The connection to the engine while it is open (-1 otherwise): the kernel
  // closes it when the engine dies, which the compile watches for.
  int connectionFd() const { return sock_ ? sock_->fd() : -1; }

private:
  std::string unreachable(const std::string &why) const;
  bool noLiveRun();
  bool engineGone(const CompileRequest &req);
  std::string path_;
  double timeout_;
  std::optional<LineSocket> sock_;
  std::string error_;
  bool unchanged_ = false;
  std::string notice_;
};

// CIQ_SOCKET_TIMEOUT in seconds (default 20); a malformed value gives the default.
double socketTimeoutFromEnv();

} // namespace ciq::wrapper
