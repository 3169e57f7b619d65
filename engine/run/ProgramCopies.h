// The search's copies of the programs it measured (issue 49 item 2), so the
// finalists, a minimization trial or an attribution row of a searched
// configuration run a copy instead of building it again; bounded in bytes,
// and taken up again by a resumed tune (ProgramCopies.cpp says how). Owned by
// TuneRun; it returns what the user should be told instead of printing it.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

class ProgramCopies {
public:
  // What makes two evaluations one binary (TuneRun::reuseKey; "": none).
  using ReuseKey = std::function<std::string(const Evaluation &)>;
  // A rendered hash -> the command of a program to run (the phases after
  // the search: TuneRun::snapshots_).
  using Commands = std::map<std::string, std::vector<std::string>>;

  // cfg: the tune's (its run_dir and build tree, read when used).
  ProgramCopies(const TuneConfig &cfg, ReuseKey reuseKey) : cfg_(cfg), reuseKey_(std::move(reuseKey)) {}

  // Once the workers started: copies are kept for a runtime objective
  // measured on this host (not on Slurm) whose finalists are measured.
  void decide(bool runtimeObjective, bool slurm);
  bool kept() const { return kept_; }

  // In the worker's thread, right after e was measured (its build tree,
  // workerCfg's, holds e's program until its next build): copies it. The
  // line to tell the user when the first copy fails, else "".
  std::string copy(const TuneConfig &workerCfg, const Evaluation &e, bool compilesAtRunTime);
  // The copy of evals[i]'s binary: its own, or a twin's; nullopt when none.
  std::optional<std::vector<std::string>> find(const std::vector<Evaluation> &evals, size_t i);
  // A resumed tune takes up the whole copies of the journal's candidates.
  void adopt(const std::vector<Evaluation> &evals);
  // After each record: past the bound, the worst-ranked copies go.
  void prune(const std::vector<Evaluation> &evals);
  // Only the copies of the finalists `order` stay (one of them has none);
  // a command offered already whose copy is gone leaves `offered`.
  void keepOnlyCopiesOf(const std::vector<Evaluation> &evals, const std::vector<size_t> &order, Commands &offered);
  // Every searched configuration's copy, offered by its rendered hash.
  void offer(const std::vector<Evaluation> &evals, Commands &offered);

private:
  struct Copy {
    std::vector<std::string> command;
    uint64_t bytes = 0;
  };
  std::string folder() const { return cfg_.runDir + "/programs"; }

  const TuneConfig &cfg_;
  ReuseKey reuseKey_;
  bool kept_ = false;
  std::map<std::string, Copy> copies_;   // candidate id -> its copy
  std::mutex mutex_;                     // workers copy while the search records
  bool failureNoted_ = false;            // under mutex_: one line for the first copy that failed
};

} // namespace ciq
