#include "engine/executors/slurm/SlurmExecutor.h"
#include "common/FileIO.h"
#include "engine/executors/BatchTwins.h"
#include "engine/executors/Pipeline.h"
#include "common/JsonRead.h"
#include "common/Paths.h"
#include "engine/executors/slurm/ResultRecord.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <chrono>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/FileSystem.h>
#include <map>
#include <thread>

namespace ciq {
using nlohmann::json;

namespace {

// A result record may reach the submitting host a little after its job is
// seen ended (attribute caching of shared file systems).
constexpr double ResultGraceSeconds = 5;
// Job states are asked of slurmctld at most this often (result files are
// looked for at every poll).
constexpr double QueryEverySeconds = 0.5;

// States after which the job runs no more; the rest (PENDING, RUNNING,
// COMPLETING, CONFIGURING, SUSPENDED, REQUEUED...) are waited for.
bool terminal(const std::string &state) {
  static const char *const states[] = {"COMPLETED", "FAILED",   "CANCELLED", "TIMEOUT",       "NODE_FAIL", "PREEMPTED",
                                       "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "VANISHED"};
  for (const char *s : states)
    if (state == s)
      return true;
  return false;
}

// The reason a job's end blames on its node, or empty when the worker itself
// ended it (its result record says what happened, or its output does).
const char *nodeFault(const std::string &state) {
  if (state == "NODE_FAIL" || state == "BOOT_FAIL" || state == "VANISHED")
    return reason::NodeFailure;
  if (state == "PREEMPTED")
    return reason::Preempted;
  if (state == "TIMEOUT" || state == "DEADLINE")
    return reason::TimeLimit;
  return "";
}

std::string jobName(const TuneConfig &cfg) { return "ciq-" + cfg.target; }

std::string workspaceBase(const TuneConfig &cfg) {
  const SlurmConfig &s = cfg.executor.slurm;
  if (s.workspace == "shared")
    return cfg.runDir + "/workspaces";
  return s.scratchDir + "/ciq-" + sha256Hex(cfg.runDir).substr(0, 12);
}

} // namespace

bool SlurmExecutor::start(bool resume, std::string &error) {
  for (auto [name, out] : {std::pair{"sbatch", &sbatch_}, {"squeue", &squeue_}, {"scancel", &scancel_}}) {
    auto p = findExecutable(name);
    if (!p) {
      error = cfg_.executor.slurm.loc.str() + ": executor: slurm needs " + name +
              " on PATH (Debian: slurm-client); run ciq on a login node of the cluster";
      return false;
    }
    *out = *p;
  }
  if (!resume) {
    // Records of an earlier search must not pass for this one's.
    std::string err;
    cancelSlurmJobs(cfg_.runDir, err);
    removeTree(dir());
  }
  llvm::sys::fs::create_directories(dir());
  if (auto t = readJsonFile(dir() + "/jobs.json"))
    table_ = *t;
  return true;
}

std::string SlurmExecutor::resultPath(const Job &j) const {
  return dir() + "/" + j.e->candidateId + "." + std::to_string(j.attempt) + ".result.json";
}

void SlurmExecutor::saveTable() {
  std::string err;
  if (!writeJsonDurably(dir() + "/jobs.json", table_, err))
    warn_(err);
}

bool SlurmExecutor::submit(Job &j, bool keepInvalid) {
  const SlurmConfig &s = cfg_.executor.slurm;
  const Evaluation &e = *j.e;
  std::string spec = dir() + "/" + e.candidateId + ".candidate.json";
  json cand = evaluationToJson(e);
  cand["log"] = cfg_.runDir + "/logs/" + e.candidateId + ".log";
  cand["artifacts_dir"] = keepInvalid ? cfg_.runDir + "/invalid/" + e.candidateId : "";
  cand["workspace"] = s.workspace;
  // Decided by the engine before the baseline (narrow_architectures): the
  // worker's compiles are narrowed alike, or its device code would differ.
  cand["narrow_to"] = cfg_.narrowTo;
  cand["gpu_expected"] = s.gres.find("gpu") != std::string::npos && cfg_.benchmark.enabled;
  if (!j.finalists.is_null())
    cand["finalists"] = j.finalists;
  std::string err;
  if (!writeJsonDurably(spec, cand, err)) {
    fail(j, reason::WorkerFailed, err);
    return false;
  }
  std::vector<std::string> worker = {executablePath(), "worker", "--config", cfg_.path,
                                     j.finalists.is_null() ? "--candidate" : "--finalists", spec,
                                     "--result", resultPath(j), "--workspace", workspaceBase(cfg_)};
  std::string out = dir() + "/" + e.candidateId + "." + std::to_string(j.attempt) + ".out";
  std::vector<std::string> argv = {sbatch_, "--parsable", "--no-requeue", "--job-name=" + jobName(cfg_),
                                   "--output=" + out, "--chdir=" + cfg_.runDir,
                                   "--time=" + std::to_string(s.timeLimitMinutes)};
  if (!s.partition.empty())
    argv.push_back("--partition=" + s.partition);
  if (!s.account.empty())
    argv.push_back("--account=" + s.account);
  if (!s.gres.empty())
    argv.push_back("--gres=" + s.gres);
  if (!j.excluded.empty())
    argv.push_back("--exclude=" + llvm::join(j.excluded, ","));
  argv.insert(argv.end(), s.sbatchArgs.begin(), s.sbatchArgs.end());
  argv.push_back("--wrap=exec " + shellJoin(worker));
  SubprocessOptions o;
  o.timeoutSeconds = 60;
  j.submittedAt = nowEpochSeconds();
  auto r = runSubprocess(argv, o);
  std::string id = llvm::StringRef(r.out).trim().split(';').first.str();
  if (r.exitCode != 0 || id.empty() || !llvm::all_of(id, llvm::isDigit)) {
    fail(j, reason::WorkerFailed,
         "sbatch refused the job: " + llvm::StringRef(r.err + r.out).trim().str() + " (" + cfg_.executor.slurm.loc.str() + ")");
    return false;
  }
  j.id = id;
  j.state = "PENDING";
  j.endedAt = 0;
  table_[e.candidateId] = {{"job_id", id},          {"attempt", j.attempt},  {"excluded", j.excluded},
                           {"candidate_hash", e.candidateHash}, {"submitted_at", j.submittedAt},
                           {"first_failure", j.firstFailure}};
  saveTable();
  return true;
}

void SlurmExecutor::fail(Job &j, const std::string &why, const std::string &message) {
  Evaluation &e = *j.e;
  e.ok = false;
  e.reason = why;
  e.message = message;
  e.evaluatedAt = nowIso8601();
  e.node = j.node;
  if (!j.id.empty())
    e.slurm = {{"job_id", j.id}, {"attempt", j.attempt}, {"node", j.node}, {"state", j.state}};
  j.done = true;
  table_.erase(e.candidateId);
}

// The worker's record, once it is there: the evaluation, or a fault of the
// node that the worker found (a GPU gone), handled like a node failure.
bool SlurmExecutor::takeResult(Job &j) {
  auto r = readJsonFile(resultPath(j));
  if (!r)
    return false;
  std::string hash, fault, node, message;
  JsonFields f(*r, resultPath(j));
  f.opt("candidate_hash", hash).opt("fault", fault).opt("node", node).opt("message", message);
  if (f.ok() && hash != j.e->candidateHash)
    return false; // an earlier search's record
  if (!fault.empty()) {
    j.state = "GPU_LOST";
    j.node = node.empty() ? j.node : node;
    j.reason = message;
    return false;
  }
  Evaluation got;
  std::string err;
  if (!f.ok() || !evaluationFromJson(*r, got, err, resultPath(j))) {
    fail(j, reason::WorkerFailed, "the result record is damaged: " + (f.ok() ? err : f.error()));
    return true;
  }
  json slurm = got.slurm.is_object() ? got.slurm : json::object();
  slurm["job_id"] = j.id;
  slurm["attempt"] = j.attempt;
  slurm["submitted_at"] = j.submittedAt;
  slurm["read_at"] = nowEpochSeconds();
  if (!j.firstFailure.empty())
    slurm["requeued_after"] = j.firstFailure;
  got.slurm = slurm;
  got.candidateId = j.e->candidateId;
  got.generation = j.e->generation;
  got.point = j.e->point;
  got.replay = j.e->replay;
  *j.e = got;
  if (j.record)
    *j.record = *r;
  j.done = true;
  table_.erase(got.candidateId);
  return true;
}

// One squeue for every job of this target (by name: ids that slurmctld has
// already forgotten are no error that way).
void SlurmExecutor::queryStates(std::vector<Job> &jobs) {
  SubprocessOptions o;
  o.timeoutSeconds = 30;
  auto r = runSubprocess({squeue_, "-h", "--states=all", "--name=" + jobName(cfg_), "-o", "%i|%T|%N|%r"}, o);
  if (r.exitCode != 0) {
    static bool warned = false;
    if (!warned)
      warn_("squeue failed (" + llvm::StringRef(r.err).trim().str() + "); waiting for slurmctld");
    warned = true;
    return; // slurmctld unreachable: nothing can be concluded about the jobs
  }
  std::map<std::string, std::vector<std::string>> seen;
  llvm::SmallVector<llvm::StringRef, 64> lines;
  llvm::StringRef(r.out).split(lines, '\n', -1, false);
  for (auto line : lines) {
    llvm::SmallVector<llvm::StringRef, 4> f;
    line.trim().split(f, '|');
    if (f.size() == 4)
      seen[f[0].str()] = {f[1].str(), f[2].str(), f[3].str()};
  }
  for (auto &j : jobs) {
    if (j.done || j.id.empty() || j.state == "GPU_LOST")
      continue;
    auto it = seen.find(j.id);
    if (it == seen.end()) {
      j.state = "VANISHED";
      continue;
    }
    j.state = it->second[0];
    if (!it->second[1].empty() && it->second[1] != "(null)")
      j.node = it->second[1];
    j.reason = it->second[2];
  }
}

void SlurmExecutor::jobEnded(Job &j, bool keepInvalid) {
  std::string out = dir() + "/" + j.e->candidateId + "." + std::to_string(j.attempt) + ".out";
  std::string fault = j.state == "GPU_LOST" ? reason::GpuLost : nodeFault(j.state);
  std::string what = "job " + j.id + " " + j.state + (j.node.empty() ? "" : " on " + j.node);
  if (fault.empty()) {
    fail(j, reason::WorkerFailed, "the Slurm " + what + " without writing a result record; its output: " + out);
    return;
  }
  if (j.attempt == 1) {
    // Once more, on another node.
    j.firstFailure = what;
    if (!j.node.empty())
      j.excluded.push_back(j.node);
    j.attempt = 2;
    j.id.clear();
    j.state.clear();
    j.node.clear();
    j.endedAt = 0;
    submit(j, keepInvalid);
    return;
  }
  fail(j, fault,
       "the Slurm job failed because of its node twice: " + j.firstFailure + ", then, requeued, " + what +
           (j.reason.empty() || j.reason == "None" ? "" : " (" + j.reason + ")") + "; output: " + out);
}

// A job for e: the killed engine's job still in the table (reattached), a
// result it read but did not journal, or a new one to submit.
SlurmExecutor::Job SlurmExecutor::attach(Evaluation *e, const nlohmann::json &finalists, nlohmann::json *record) {
  Job j;
  j.e = e;
  j.finalists = finalists;
  j.record = record;
  auto t = table_.find(e->candidateId);
  std::string hash;
  if (t != table_.end() && t->is_object()) {
    // A job of the engine that was killed: reattach to it (a damaged entry
    // is no job: the candidate is submitted afresh).
    JsonFields f(*t, dir() + "/jobs.json: \"" + e->candidateId + "\"");
    f.opt("candidate_hash", hash).opt("job_id", j.id).opt("attempt", j.attempt).opt("excluded", j.excluded)
        .opt("submitted_at", j.submittedAt).opt("first_failure", j.firstFailure);
    if (!f.ok() || hash != e->candidateHash || j.id.empty()) {
      if (!f.ok())
        warn_(f.error() + "; the candidate is submitted again");
      j = Job{};
      j.e = e;
      j.finalists = finalists;
      j.record = record;
      hash.clear();
    }
  }
  if (!hash.empty()) {
    j.state = "PENDING";
  } else {
    // A result read by the killed engine but not yet journaled.
    for (j.attempt = 2; j.attempt >= 1 && !takeResult(j); --j.attempt)
      ;
    j.attempt = std::max(j.attempt, 1);
  }
  return j;
}

size_t SlurmExecutor::evaluate(std::vector<Evaluation> &batch, const KnownResults &known) {
  BatchTwins twins(batch, known);
  std::vector<Job> jobs;
  for (size_t k = 0; k < batch.size(); ++k)
    if (twins.ownConfiguration(k))
      jobs.push_back(attach(&batch[k]));
  if (!run(jobs, keepInvalid_))
    return 0;
  // In pool order, every earlier candidate is finished: nothing waits.
  for (size_t k = 0; k < batch.size(); ++k) {
    Evaluation &e = batch[k];
    if (const Evaluation *t = twins.configurationTwin(k))
      e = configTwin(*t, e);
    else if (e.ok)
      if (const Evaluation *d = twins.deviceTwin(k, e))
        shareDeviceResult(e, *d, cfg_.benchmark.enabled);
    twins.finished(k);
  }
  return batch.size();
}

bool SlurmExecutor::runFinalistsJob(Evaluation &e, const nlohmann::json &finalists, nlohmann::json &record) {
  std::vector<Job> jobs = {attach(&e, finalists, &record)};
  return run(jobs, false);
}

bool SlurmExecutor::run(std::vector<Job> &jobs, bool keepInvalid) {
  const SlurmConfig &s = cfg_.executor.slurm;
  auto lastQuery = std::chrono::steady_clock::now() - std::chrono::hours(1);
  for (;;) {
    if (daemon_.stopRequested()) {
      cancelAll();
      return false;
    }
    int inFlight = 0;
    for (auto &j : jobs)
      inFlight += !j.done && !j.id.empty();
    for (auto &j : jobs)
      if (!j.done && j.id.empty() && inFlight < s.maxJobs)
        inFlight += submit(j, keepInvalid);
    for (auto &j : jobs)
      if (!j.done && !j.id.empty())
        takeResult(j);
    auto now = std::chrono::steady_clock::now();
    if (now - lastQuery > std::chrono::duration<double>(QueryEverySeconds)) {
      lastQuery = now;
      queryStates(jobs);
      for (auto &j : jobs) {
        if (j.done || j.id.empty() || !(terminal(j.state) || j.state == "GPU_LOST"))
          continue;
        if (j.endedAt == 0)
          j.endedAt = nowEpochSeconds();
        // A node fault needs no grace: its worker wrote nothing, or wrote too late to count.
        bool waitForRecord = !*nodeFault(j.state) && j.state != "GPU_LOST";
        if (!waitForRecord || nowEpochSeconds() - j.endedAt > ResultGraceSeconds)
          jobEnded(j, keepInvalid);
      }
    }
    if (std::all_of(jobs.begin(), jobs.end(), [](const Job &j) { return j.done; }))
      break;
    std::this_thread::sleep_for(std::chrono::duration<double>(s.pollSeconds));
  }
  saveTable();
  return true;
}

void SlurmExecutor::cancelAll() {
  std::string err;
  int n = cancelSlurmJobs(cfg_.runDir, err);
  if (n < 0)
    warn_(err);
  table_ = json::object();
}

int cancelSlurmJobs(const std::string &runDir, std::string &error) {
  std::string path = runDir + "/slurm/jobs.json";
  auto t = readJsonFile(path);
  if (!t || t->empty())
    return 0;
  std::vector<std::string> argv = {"scancel"};
  for (const auto &[cid, job] : t->items()) {
    std::string id;
    if (job.is_object() && JsonFields(job, path).opt("job_id", id).ok() && !id.empty())
      argv.push_back(id);
  }
  if (argv.size() == 1)
    return 0;
  auto scancel = findExecutable("scancel");
  if (!scancel) {
    error = "scancel is not on PATH; cancel the jobs of " + path + " by hand";
    return -1;
  }
  argv[0] = *scancel;
  SubprocessOptions o;
  o.timeoutSeconds = 60;
  auto r = runSubprocess(argv, o);
  if (r.exitCode != 0) {
    error = "scancel failed: " + llvm::StringRef(r.err).trim().str();
    return -1;
  }
  writeJsonDurably(path, json::object(), error);
  return (int)argv.size() - 1;
}

} // namespace ciq
