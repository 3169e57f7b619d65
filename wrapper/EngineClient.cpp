#include "wrapper/EngineClient.h"
#include "common/EnvNames.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <sys/stat.h>

namespace ciq::wrapper {

double socketTimeoutFromEnv() {
  const char *v = std::getenv(env::SocketTimeout);
  if (!v || !*v)
    return 20;
  char *end = nullptr;
  double d = std::strtod(v, &end);
  return end && *end == '\0' && d > 0 ? d : 20;
}

std::string EngineClient::unreachable(const std::string &why) const {
  std::ostringstream s;
  s << "the ciq engine of this tuning run did not answer on CIQ_SOCKET=" << path_ << " within "
    << timeout_ << " s (" << why
    << "); is `ciq tune` still running? Raise CIQ_SOCKET_TIMEOUT (seconds) if the engine is busy";
  return s.str();
}

// A CIQ_SOCKET with no socket file, or one nobody listens on, is left over
// from a run that ended (a shell or a reconfigure kept the variable): the
// engine listens before it starts any build, so waiting cannot help, and only
// compiles of a live tuning run need the engine.
bool EngineClient::noLiveRun() {
  struct stat st;
  if (stat(path_.c_str(), &st) == 0 || errno != ENOENT)
    return false;
  unchanged_ = true;
  notice_ = "CIQ_SOCKET=" + path_ +
            " does not exist, so no `ciq tune` run is live: compiling without a candidate; unset CIQ_SOCKET "
            "(a shell or a reconfigure kept it from an earlier run)";
  return true;
}

// A compile the engine itself started (its build gave it CIQ_ENGINE_TOKEN)
// whose engine is gone was killed with it: it fails at once. Compiling
// without a candidate, as for a variable a shell kept, let a killed search's
// build run on for seconds.
bool EngineClient::engineGone(const CompileRequest &req) {
  if (req.engineToken.empty())
    return false;
  unchanged_ = false;
  notice_.clear();
  return true;
}

std::optional<CandidateMessage> EngineClient::requestCandidate(const CompileRequest &req) {
  if (noLiveRun()) {
    if (engineGone(req))
      error_ = "the ciq engine that started this build has ended (CIQ_SOCKET=" + path_ +
               " does not exist): the compile stops with it; `ciq resume` builds the candidate again";
    return std::nullopt;
  }
  std::string err;
  sock_ = connectUnix(path_, timeout_, err);
  if (!sock_ && err == std::strerror(ECONNREFUSED)) {
    unchanged_ = true;
    notice_ = "nothing listens on CIQ_SOCKET=" + path_ +
              " (the `ciq tune` run that made it has ended): compiling without a candidate; unset CIQ_SOCKET";
    if (engineGone(req))
      error_ = "the ciq engine that started this build has ended (nothing listens on CIQ_SOCKET=" + path_ +
               "): the compile stops with it; `ciq resume` builds the candidate again";
    return std::nullopt;
  }
  if (!sock_ && err.rfind(kRefusedSocket, 0) == 0) { // refused at once, for who answers: no timeout to raise
    error_ = err + "; the compile fails rather than take options from another user's process (the run directory "
                   "of `ciq tune` must be writable by its user alone)";
    return std::nullopt;
  }
  if (!sock_) {
    error_ = unreachable(err);
    return std::nullopt;
  }
  if (!sock_->send(makeMessage("hello", req))) {
    error_ = unreachable(sock_->error());
    return std::nullopt;
  }
  auto msg = sock_->receive(timeout_);
  if (!msg) {
    error_ = unreachable(sock_->error().empty() ? "connection closed" : sock_->error());
    return std::nullopt;
  }
  std::string op, message = "(no message)";
  JsonFields f(*msg, "the answer of the ciq engine at " + path_);
  f.need("op", op).opt("message", message);
  if (!f.ok()) {
    error_ = f.error();
    return std::nullopt;
  }
  if (op == "error") {
    error_ = "the ciq engine refused this compile: " + message;
    return std::nullopt;
  }
  if (op == "pass") { // not a compile of the tuned targets (a try_compile, another target)
    unchanged_ = true;
    return std::nullopt;
  }
  if (op != "candidate") {
    error_ = "the ciq engine at " + path_ + " sent '" + op +
             "' where a candidate was expected (wrapper and engine of different versions?)";
    return std::nullopt;
  }
  CandidateMessage c;
  std::string why;
  if (!readJson(*msg, c, why)) {
    error_ = "malformed candidate from the ciq engine at " + path_ + ": " + why;
    return std::nullopt;
  }
  return c;
}

bool EngineClient::sendReceipt(const Receipt &r) {
  if (!sock_ || !sock_->send(makeMessage("receipt", r))) {
    error_ = unreachable(sock_ ? sock_->error() : "not connected");
    return false;
  }
  auto msg = sock_->receive(timeout_);
  std::string op;
  if (msg)
    JsonFields(*msg, "").opt("op", op);
  if (msg && op == "error") { // the engine read it and said why it does not count
    std::string why = "(no reason given)";
    JsonFields(*msg, "").opt("message", why);
    error_ = "the ciq engine refused this compile's receipt: " + why;
    return false;
  }
  if (!msg || op != "ack") {
    error_ = unreachable(msg ? "no ack for the receipt" : "no ack for the receipt: " + sock_->error());
    return false;
  }
  return true;
}

} // namespace ciq::wrapper
