#include "engine/compile/Daemon.h"
#include "engine/compile/BuildTreeGuard.h"
#include "common/JsonRead.h"
#include "common/OwnedDir.h"
#include "common/Paths.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace ciq {

namespace {

// A fresh random token per engine instance: the compiles of an earlier
// (killed) engine of the same run directory carry another one.
std::string newInstanceToken() {
  std::random_device rd;
  std::string seed = std::to_string(rd()) + "-" + std::to_string(rd()) + "-" + std::to_string(getpid()) + "-" +
                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  return sha256Hex(seed).substr(0, 32);
}

} // namespace

Daemon::Daemon() : token_(newInstanceToken()) {}
Daemon::~Daemon() { stop(); }

bool socketPathFor(const std::string &runDir, std::string &path, std::string &error) {
  // Whatever the socket's path: a run directory another user may write to
  // lets them replace the socket, plant the stand-ins and the process records.
  if (!checkRunDir(runDir, /*create=*/false, error))
    return false;
  path = runDir + "/engine.sock";
  if (path.size() < 100)
    return true;
  // Deep build trees: the user's runtime directory, else a folder of ours in
  // the temporary directory, created 0700 and verified (another user who made
  // it first could otherwise replace the socket and answer as the engine).
  std::string dir;
  if (const char *xdg = getenv("XDG_RUNTIME_DIR"); xdg && *xdg && *xdg == '/' && strlen(xdg) < 60) {
    std::string ignored;
    if (ensurePrivateDirectory(xdg, ignored))
      dir = std::string(xdg) + "/ciq";
  }
  if (dir.empty()) {
    const char *tmp = getenv("TMPDIR");
    std::string base = tmp && *tmp == '/' && strlen(tmp) < 60 ? tmp : "/tmp";
    dir = base + "/ciq-" + std::to_string(getuid());
  }
  if (!ensurePrivateDirectory(dir, error)) {
    error = "the engine's socket folder is unsafe: " + error;
    return false;
  }
  path = dir + "/" + sha256Hex(runDir).substr(0, 16) + ".sock";
  return true;
}

bool Daemon::start(const std::string &socketPath, std::string &error) {
  if (!listener_.listen(socketPath, error))
    return false;
  path_ = socketPath;
  struct stat st;
  if (lstat(socketPath.c_str(), &st) == 0)
    socketDev_ = st.st_dev, socketIno_ = st.st_ino;
  running_ = true;
  acceptThread_ = std::thread([this] { acceptLoop(); });
  return true;
}

