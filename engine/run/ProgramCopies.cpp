// The search keeps a copy of the programs it measured (issue 49 item 2):
// every candidate it measures with a runtime objective is copied right after
// its runs (snapshotBenchmark: the program and benchmark.artifacts), so the
// finalists run those copies instead of building the baseline and the best
// candidates again, and a minimization trial or an attribution row with the
// configuration of a searched candidate (the winner without one group is
// often one) runs its copy too. The copies are bounded in bytes: past
// kProgramCopyBytes the worst-ranked go first, never the baseline's or
// those of binaries that could still be finalists.
// A copy is whole once its command.json is written (last, atomically; with
// the folders its paths are under, ProgramCopyCommand.h): a
// kill while copying leaves a folder without it, which is never used, and a
// resumed tune takes up the whole copies of the journal's candidates from
// disk (and only a resumed tune: a search never runs a copy it did not make
// or adopt, so one left behind by an earlier search is never measured).
#include "engine/run/ProgramCopies.h"
#include "engine/run/ProgramCopyCommand.h"
#include "common/FileIO.h"
#include "common/JsonRead.h"
#include "engine/measure/ArtifactInstall.h"
#include "engine/compile/BenchmarkProgram.h"
#include "engine/search/Search.h"
#include "engine/winner/Objectives.h"

#include <algorithm>
#include <set>
#include <llvm/Support/FileSystem.h>

#include <llvm/Support/Path.h>

