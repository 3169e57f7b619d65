// What `ciq tune` shows while it works: one plain line per evaluation, and on
// a terminal a live status line (generation, what the budget counts done and total,
// best so far, invalid rate, ETA) redrawn in place.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

class Progress {
public:
  // counts: what the budget counts, for the status line ("binaries",
  // "device codes", "configurations").
  void begin(int budget, bool verbose, const std::string &counts);
  void generation(int g, int total);
  void building(const std::string &id);
  void measuring(const std::string &id);
  // counted: the distinct binaries so far (what the budget counts, Budget.h).
  void evaluated(const TuneConfig &cfg, const Evaluation &e, const std::vector<Evaluation> &all, const Evaluation *best,
                 int counted);
  void note(const std::string &line);
  // The tune's phase (search, per-kernel stage, finalists, minimization,
  // rehearsal, attribution) and the seconds estimated left (<0: unknown),
  // shown on the status line (issue 49 item 6).
  void phase(const std::string &name, double remainingSeconds);
  void end();
  // For `ciq status`.
  nlohmann::json status(const TuneConfig &cfg, const std::vector<Evaluation> &all) const;

private:
  void clearBar();
  void drawBar(const std::string &activity);

  bool tty_ = false, verbose_ = true;
  int budget_ = 0, generation_ = 0, generations_ = 0, done_ = 0, configurations_ = 0, invalid_ = 0, doneThisRun_ = 0;
  std::string best_, counts_, phase_;
  double remaining_ = -1;
  std::chrono::steady_clock::time_point start_;
  // Workers note (a retried compile, GPU problems) while the search records.
  mutable std::mutex m_;
};

} // namespace ciq
