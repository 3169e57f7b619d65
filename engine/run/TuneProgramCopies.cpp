// The search keeps a copy of the programs it measured (issue 49 item 2):
// every candidate it measures with a runtime objective is copied right after
// its runs (snapshotBenchmark: the program and benchmark.artifacts), so the
// finalists run those copies instead of building the baseline and the best
// candidates again, and a minimization trial or an attribution row with the
// configuration of a searched candidate (the winner without one group is
// often one) runs its copy too. The copies are bounded in bytes: past
// kProgramCopyBytes the worst-ranked go first, never the baseline's or
// those of binaries that could still be finalists.
// A copy is whole once its command.json is written (last, atomically): a
// kill while copying leaves a folder without it, which is never used, and a
// resumed tune finds the copies of the journal's candidates on disk.
#include "engine/run/TuneRun.h"
#include "common/FileIO.h"

namespace ciq {

namespace {

// Enough for a few dozen copies of a benchmark program with its libraries;
// a program of hundreds of MB (an extension module with its kernels) keeps
// the finalists' copies at least.
constexpr uint64_t kProgramCopyBytes = 1ull << 30;

std::string programsDir(const TuneConfig &cfg) { return cfg.runDir + "/programs"; }
std::string commandFile(const std::string &dir) { return dir + "/command.json"; }

uint64_t bytesUnder(const std::string &dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(it->path(), st, false) && llvm::sys::fs::is_regular_file(st))
      bytes += st.getSize();
  }
  return bytes;
}

} // namespace

bool TuneRun::keepsPrograms() const {
  return runtimeObjective() && !slurm_ && cfg_.benchmark.enabled && cfg_.benchmark.finalists >= 0;
}

// In the worker's thread, right after its candidate was measured: the
// worker's build tree holds that candidate's program until its next build.
void TuneRun::copyProgram(Worker &w, const Evaluation &e) {
  if (!keepsPrograms() || !e.ok || !e.duplicateKind.empty() || e.runs.empty())
    return;
  std::string dir = programsDir(cfg_) + "/" + e.candidateId, err;
  llvm::sys::fs::remove_directories(dir);
  auto cmd = snapshotBenchmark(w.cfg, dir, err, compilesAtRunTime());
  std::string bytes = cmd ? nlohmann::json(*cmd).dump() : "";
  if (!cmd || !writeFileAtomically(commandFile(dir), bytes, err)) {
    // No copy: the finalists build this one again, as they always did.
    llvm::sys::fs::remove_directories(dir);
    return;
  }
  std::lock_guard<std::mutex> lock(programsMutex_);
  programs_[e.candidateId] = {*cmd, bytesUnder(dir)};
}

// The copy measured for evals_[i]'s binary: its own, or (a twin) that of the
// candidate it shares its binary with; nullopt when none is whole.
std::optional<std::vector<std::string>> TuneRun::searchProgram(size_t i) {
  std::string key = reuseKey(evals_[i]);
  for (size_t j = 0; j < evals_.size(); ++j) {
    if (j != i && (key.empty() || reuseKey(evals_[j]) != key))
      continue;
    const std::string &id = evals_[j].candidateId;
    {
      std::lock_guard<std::mutex> lock(programsMutex_);
      if (auto it = programs_.find(id); it != programs_.end())
        return it->second.command;
    }
    // A resumed tune: the copy its killed run made.
    std::string dir = programsDir(cfg_) + "/" + id, err;
    nlohmann::json text;
    std::vector<std::string> cmd;
    if (!llvm::sys::fs::exists(commandFile(dir)) || !parseJsonFile(commandFile(dir), text, err) ||
        !readJson(text, cmd, err) || cmd.empty())
      continue;
    std::lock_guard<std::mutex> lock(programsMutex_);
    programs_[id] = {cmd, bytesUnder(dir)};
    return cmd;
  }
  return std::nullopt;
}

// After each record: past kProgramCopyBytes, the copies of the worst-ranked
// binaries go (never the baseline's, nor those that could be finalists).
void TuneRun::pruneProgramCopies() {
  if (!keepsPrograms() || evals_.empty())
    return;
  std::vector<ScoredPoint> pts;
  for (const auto &e : evals_)
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  std::vector<size_t> ranked = rankOrder(pts, false);
  std::set<std::string> finalists = {reuseKey(evals_[0])};
  size_t most = (size_t)std::max(1, cfg_.benchmark.finalists) + 1;
  for (size_t i : ranked) {
    if (finalists.size() >= most || !evals_[i].ok)
      break;
    finalists.insert(reuseKey(evals_[i]));
  }
  std::lock_guard<std::mutex> lock(programsMutex_);
  uint64_t total = 0;
  for (const auto &[id, copy] : programs_)
    total += copy.bytes;
  // Worst first: the evaluations outside the ranking (INVALID), then the
  // ranking from its end.
  std::vector<size_t> order;
  for (size_t i = 0; i < evals_.size(); ++i)
    if (std::find(ranked.begin(), ranked.end(), i) == ranked.end())
      order.push_back(i);
  order.insert(order.end(), ranked.rbegin(), ranked.rend());
  for (size_t i : order) {
    if (total <= kProgramCopyBytes)
      break;
    const Evaluation &e = evals_[i];
    auto it = programs_.find(e.candidateId);
    if (it == programs_.end() || i == 0 || (!reuseKey(e).empty() && finalists.count(reuseKey(e))))
      continue;
    total -= it->second.bytes;
    llvm::sys::fs::remove_directories(programsDir(cfg_) + "/" + e.candidateId);
    programs_.erase(it);
  }
}

// The phases after the search (finalists, minimization, attribution) find
// each searched configuration's copy by its rendered hash, as they find
// the builds they made themselves.
void TuneRun::offerProgramCopies() {
  if (!keepsPrograms())
    return;
  for (size_t i = 0; i < evals_.size(); ++i)
    if (evals_[i].ok && !snapshots_.count(evals_[i].rendered.hash()))
      if (auto cmd = searchProgram(i))
        snapshots_[evals_[i].rendered.hash()] = *cmd;
}

} // namespace ciq