std::string Daemon::socketProblem() const {
  if (path_.empty())
    return "";
  struct stat st;
  if (lstat(path_.c_str(), &st) != 0)
    return "was removed";
  if (st.st_dev == socketDev_ && st.st_ino == socketIno_)
    return "";
  return "was replaced by a " + std::string(S_ISSOCK(st.st_mode) ? "socket" : "file") + " of uid " +
         std::to_string(st.st_uid);
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

void Daemon::log(const std::string &line) {
  std::lock_guard<std::mutex> g(logMu_);
  ++rejected_;
  if (logPath_.empty())
    return;
  std::ofstream(logPath_, std::ios::app) << nowStamp() << " " << line << "\n";
}

std::string Daemon::nowStamp() {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

void Daemon::acceptLoop() {
  while (running_) {
    LineSocket s = listener_.accept(0.2);
    if (!s.valid())
      continue;
    std::string why;
    if (!peerIsThisUser(s.fd(), why)) {
      log("refused a connection: " + why);
      continue;
    }
    // Bounded: a client that opens connections without end cannot make the
    // engine start threads without end (one compile holds one connection).
    if (activeClients_ >= kMaxClients) {
      s.send(makeMessage("error", {{"message", "the ciq engine serves " + std::to_string(kMaxClients) +
                                                   " connections already; build with fewer jobs"}}));
      log("refused a connection: " + std::to_string(kMaxClients) + " connections open");
      continue;
    }
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
  current_->engineToken = token_;
  receipts_.clear();
}

void Daemon::setTunedOutputs(std::set<std::string> outputs) {
  std::lock_guard<std::mutex> g(mu_);
  tunedOutputs_ = std::move(outputs);
}

// A launcher compile whose output is no object of the tuned targets
// (try_compile, other targets): it compiles unchanged.
static bool outsideTunedTargets(const CompileRequest &req, const std::set<std::string> &tuned) {
  return !tuned.empty() && req.mode == "launcher" && !tuned.count(req.output);
}

std::string Daemon::lastRefusedReceipt() {
  std::lock_guard<std::mutex> g(logMu_);
  return lastRefusedReceipt_;
}

// A receipt counts only as the answer to this connection's hello, with
// plausible figures (ReceiptCheck.h); one per hello.
bool Daemon::handleReceipt(LineSocket &sock, const nlohmann::json &msg, std::optional<AnsweredHello> &answered) {
  Receipt r;
  std::string why;
  if (!readJson(msg, r, why))
    return refuse(sock, "receipt: " + why), false;
  r.output = physicalPath(r.output);
  std::unique_lock<std::mutex> g(mu_);
  if (std::string bad = checkReceipt(r, answered, tunedOutputs_, token_); !bad.empty()) {
    g.unlock();
    {
      std::lock_guard<std::mutex> l(logMu_);
      lastRefusedReceipt_ = bad;
    }
    ++refusedReceipts_;
    return refuse(sock, bad), false;
  }
  answered.reset();
  // Only a receipt of this engine's current candidate counts.
  if (current_ && r.candidateId == current_->candidateId) {
    receipts_.push_back(r);
    if (backdateOnReceipt_ && tunedOutputs_.count(r.output))
      setFileDate(r.output, kCandidateObjectDate);
  }
  sock.send(makeMessage("ack"));
  return true;
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

// Replies with an error and logs it; the connection ends, the engine goes on.
void Daemon::refuse(LineSocket &sock, const std::string &message) {
  log("refused a message: " + message);
  sock.send(makeMessage("error", {{"message", message}}));
}

// One client: a wrapper (hello -> candidate, receipt -> ack), or the CLI.
void Daemon::serve(LineSocket sock) {
  int trackedGroup = 0;
  serveMessages(sock, trackedGroup);
  if (trackedGroup)
    untrackGroup(trackedGroup);
}

void Daemon::serveMessages(LineSocket &sock, int &trackedGroup) {
  std::optional<AnsweredHello> answered;
  while (running_) {
    auto msg = sock.receive(1.0);
    if (!msg) {
      if (sock.error() == "timed out")
        continue;
      if (sock.error() != "connection closed")
        refuse(sock, sock.error());
      return;
    }
    std::string op;
    int v = 0;
    JsonFields f(*msg, "message");
    f.need("v", v).need("op", op);
    if (!f.ok())
      return refuse(sock, f.error());
    if (v != kProtocolVersion)
      return refuse(sock, "protocol version " + std::to_string(v) + " is not " + std::to_string(kProtocolVersion) +
                              "; ciq-ptxas and ciq come from different installs");
    if (!handle(sock, op, *msg, trackedGroup, answered))
      return;
  }
}

// One message; false ends the connection.
bool Daemon::handle(LineSocket &sock, const std::string &op, const nlohmann::json &msg, int &trackedGroup,
                    std::optional<AnsweredHello> &answered) {
  std::string why;
  if (op == "hello") {
    CompileRequest req;
    if (!readJson(msg, req, why))
      return refuse(sock, "hello: " + why), false;
    req.output = physicalPath(req.output); // as the tuned objects are named (an -o through a link)
    std::lock_guard<std::mutex> g(mu_);
    if (req.engineToken != token_)
      return refuse(sock, "this compile was started by another ciq engine (a search that was killed or has "
                          "ended), not by the one serving " + path_),
             false;
    if (outsideTunedTargets(req, tunedOutputs_)) {
      sock.send(makeMessage("pass"));
      return true;
    }
    if (!current_)
      return refuse(sock, "the ciq engine is not building a candidate right now; "
                          "this compile was started outside the tuning run"),
             false;
    // The compile's group, in reach of this engine's SIGTERM/SIGINT while it runs.
    if (int pg = getpgid(peerPid(sock.fd())); pg > 1 && trackedGroup == 0) {
      trackGroup(pg);
      trackedGroup = pg;
    }
    answered = AnsweredHello{current_->candidateId, current_->candidateHash, req.output, req.mode};
    sock.send(makeMessage("candidate", *current_));
    return true;
  }
  if (op == "receipt")
    return handleReceipt(sock, msg, answered);
  if (op == "status") {
    std::lock_guard<std::mutex> g(mu_);
    sock.send(makeMessage("status", status_));
    return true;
  }
  if (op == "stop") {
    stopRequested_ = true;
    sock.send(makeMessage("ack", {{"message", "the engine stops after the current evaluation"}}));
    return true;
  }
  return refuse(sock, "unknown op '" + op.substr(0, 40) + "'"), false;
}

} // namespace ciq