namespace ciq {

namespace {

// Enough for a few dozen copies of a benchmark program with its libraries;
// a program of hundreds of MB (an extension module with its kernels) keeps
// the finalists' copies at least.
constexpr uint64_t kProgramCopyBytes = 1ull << 30;

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

bool isRegularFile(const std::string &path) {
  llvm::sys::fs::file_status st;
  return !llvm::sys::fs::status(path, st) && llvm::sys::fs::is_regular_file(st);
}

// The files a copy's command names in its folder: the programs, and the
// manifest after CIQ_BUILD_ARTIFACTS= with the copies it lists.
bool filesThere(const std::string &dir, const std::vector<std::string> &cmd) {
  for (const auto &arg : cmd) {
    size_t at = arg.find(dir + "/");
    if (at == std::string::npos)
      continue;
    if (!isRegularFile(arg.substr(at)))
      return false;
  }
  std::string manifest = artifactManifestOf(cmd), err;
  if (manifest.empty())
    return true;
  auto files = readArtifactManifest(manifest, err);
  return files && std::all_of(files->begin(), files->end(), [](const ArtifactCopy &a) { return isRegularFile(a.copy); });
}

// A copy on disk (a resumed tune's): its command when command.json reads as
// one and the files it names in the folder are there. A folder a kill cut
// short, or one whose program was deleted since, is not used: its finalists
// failed on every resume, each time sent back to `ciq resume`. A run dir or
// build tree moved since the copy was made has its paths rewritten to where
// they are now (readProgramCopy).
std::optional<std::vector<std::string>> wholeCopy(const std::string &dir, const std::string &buildDir) {
  std::string err;
  if (!isRegularFile(commandFile(dir)))
    return std::nullopt;
  auto cmd = readProgramCopy(dir, buildDir, err);
  if (!cmd || cmd->empty() || !filesThere(dir, *cmd))
    return std::nullopt;
  return cmd;
}

// A worker's copy as the main build tree's (workers: N): the command's
// paths into the worker's build tree (rebased there by prepareWorkerConfig)
// and the places of its artifacts name the main tree's, where the finalists
// run. Placed in the worker's tree, a finalist's artifacts were never the
// files its benchmark loaded: it measured the main tree's last build, and a
// 1.12x winner of the stand-in came out "not significantly better".
bool asMainTreeCopy(const std::string &workerBuild, const std::string &mainBuild, std::vector<std::string> &cmd,
                    std::string &error) {
  if (workerBuild == mainBuild)
    return true;
  // As prepareWorkerConfig rebased them: a path that starts with the tree.
  auto rebase = [&](std::string &s) {
    if (s.rfind(workerBuild, 0) == 0 && (s.size() == workerBuild.size() || s[workerBuild.size()] == '/'))
      s = mainBuild + s.substr(workerBuild.size());
  };
  for (auto &arg : cmd)
    rebase(arg);
  std::string manifest = artifactManifestOf(cmd);
  if (manifest.empty())
    return true;
  auto files = readArtifactManifest(manifest, error);
  if (!files)
    return false;
  for (auto &a : *files)
    rebase(a.place);
  return writeArtifactManifest(manifest, *files, error);
}

// The folders copy() makes are named by a search candidate's id
// (c0042): nothing else in programs/ is removed (it may be a link the user
// made to a folder of theirs).
bool isCandidateId(const std::string &name) {
  return name.size() > 1 && name[0] == 'c' && name.find_first_not_of("0123456789", 1) == std::string::npos;
}

} // namespace

void ProgramCopies::decide(bool runtimeObjective, bool slurm) {
  kept_ = runtimeObjective && !slurm && cfg_.benchmark.enabled && cfg_.benchmark.finalists >= 0;
}

// In the worker's thread, right after its candidate was measured: the
// worker's build tree holds that candidate's program until its next build.
std::string ProgramCopies::copy(const TuneConfig &workerCfg, const Evaluation &e, bool compilesAtRunTime) {
  if (!kept_ || !e.ok || !e.duplicateKind.empty() || e.runs.empty())
    return "";
  std::string dir = folder() + "/" + e.candidateId, err;
  removeTree(dir);
  auto cmd = snapshotBenchmark(workerCfg, dir, err, compilesAtRunTime);
  if (cmd && !asMainTreeCopy(workerCfg.buildDir, cfg_.buildDir, *cmd, err))
    cmd.reset();
  std::string bytes = cmd ? programCopyJson(*cmd, dir, cfg_.buildDir) : "";
  if (!cmd || !writeFileAtomically(commandFile(dir), bytes, err)) {
    // No copy: the finalists build this one again, as they always did.
    removeTree(dir);
    std::lock_guard<std::mutex> lock(mutex_);
    if (failureNoted_)
      return "";
    failureNoted_ = true;
    return "programs: no copy of " + e.candidateId + "'s program was kept (" + err +
           "); a finalist without one is built again";
  }
  std::lock_guard<std::mutex> lock(mutex_);
  copies_[e.candidateId] = {*cmd, bytesUnder(dir)};
  return "";
}

// The copy measured for evals[i]'s binary: its own, or (a twin) that of the
// candidate it shares its binary with; nullopt when none is kept.
std::optional<std::vector<std::string>> ProgramCopies::find(const std::vector<Evaluation> &evals, size_t i) {
  std::string key = reuseKey_(evals[i]);
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t j = 0; j < evals.size(); ++j) {
    if (j != i && (key.empty() || reuseKey_(evals[j]) != key))
      continue;
    if (auto it = copies_.find(evals[j].candidateId); it != copies_.end())
      return it->second.command;
  }
  return std::nullopt;
}

// A resumed tune: the whole copies of the journal's candidates are taken up
// and count toward the bound again (outside it, each resume could add
// another GiB); a candidate's folder the journal has no measured candidate
// for (the kill came between its copy and its record: its id is given
// again, perhaps to another configuration) or that is not whole is removed.
void ProgramCopies::adopt(const std::vector<Evaluation> &evals) {
  if (!kept_)
    return;
  std::set<std::string> ids;
  for (const auto &e : evals)
    if (e.ok && e.duplicateKind.empty())
      ids.insert(e.candidateId);
  std::vector<std::string> stale;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(folder(), ec, false), end; it != end && !ec; it.increment(ec)) {
    std::string dir = it->path(), id = llvm::sys::path::filename(dir).str();
    if (!isCandidateId(id))
      continue;
    std::optional<std::vector<std::string>> cmd;
    if (ids.count(id))
      cmd = wholeCopy(dir, cfg_.buildDir);
    if (!cmd) {
      stale.push_back(dir);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    copies_[id] = {*cmd, bytesUnder(dir)};
  }
  for (const auto &dir : stale)
    removeTree(dir);
  prune(evals);
}

