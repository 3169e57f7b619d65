#include "engine/record/Journal.h"

#include <cmath>
#include "common/DiskFault.h"
#include "common/JournalLines.h"
#include "common/JsonRead.h"

#include <cerrno>
#include <chrono>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

namespace ciq {
using nlohmann::json;

static json evaluationCoreToJson(const Evaluation &e);

// Kernel names are bytes from the program: through bytesToJson (Protocol.h).
static json kernelTimesToJson(const KernelTimes &ks) {
  json out = json::array();
  for (const KernelTime &k : ks)
    out.push_back({{"mangled", bytesToJson(k.mangled)}, {"demangled", bytesToJson(k.demangled)},
                   {"launches", k.launches}, {"gpu_ms", k.gpuMs}, {"min_ms", k.minMs}, {"max_ms", k.maxMs},
                   {"grid", {k.grid[0], k.grid[1], k.grid[2]}}, {"block", {k.block[0], k.block[1], k.block[2]}},
                   {"registers", k.registers}, {"static_shared_bytes", k.staticSharedBytes},
                   {"dynamic_shared_bytes", k.dynamicSharedBytes}});
  return out;
}

static bool kernelTimesFromJson(const std::vector<json> &in, KernelTimes &out, std::string &error,
                                const std::string &where) {
  for (size_t i = 0; i < in.size(); ++i) {
    KernelTime k;
    json mangled, demangled;
    unsigned long long launches = 0;
    std::vector<int> grid, block;
    std::string at = where + ": \"kernel_times\"[" + std::to_string(i) + "]";
    JsonFields f(in[i], at);
    f.need("mangled", mangled).opt("demangled", demangled).opt("launches", launches).opt("gpu_ms", k.gpuMs)
        .opt("min_ms", k.minMs).opt("max_ms", k.maxMs).opt("grid", grid).opt("block", block)
        .opt("registers", k.registers).opt("static_shared_bytes", k.staticSharedBytes)
        .opt("dynamic_shared_bytes", k.dynamicSharedBytes);
    if (!f.ok())
      return error = f.error(), false;
    try {
      k.mangled = bytesFromJson(mangled);
      k.demangled = demangled.is_null() ? k.mangled : bytesFromJson(demangled);
    } catch (const std::exception &e) {
      return error = at + ": " + e.what(), false;
    }
    k.launches = launches;
    for (size_t d = 0; d < 3 && grid.size() == 3 && block.size() == 3; ++d)
      k.grid[d] = grid[d], k.block[d] = block[d];
    out.push_back(std::move(k));
  }
  return true;
}

std::string nowIso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

json evaluationToJson(const Evaluation &e) {
  json j = evaluationCoreToJson(e);
  if (!e.node.empty())
    j["node"] = e.node;
  if (!e.gpu.is_null())
    j["gpu"] = e.gpu;
  if (!e.slurm.is_null())
    j["slurm"] = e.slurm;
  if (!e.cases.empty()) {
    json cases = json::array();
    for (const auto &c : e.cases) {
      cases.push_back({{"name", c.name}, {"runs", c.runs}, {"median", c.median}, {"cv_percent", c.cvPercent},
                       {"noise_percent", c.noisePercent}, {"stopped_by", c.stoppedBy}, {"runs_saved", c.runsSaved},
                       {"ratio", c.ratio}, {"p_value", c.pValue}});
      if (!c.kernels.empty())
        cases.back()["kernel_times"] = kernelTimesToJson(c.kernels);
    }
    j["cases"] = cases;
  }
  if (!e.kernelTimes.empty())
    j["kernel_times"] = kernelTimesToJson(e.kernelTimes);
  if (!e.kernelTimesFrom.empty())   // which runs were traced (issue 39: timed runs stay untraced)
    j["kernel_times_from"] = e.kernelTimesFrom;
  if (!e.kernelTimesWhy.empty())
    j["kernel_times_why"] = e.kernelTimesWhy;
  return j;
}

json buildToJson(const Evaluation &e) {
  json j = evaluationToJson(e);
  j["op"] = "build";
  return j;
}

json evaluationCoreToJson(const Evaluation &e) {
  json acfs = json::array();
  for (const auto &a : e.rendered.acfs)
    acfs.push_back({{"stage", a.stage}, {"path", a.path}, {"sha256", a.sha256}});
  json objects = json::array();
  for (const auto &o : e.objects) {
    objects.push_back({{"source", o.source}, {"output", o.output}, {"device_code_sha256", o.deviceCodeSha256},
                       {"device_code_bytes", o.deviceCodeBytes}, {"wall_ms", o.wallMs}, {"status", o.status},
                       {"ptxas_ran", o.ptxasRan}, {"ptx_reuse", o.ptxReuse}});
    if (!o.directiveKernels.empty())
      objects.back()["directive_kernels"] = o.directiveKernels;
    if (o.cached)
      objects.back()["cached"] = true;
  }
  json j = json{{"op", "evaluation"},
              {"candidate_id", e.candidateId},
              {"generation", e.generation},
              {"point", e.point},
              {"controls", e.rendered.controls},
              {"rendered", {{"ptxas", e.rendered.ptxas}, {"nvcc", e.rendered.nvcc},
                            {"defines", e.rendered.defines}, {"acfs", acfs}}},
              {"candidate_hash", e.candidateHash},
              {"status", e.ok ? "OK" : "INVALID"},
              {"reason", e.reason},
              {"message", e.message},
              {"scores", e.scores},
              {"device_code_sha256", e.deviceCodeSha256},
              {"objects_sha256", e.objectsSha256},
              {"duplicate_of", e.duplicateOf},
              {"duplicate_kind", e.duplicateKind},
              {"kernels", e.kernels},
              {"objects", objects},
              {"runtime_kernels", e.runtimeKernels},
              {"runs", e.runs},
              {"cv_percent", e.cvPercent},
              {"noise_percent", e.noisePercent},
              {"stopped_by", e.stoppedBy},
              {"runs_saved", e.runsSaved},
              {"gpu_problems", e.gpuProblems},
              {"sm_clock_mhz", e.smClockMhz},
              {"build_ms", e.buildMs},
              {"measure_ms", e.measureMs},
              {"log", e.log},
              {"replay", e.replay},
              {"evaluated_at", e.evaluatedAt}};
  if (!e.rendered.kernels.empty())
    j["rendered"]["kernels"] = e.rendered.kernels;
  if (!e.rendered.units.empty())
    j["rendered"]["units"] = e.rendered.units;
  return j;
}

bool evaluationFromJson(const json &j, Evaluation &e, std::string &error, const std::string &where) {
  JsonFields f(j, where);
  const json *rendered, *controls;
  std::string status;
  f.need("candidate_id", e.candidateId).opt("generation", e.generation).opt("point", e.point)
      .object("controls", controls).object("rendered", rendered).opt("candidate_hash", e.candidateHash)
      .opt("status", status).opt("reason", e.reason).opt("message", e.message).opt("scores", e.scores)
      .opt("device_code_sha256", e.deviceCodeSha256).opt("objects_sha256", e.objectsSha256).opt("duplicate_of", e.duplicateOf)
      .opt("duplicate_kind", e.duplicateKind).opt("kernels", e.kernels)
      .opt("runtime_kernels", e.runtimeKernels).opt("runs", e.runs)
      .opt("cv_percent", e.cvPercent).opt("noise_percent", e.noisePercent).opt("stopped_by", e.stoppedBy)
      .opt("runs_saved", e.runsSaved).opt("gpu_problems", e.gpuProblems).opt("sm_clock_mhz", e.smClockMhz)
      .opt("build_ms", e.buildMs)
      .opt("measure_ms", e.measureMs).opt("log", e.log)
      .opt("replay", e.replay).opt("evaluated_at", e.evaluatedAt)
      .opt("node", e.node).opt("gpu", e.gpu).opt("slurm", e.slurm)
      .opt("kernel_times_from", e.kernelTimesFrom).opt("kernel_times_why", e.kernelTimesWhy);
  e.ok = status == "OK";
  e.rendered.controls = *controls;
  std::vector<json> acfs, objects;
  JsonFields r(*rendered, where + ": \"rendered\"");
  r.opt("ptxas", e.rendered.ptxas).opt("nvcc", e.rendered.nvcc).opt("defines", e.rendered.defines).opt("acfs", acfs)
      .opt("kernels", e.rendered.kernels).opt("units", e.rendered.units);
  f.opt("objects", objects);
  std::vector<json> cases, kernelTimes;
  f.opt("cases", cases).opt("kernel_times", kernelTimes);
  if (f.ok() && !kernelTimesFromJson(kernelTimes, e.kernelTimes, error, where))
    return false;
  for (size_t i = 0; i < cases.size() && f.ok(); ++i) {
    CaseResult c;
    std::string at = where + ": \"cases\"[" + std::to_string(i) + "]";
    JsonFields cf(cases[i], at);
    std::vector<json> caseKernels;
    cf.need("name", c.name).opt("runs", c.runs).opt("median", c.median).opt("cv_percent", c.cvPercent)
        .opt("noise_percent", c.noisePercent).opt("stopped_by", c.stoppedBy).opt("runs_saved", c.runsSaved)
        .opt("ratio", c.ratio).opt("p_value", c.pValue).opt("kernel_times", caseKernels);
    if (!cf.ok())
      return error = cf.error(), false;
    if (!kernelTimesFromJson(caseKernels, c.kernels, error, at))
      return false;
    e.cases.push_back(c);
  }
  for (size_t i = 0; i < acfs.size() && r.ok(); ++i) {
    AcfRef a;
    JsonFields af(acfs[i], where + ": \"rendered\": \"acfs\"[" + std::to_string(i) + "]");
    af.opt("stage", a.stage).opt("path", a.path).opt("sha256", a.sha256);
    if (!af.ok())
      return error = af.error(), false;
    e.rendered.acfs.push_back({a.stage, a.path, a.sha256});
  }
  for (size_t i = 0; i < objects.size() && f.ok(); ++i) {
    ObjectRecord o;
    JsonFields of(objects[i], where + ": \"objects\"[" + std::to_string(i) + "]");
    of.opt("source", o.source).opt("output", o.output).opt("device_code_sha256", o.deviceCodeSha256)
        .opt("status", o.status).opt("device_code_bytes", o.deviceCodeBytes).opt("wall_ms", o.wallMs)
        .opt("ptxas_ran", o.ptxasRan).opt("ptx_reuse", o.ptxReuse).opt("directive_kernels", o.directiveKernels)
        .opt("cached", o.cached);
    if (!of.ok())
      return error = of.error(), false;
    e.objects.push_back(o);
  }
  if (!f.ok() || !r.ok())
    return error = f.ok() ? r.error() : f.error(), false;
  return true;
}

json startToJson(const RecordedStart &s) {
  json objectives = json::array();
  for (const auto &o : s.objectives)
    objectives.push_back({{"metric", o.metric}, {"direction", o.direction}, {"unit", o.unit}});
  const RecordedStart::Search &q = s.search;
  json line = {{"op", "start"}, {"version", s.version}, {"engine_version", s.engineVersion}, {"config_path", s.configPath},
          {"space_identity", s.spaceIdentity}, {"space_size", s.spaceSize}, {"seed", s.seed},
          {"strategy", s.strategy},
          {"search", {{"strategy", q.strategy}, {"pool_size", q.poolSize}, {"generations", q.generations},
                      {"mutate_rate", q.mutateRate}, {"cull_size", q.cullSize}, {"elitism", q.elitism},
                      {"seed", q.seed}}},
          {"target", s.target}, {"objectives", objectives}, {"pareto", s.pareto}, {"started_at", s.startedAt},
          {"measurement", s.measurement}};
  // Written when set, so a search with a barrier between generations
  // journals the start line it always did.
  if (q.proposeAhead > 0)
    line["search"]["propose_ahead"] = q.proposeAhead;
  return line;
}

bool startFromJson(const json &j, RecordedStart &s, std::string &error, const std::string &where) {
  JsonFields f(j, where);
  const json *search;
  std::vector<json> objectives;
  f.opt("version", s.version).opt("engine_version", s.engineVersion).opt("config_path", s.configPath)
      .opt("space_identity", s.spaceIdentity).opt("space_size", s.spaceSize).opt("seed", s.seed)
      .opt("strategy", s.strategy).object("search", search).opt("target", s.target)
      .opt("objectives", objectives).opt("pareto", s.pareto).opt("started_at", s.startedAt).opt("measurement", s.measurement);
  if (!f.ok())
    return error = f.error(), false;
  RecordedStart::Search &q = s.search;
  JsonFields sf(*search, where + ": \"search\"");
  sf.opt("strategy", q.strategy).opt("pool_size", q.poolSize).opt("generations", q.generations)
      .opt("mutate_rate", q.mutateRate).opt("cull_size", q.cullSize).opt("elitism", q.elitism).opt("seed", q.seed)
      .opt("propose_ahead", q.proposeAhead);
  if (!sf.ok())
    return error = sf.error(), false;
  for (size_t i = 0; i < objectives.size(); ++i) {
    RecordedObjective o;
    JsonFields of(objectives[i], where + ": \"objectives\"[" + std::to_string(i) + "]");
    if (!of.opt("metric", o.metric).opt("direction", o.direction).opt("unit", o.unit).ok())
      return error = of.error(), false;
    s.objectives.push_back(o);
  }
  if (s.measurement.is_object()) {
    JsonFields mf(s.measurement, where + ": \"measurement\"");
    if (!mf.opt("target_noise_percent", s.targetNoisePercent).ok())
      return error = mf.error(), false;
  }
  return true;
}

Journal::~Journal() {
  if (fd_ >= 0)
    close(fd_);
}

bool Journal::open(const std::string &path, std::string &error) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    errno_ = errno;
    error = "cannot open the journal " + path + " for appending: " + errnoText(errno_);
    return false;
  }
  path_ = path;
  dropTornTail();
  return true;
}



