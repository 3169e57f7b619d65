// The engine daemon: a Unix socket (mode 0600, never TCP) that hands the
// current candidate to every ciq-ptxas of the builds the engine drives, and
// collects their receipts. Also answers `ciq status` and `ciq stop`.
#pragma once
#include "Protocol.h"
#include "Socket.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ciq {

class Daemon {
public:
  ~Daemon();
  // Listens on socketPath; a path too long for sun_path falls back to a
  // private folder under /tmp (see socketPathFor).
  bool start(const std::string &socketPath, std::string &error);
  void stop();
  const std::string &socketPath() const { return path_; }

  void setCandidate(const CandidateMessage &c);
  void clearCandidate();
  // Receipts of the current candidate since it was set.
  std::vector<Receipt> receipts();

  // What `ciq status` prints (a JSON object kept up to date by the engine).
  void setStatus(const nlohmann::json &status);
  bool stopRequested() const { return stopRequested_; }

private:
  void acceptLoop();
  void serve(LineSocket sock);

  UnixListener listener_;
  std::string path_;
  std::thread acceptThread_;
  std::atomic<bool> running_{false};
  std::atomic<bool> stopRequested_{false};
  std::mutex mu_;
  std::optional<CandidateMessage> current_;
  std::vector<Receipt> receipts_;
  nlohmann::json status_ = nlohmann::json::object();
  // Client threads are detached (one per compile: an overnight search makes
  // thousands); stop() waits for this count to reach zero instead of joining.
  std::atomic<int> activeClients_{0};
};

// A socket path for a run directory that fits in sun_path (108 bytes).
std::string socketPathFor(const std::string &runDir);

} // namespace ciq
