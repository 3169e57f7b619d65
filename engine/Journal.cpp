#include "Journal.h"

#include <chrono>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <unistd.h>

namespace ciq {
using nlohmann::json;

static json evaluationCoreToJson(const Evaluation &e);

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
  return j;
}

json evaluationCoreToJson(const Evaluation &e) {
  json acfs = json::array();
  for (const auto &a : e.rendered.acfs)
    acfs.push_back({{"stage", a.stage}, {"path", a.path}, {"sha256", a.sha256}});
  json objects = json::array();
  for (const auto &o : e.objects)
    objects.push_back({{"source", o.source}, {"output", o.output}, {"device_code_sha256", o.deviceCodeSha256},
                       {"device_code_bytes", o.deviceCodeBytes}, {"wall_ms", o.wallMs}, {"status", o.status}});
  return json{{"op", "evaluation"},
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
              {"duplicate_of", e.duplicateOf},
              {"duplicate_kind", e.duplicateKind},
              {"kernels", e.kernels},
              {"objects", objects},
              {"runs", e.runs},
              {"cv_percent", e.cvPercent},
              {"build_ms", e.buildMs},
              {"measure_ms", e.measureMs},
              {"log", e.log},
              {"replay", e.replay},
              {"evaluated_at", e.evaluatedAt}};
}

Evaluation evaluationFromJson(const json &j) {
  Evaluation e;
  e.candidateId = j.value("candidate_id", "");
  e.generation = j.value("generation", 0);
  e.point = j.value("point", Point{});
  e.rendered.controls = j.value("controls", json::object());
  json r = j.value("rendered", json::object());
  e.rendered.ptxas = r.value("ptxas", std::vector<std::string>{});
  e.rendered.nvcc = r.value("nvcc", std::vector<std::string>{});
  e.rendered.defines = r.value("defines", std::vector<std::string>{});
  for (const auto &a : r.value("acfs", json::array()))
    e.rendered.acfs.push_back({a.value("stage", ""), a.value("path", ""), a.value("sha256", "")});
  e.candidateHash = j.value("candidate_hash", "");
  e.ok = j.value("status", "") == "OK";
  e.reason = j.value("reason", "");
  e.message = j.value("message", "");
  e.scores = j.value("scores", std::map<std::string, double>{});
  e.deviceCodeSha256 = j.value("device_code_sha256", "");
  e.duplicateOf = j.value("duplicate_of", "");
  e.duplicateKind = j.value("duplicate_kind", "");
  e.kernels = j.value("kernels", std::vector<KernelStats>{});
  for (const auto &o : j.value("objects", json::array()))
    e.objects.push_back({o.value("source", ""), o.value("output", ""), o.value("device_code_sha256", ""),
                         o.value("status", ""), o.value("device_code_bytes", 0L), o.value("wall_ms", 0.0)});
  e.runs = j.value("runs", std::vector<double>{});
  e.cvPercent = j.value("cv_percent", -1.0);
  e.buildMs = j.value("build_ms", 0.0);
  e.measureMs = j.value("measure_ms", 0.0);
  e.log = j.value("log", "");
  e.replay = j.value("replay", "");
  e.evaluatedAt = j.value("evaluated_at", "");
  e.node = j.value("node", "");
  e.gpu = j.value("gpu", json());
  e.slurm = j.value("slurm", json());
  return e;
}

Journal::~Journal() {
  if (fd_ >= 0)
    close(fd_);
}

bool Journal::open(const std::string &path, std::string &error) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error = "cannot open the journal " + path + " for appending";
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
  // One write() of a whole line: a kill leaves at most one partial last line.
  std::string s = line.dump() + "\n";
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd_, s.data() + off, s.size() - off);
    if (n <= 0)
      return false;
    off += n;
  }
  return fsync(fd_) == 0;
}

JournalContents readJournal(const std::string &path) {
  JournalContents c;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      continue; // a line torn by a kill mid-write
    std::string op = j.value("op", "");
    if (op == "start")
      c.start = j;
    else if (op == "evaluation")
      c.evaluations.push_back(evaluationFromJson(j));
    else if (op == "generation")
      c.completedGenerations.push_back(j.value("generation", 0));
    else if (op == "winner")
      c.winner = j;
    else if (op == "done")
      c.done = true;
  }
  return c;
}

} // namespace ciq
