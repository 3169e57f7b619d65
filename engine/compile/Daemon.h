// The engine daemon: a Unix socket (mode 0600, never TCP) that hands the
// current candidate to every ciq-ptxas of the builds the engine drives, and
// collects their receipts. Also answers `ciq status` and `ciq stop`.
#pragma once
#include "common/Protocol.h"
#include "common/Socket.h"
#include "engine/compile/ReceiptCheck.h"

#include <atomic>
#include <sys/types.h>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ciq {

class Daemon {
public:
  Daemon();
  ~Daemon();
  // Listens on socketPath; a path too long for sun_path falls back to a
  // private folder under /tmp (see socketPathFor).
  bool start(const std::string &socketPath, std::string &error);
  void stop();
  const std::string &socketPath() const { return path_; }
  // "" while the socket file is the one start() bound; else what became of it
  // ("was removed", "was replaced by a socket of uid 65534"): the builds'
  // compiles then met another socket, which the wrapper refuses.
  std::string socketProblem() const;

  void setCandidate(const CandidateMessage &c);
  // The objects of the tuned targets: a launcher compile of anything else (a
  // try_compile, another target) is answered "pass" and never gets a
  // candidate. Empty: every compile gets one.
  void setTunedOutputs(std::set<std::string> outputs);
  // Date a tuned object to 1970 as its receipt arrives, before the ack lets
  // its compile end (CandidateBuild.cpp: why, and under which build tools).
  void setBackdateOnReceipt(bool on) { backdateOnReceipt_ = on; }
  void clearCandidate();
  // Receipts of the current candidate since it was set.
  std::vector<Receipt> receipts();

  // What `ciq status` prints (a JSON object kept up to date by the engine).
  void setStatus(const nlohmann::json &status);
  bool stopRequested() const { return stopRequested_; }

  // This engine instance's token: given to the builds it starts
  // (CIQ_ENGINE_TOKEN); hellos and receipts without it are refused.
  const std::string &token() const { return token_; }
  // Refused connections and messages are appended here (one line each).
  void setLogPath(const std::string &path) { logPath_ = path; }
  int rejectedMessages() const { return rejected_; }
  // Receipts refused by checkReceipt (ReceiptCheck.h), and the last one's why.
  int refusedReceipts() const { return refusedReceipts_; }
  std::string lastRefusedReceipt();

  static constexpr int kMaxClients = 256;

private:
  void acceptLoop();
  void serve(LineSocket sock);
  void serveMessages(LineSocket &sock, int &trackedGroup);
  // `answered`: this connection's hello and the candidate it was given.
  bool handle(LineSocket &sock, const std::string &op, const nlohmann::json &msg, int &trackedGroup,
              std::optional<AnsweredHello> &answered);
  bool handleReceipt(LineSocket &sock, const nlohmann::json &msg, std::optional<AnsweredHello> &answered);
  void refuse(LineSocket &sock, const std::string &message);
  void log(const std::string &line);
  static std::string nowStamp();

  UnixListener listener_;
  std::string path_;
  dev_t socketDev_ = 0;
  ino_t socketIno_ = 0;
  std::thread acceptThread_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stopRequested_{false};
  std::mutex mu_;
  std::optional<CandidateMessage> current_;
  std::vector<Receipt> receipts_;
  std::set<std::string> tunedOutputs_;
  std::atomic<bool> backdateOnReceipt_{false};
  nlohmann::json status_ = nlohmann::json::object();
  // Client threads are detached (one per compile: an overnight search makes
  // thousands); stop() waits for this count to reach zero instead of joining.
  std::atomic<int> activeClients_{0};
  std::string token_;
  std::string logPath_;
  std::mutex logMu_;
  std::atomic<int> rejected_{0};
  std::atomic<int> refusedReceipts_{0};
  std::string lastRefusedReceipt_;   // under logMu_
};

// A socket path for a run directory that fits in sun_path (108 bytes): in
// the run directory, else in $XDG_RUNTIME_DIR/ciq or a 0700 folder of this
// user in the temporary directory (owner and mode verified; false with a
// one-line error when it is not private).
bool socketPathFor(const std::string &runDir, std::string &path, std::string &error);

} // namespace ciq