// The finalists, one of which has no copy (the disk refused it, or it was
// pruned): it is built and copied again, as before the search kept copies,
// and the copies of the binaries that are no finalist go first, or on a
// full disk they hold the space that copy needs (the tune failed there
// with "No space left on device" where it used to pass).
void ProgramCopies::keepOnlyCopiesOf(const std::vector<Evaluation> &evals, const std::vector<size_t> &order,
                                     Commands &offered) {
  std::set<std::string> keys, ids;
  for (size_t i : order) {
    ids.insert(evals[i].candidateId);
    if (!reuseKey_(evals[i]).empty())
      keys.insert(reuseKey_(evals[i]));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto &e : evals) {
    auto it = copies_.find(e.candidateId);
    if (it == copies_.end() || ids.count(e.candidateId) || (!reuseKey_(e).empty() && keys.count(reuseKey_(e))))
      continue;
    removeTree(folder() + "/" + e.candidateId);
    copies_.erase(it);
  }
  // A copy offered already (offer) is no longer there to run.
  for (auto it = offered.begin(); it != offered.end();) {
    bool gone = std::any_of(it->second.begin(), it->second.end(), [&](const std::string &a) {
      size_t at = a.find(folder() + "/");
      return at != std::string::npos && !llvm::sys::fs::exists(a.substr(at));
    });
    it = gone ? offered.erase(it) : std::next(it);
  }
}

// After each record: past kProgramCopyBytes, the copies of the worst-ranked
// binaries go (never the baseline's, nor those that could be finalists).
void ProgramCopies::prune(const std::vector<Evaluation> &evals) {
  if (!kept_ || evals.empty())
    return;
  std::vector<ScoredPoint> pts;
  for (const auto &e : evals)
    pts.push_back({e.point, e.ok, normalizedObjectives(cfg_, e), e.generation});
  std::vector<size_t> ranked = rankOrder(pts, false);
  std::set<std::string> finalists = {reuseKey_(evals[0])};
  size_t most = (size_t)std::max(1, cfg_.benchmark.finalists) + 1;
  for (size_t i : ranked) {
    if (finalists.size() >= most || !evals[i].ok)
      break;
    finalists.insert(reuseKey_(evals[i]));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = 0;
  for (const auto &[id, copy] : copies_)
    total += copy.bytes;
  // Worst first: the evaluations outside the ranking (INVALID), then the
  // ranking from its end.
  std::vector<size_t> order;
  for (size_t i = 0; i < evals.size(); ++i)
    if (std::find(ranked.begin(), ranked.end(), i) == ranked.end())
      order.push_back(i);
  order.insert(order.end(), ranked.rbegin(), ranked.rend());
  for (size_t i : order) {
    if (total <= kProgramCopyBytes)
      break;
    const Evaluation &e = evals[i];
    auto it = copies_.find(e.candidateId);
    if (it == copies_.end() || i == 0 || (!reuseKey_(e).empty() && finalists.count(reuseKey_(e))))
      continue;
    total -= it->second.bytes;
    removeTree(folder() + "/" + e.candidateId);
    copies_.erase(it);
  }
}

// The phases after the search (finalists, minimization, attribution) find
// each searched configuration's copy by its rendered hash, as they find
// the builds they made themselves.
void ProgramCopies::offer(const std::vector<Evaluation> &evals, Commands &offered) {
  if (!kept_)
    return;
  for (size_t i = 0; i < evals.size(); ++i)
    if (evals[i].ok && !offered.count(evals[i].rendered.hash()))
      if (auto cmd = find(evals, i))
        offered[evals[i].rendered.hash()] = *cmd;
}

} // namespace ciq