// A kill during write() can leave a last line without its newline; cut it
// off so the next line starts clean (readJournal ignores it either way).
void Journal::dropTornTail() {
  off_t size = lseek(fd_, 0, SEEK_END);
  if (size <= 0)
    return;
  std::ifstream in(path_, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t keep = all.rfind('\n');
  keep = keep == std::string::npos ? 0 : keep + 1;
  if (keep < all.size() && ftruncate(fd_, (off_t)keep) == 0)
    fsync(fd_);
}

bool Journal::append(const json &line) {
  if (!error_.empty())
    return false;
  // One write() of a whole line: a kill leaves at most one partial last line.
  std::string s = journalLineText(line) + "\n";
  off_t before = lseek(fd_, 0, SEEK_END);
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd_, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return refuse("append to", n < 0 ? errno : ENOSPC, before);
    off += n;
  }
  if (fsync(fd_) != 0)
    return refuse("fsync", errno, before);
  return true;
}

// A line the disk took only in part (it filled during the write), or that
// the fsync could not make durable, is cut off again: the journal ends with
// its last whole line, where `ciq resume` continues.
bool Journal::refuse(const char *what, int err, long long sizeBefore) {
  if (sizeBefore >= 0 && ftruncate(fd_, (off_t)sizeBefore) == 0)
    fsync(fd_);
  errno_ = err;
  error_ = std::string("cannot ") + what + " the journal " + path_ + ": " + errnoText(err);
  return false;
}

