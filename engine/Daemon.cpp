#include "Daemon.h"
#include "Sha256.h"

#include <chrono>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq {

Daemon::~Daemon() { stop(); }

std::string socketPathFor(const std::string &runDir) {
  std::string p = runDir + "/engine.sock";
  if (p.size() < 100)
    return p;
  // Deep build trees: a private folder under /tmp named by the run dir's hash.
  std::string dir = "/tmp/ciq-" + std::to_string(getuid());
  mkdir(dir.c_str(), 0700);
  chmod(dir.c_str(), 0700);
  return dir + "/" + sha256Hex(runDir).substr(0, 16) + ".sock";
}

bool Daemon::start(const std::string &socketPath, std::string &error) {
  if (!listener_.listen(socketPath, error))
    return false;
  path_ = socketPath;
  running_ = true;
  acceptThread_ = std::thread([this] { acceptLoop(); });
  return true;
}

void Daemon::stop() {
  if (!running_.exchange(false))
    return;
  if (acceptThread_.joinable())
    acceptThread_.join();
  // A client notices running_ within its 1 s receive timeout.
  while (activeClients_ > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  listener_.close();
}

void Daemon::acceptLoop() {
  while (running_) {
    LineSocket s = listener_.accept(0.2);
    if (!s.valid())
      continue;
    ++activeClients_;
    std::thread([this, sock = std::move(s)]() mutable {
      serve(std::move(sock));
      --activeClients_;
    }).detach();
  }
}

void Daemon::setCandidate(const CandidateMessage &c) {
  std::lock_guard<std::mutex> g(mu_);
  current_ = c;
  receipts_.clear();
}

void Daemon::clearCandidate() {
  std::lock_guard<std::mutex> g(mu_);
  current_.reset();
}

std::vector<Receipt> Daemon::receipts() {
  std::lock_guard<std::mutex> g(mu_);
  return receipts_;
}

void Daemon::setStatus(const nlohmann::json &status) {
  std::lock_guard<std::mutex> g(mu_);
  status_ = status;
}

// One client: a wrapper (hello -> candidate, receipt -> ack), or the CLI.
void Daemon::serve(LineSocket sock) {
  while (running_) {
    auto msg = sock.receive(1.0);
    if (!msg) {
      if (sock.error() == "timed out")
        continue;
      return;
    }
    std::string op = msg->value("op", "");
    int v = msg->value("v", 0);
    if (v != kProtocolVersion) {
      sock.send(makeMessage("error", {{"message", "protocol version " + std::to_string(v) +
                                                      " is not " + std::to_string(kProtocolVersion) +
                                                      "; ciq-ptxas and ciq come from different installs"}}));
      return;
    }
    std::lock_guard<std::mutex> g(mu_);
    if (op == "hello") {
      if (!current_) {
        sock.send(makeMessage("error", {{"message", "the ciq engine is not building a candidate right now; "
                                                    "this compile was started outside the tuning run"}}));
        return;
      }
      sock.send(makeMessage("candidate", *current_));
    } else if (op == "receipt") {
      Receipt r = msg->get<Receipt>();
      if (current_ && r.candidateId == current_->candidateId)
        receipts_.push_back(r);
      sock.send(makeMessage("ack"));
    } else if (op == "status") {
      sock.send(makeMessage("status", status_));
    } else if (op == "stop") {
      stopRequested_ = true;
      sock.send(makeMessage("ack", {{"message", "the engine stops after the current evaluation"}}));
    } else {
      sock.send(makeMessage("error", {{"message", "unknown op '" + op + "'"}}));
    }
  }
}

} // namespace ciq
