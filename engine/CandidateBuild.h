// Building one candidate through the user's own build: the daemon hands the
// candidate to every ciq-ptxas, the target's CUDA objects are cleaned and
// rebuilt, and the receipts prove each translation unit got the candidate.
#pragma once
#include "BuildDriver.h"
#include "Config.h"
#include "Daemon.h"
#include "Evaluation.h"

#include <map>
#include <string>

namespace ciq {

class CandidateBuilder {
public:
  explicit CandidateBuilder(const TuneConfig &cfg) : cfg_(cfg), driver_(cfg) {}
  ~CandidateBuilder() { restore(); }

  // Finds the target's CUDA objects, copies ACFs under their hash, reads the
  // project's lock (whose arguments are kept out of candidates), and starts
  // the daemon on socketPath.
  bool start(const std::string &socketPath, std::string &error);

  // Rebuilds with e.rendered. Fills ok/reason/message, kernels, objects,
  // deviceCodeSha256, buildMs, log, replay. A missing receipt is a stale
  // build: e.reason == stale_build, and the caller must stop.
  void build(Evaluation &e, const std::string &logPath);

  CandidateMessage messageFor(const Evaluation &e) const;
  // Removes the last candidate's objects (the next plain build recompiles
  // them with the user's own flags) and stops the daemon.
  void restore();

  Daemon &daemon() { return daemon_; }
  const BuildDriver &driver() const { return driver_; }

private:
  const TuneConfig &cfg_;
  BuildDriver driver_;
  Daemon daemon_;
  std::map<std::string, std::string> acfCopy_;   // sha256 -> path under run/acf
  std::vector<std::string> stripArgs_;
  bool started_ = false;
};

} // namespace ciq
