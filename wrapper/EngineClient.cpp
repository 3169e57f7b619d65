#include "EngineClient.h"

#include <cstdlib>
#include <sstream>

namespace ciq::wrapper {

double socketTimeoutFromEnv() {
  const char *v = std::getenv("CIQ_SOCKET_TIMEOUT");
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

std::optional<CandidateMessage> EngineClient::requestCandidate(const CompileRequest &req) {
  std::string err;
  sock_ = connectUnix(path_, timeout_, err);
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
  std::string op = msg->value("op", "");
  if (op == "error") {
    error_ = "the ciq engine refused this compile: " + msg->value("message", "(no message)");
    return std::nullopt;
  }
  if (op != "candidate") {
    error_ = "the ciq engine at " + path_ + " sent '" + op +
             "' where a candidate was expected (wrapper and engine of different versions?)";
    return std::nullopt;
  }
  try {
    return msg->get<CandidateMessage>();
  } catch (const nlohmann::json::exception &e) {
    error_ = "malformed candidate from the ciq engine at " + path_ + ": " + e.what();
    return std::nullopt;
  }
}

bool EngineClient::sendReceipt(const Receipt &r) {
  if (!sock_ || !sock_->send(makeMessage("receipt", r))) {
    error_ = unreachable(sock_ ? sock_->error() : "not connected");
    return false;
  }
  auto msg = sock_->receive(timeout_);
  if (!msg || msg->value("op", "") != "ack") {
    error_ = unreachable(msg ? "no ack for the receipt" : "no ack for the receipt: " + sock_->error());
    return false;
  }
  return true;
}

} // namespace ciq::wrapper