json runToJson(const std::string &key, int round, size_t build, double value) {
  return {{"op", "run"}, {"key", key}, {"round", round}, {"build", build}, {"value", value}};
}

int candidateNumber(const std::string &id) {
  if (id.size() < 2 || id[0] != 'c' || id.find_first_not_of("0123456789", 1) != std::string::npos || id.size() > 10)
    return -1;
  return std::stoi(id.substr(1));
}

namespace {

void readStartLine(JournalContents &c, const JournalLine &l, const std::string &where) {
  c.start = l.object;
  RecordedStart typed;
  std::string why;
  if (startFromJson(l.object, typed, why, where))
    c.started = std::move(typed);
  else
    c.damaged.push_back(why);
}

void readEvaluationLine(JournalContents &c, const JournalLine &l, const std::string &where) {
  Evaluation e;
  std::string why;
  if (!evaluationFromJson(l.object, e, why, where)) {
    c.damaged.push_back(why);
    return;
  }
  c.nextId = std::max(c.nextId, candidateNumber(e.candidateId) + 1);
  c.evaluations.push_back(std::move(e));
  c.done = false; // after a "done": a resume with a raised budget extends the search
}

// An "attribution" line's rows or a "minimize" line's steps.
void readAfterSearchLine(JournalContents &c, const JournalLine &l, const std::string &where) {
  bool rows = l.op == "attribution";
  const char *key = rows ? "rows" : "steps";
  json members = json::array();
  JsonFields f(l.object, where);
  std::string why;
  if (!f.opt(key, members).ok())
    c.damaged.push_back(f.error());
  else if (rows ? !attributionFromJson(members, c.attribution, why, where + ": \"rows\"")
                : !minimizeStepsFromJson(members, c.minimization, why, where + ": \"steps\""))
    c.damaged.push_back(why);
}

// One benchmark run of an interleaved measurement, filed under its key by round and build.
void readRunLine(JournalContents &c, const JournalLine &l, const std::string &where) {
  std::string key;
  int round = -1, build = -1;
  double value = 0;
  JsonFields f(l.object, where);
  if (!f.need("key", key).need("round", round).need("build", build).need("value", value).ok() || round < 0 ||
      build < 0 || round > 1000000 || build > 10000) {
    c.damaged.push_back(f.ok() ? where + ": \"round\" or \"build\" out of range" : f.error());
    return;
  }
  auto &rounds = c.rounds[key];
  // A run already taken: the same measurement made anew from its start.
  if ((size_t)round < rounds.size() && (size_t)build < rounds[round].size() && !std::isnan(rounds[round][build]))
    rounds.clear();
  if (rounds.size() <= (size_t)round)
    rounds.resize(round + 1);
  auto &r = rounds[round];
  if (r.size() <= (size_t)build)
    r.resize(build + 1, std::nan(""));
  r[build] = value;
}

// Adds one journal line to `c`; a line that does not read is named in c.damaged.
void readJournalLine(JournalContents &c, const JournalLine &l, const std::string &where) {
  if (l.op == "start") {
    readStartLine(c, l, where);
  } else if (l.op == "evaluation") {
    readEvaluationLine(c, l, where);
  } else if (l.op == "build") {
    Evaluation e;
    std::string why;
    if (evaluationFromJson(l.object, e, why, where))
      c.builds.push_back(std::move(e));
    else
      c.damaged.push_back(why);
  } else if (l.op == "generation") {
    int g = 0;
    JsonFields f(l.object, where);
    if (!f.need("generation", g).ok())
      c.damaged.push_back(f.error());
    else
      c.completedGenerations.push_back(g);
  } else if (l.op == "winner") {
    c.winner = l.object;
  } else if (l.op == "warm") {
    c.warm = l.object;
  } else if (l.op == "attribution" || l.op == "minimize") {
    readAfterSearchLine(c, l, where);
  } else if (l.op == "run") {
    readRunLine(c, l, where);
  } else if (l.op == "minimize_trial") {
    MinimizeTrial t;
    std::string why;
    if (minimizeTrialFromJson(l.object, t, why, where))
      c.minimizeTrials.push_back(std::move(t));
    else
      c.damaged.push_back(why);
  } else if (l.op == "rehearsal") {
    RehearsalRecord r;
    std::string why;
    if (rehearsalFromJson(l.object, r, why, where))
      c.rehearsals.push_back(std::move(r));
    else
      c.damaged.push_back(why);
  } else if (l.op == "canary") {
    bool ok = false, skipped = false;
    JsonFields f(l.object, where);
    if (!f.opt("ok", ok).opt("skipped", skipped).ok())
      c.damaged.push_back(f.error());
    else
      c.canaryDone = ok || skipped; // the last canary line counts
  } else if (l.op == "inputs") {
    c.inputs = l.object;
  } else if (l.op == "done") {
    c.done = true;
    c.doneBudget = 0;
    JsonFields f(l.object, where);
    if (!f.opt("budget", c.doneBudget).ok())
      c.damaged.push_back(f.error());
  }
}

} // namespace

JournalContents readJournal(const std::string &path) {
  JournalContents c;
  std::vector<JournalLine> lines;
  std::string error;
  if (!readJournalLines(path, lines, c.damaged, error)) {
    c.damaged.push_back(error);
    return c;
  }
  for (auto &l : lines)
    readJournalLine(c, l, path + ":" + std::to_string(l.number));
  // A damaged line may have held an evaluation: its id is never given again.
  c.nextId = std::max<int>(c.nextId, (int)c.evaluations.size() + (int)c.damaged.size());
  return c;
}

} // namespace ciq
