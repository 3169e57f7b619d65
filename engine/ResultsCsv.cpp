#include "ResultsCsv.h"

#include "FileIO.h"

#include <cstdio>
#include <sstream>

namespace ciq {
namespace {

// RFC 4180 quoting: a field with a comma, quote or newline is quoted, quotes doubled.
std::string field(const std::string &s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

} // namespace

std::vector<std::string> resultsCsvHeader(const TuneConfig &cfg) {
  std::vector<std::string> h = {"candidate_id", "generation", "status", "reason", "baseline", "pareto",
                                "duplicate_of", "duplicate_kind", "score", "score_unit", "cv_percent",
                                "candidate_hash", "device_code_sha256", "controls", "rendered", "build_ms",
                                "measure_ms", "evaluated_at", "log", "runs", "noise_percent", "stopped_by",
                                "runs_saved"};
  for (const auto &o : cfg.objectives)
    h.push_back(o.metric);
  return h;
}

bool writeResultsCsv(const std::string &path, const TuneConfig &cfg, const std::vector<Evaluation> &evals,
                     std::string &error) {
  std::ostringstream out;
  auto header = resultsCsvHeader(cfg);
  for (size_t i = 0; i < header.size(); ++i)
    out << (i ? "," : "") << header[i];
  out << "\n";
  const std::string &primary = cfg.objectives.front().metric;
  for (const auto &e : evals) {
    std::vector<std::string> row = {
        e.candidateId, std::to_string(e.generation), e.ok ? "OK" : "INVALID", e.reason,
        e.generation == 0 ? "1" : "0", e.pareto ? "1" : "0", e.duplicateOf, e.duplicateKind,
        e.ok && e.scores.count(primary) ? num(e.scores.at(primary)) : "", cfg.objectives.front().unit,
        e.cvPercent >= 0 ? num(e.cvPercent) : "", e.candidateHash, e.deviceCodeSha256,
        e.rendered.controls.dump(), e.generation == 0 ? "" : e.rendered.summary(), num(e.buildMs),
        num(e.measureMs), e.evaluatedAt, e.log, e.stoppedBy.empty() ? "" : std::to_string(e.runs.size()),
        e.noisePercent >= 0 ? num(e.noisePercent) : "", e.stoppedBy, std::to_string(e.runsSaved)};
    for (const auto &o : cfg.objectives)
      row.push_back(e.ok && e.scores.count(o.metric) ? num(e.scores.at(o.metric)) : "");
    for (size_t i = 0; i < row.size(); ++i)
      out << (i ? "," : "") << field(row[i]);
    out << "\n";
  }
  std::string why;
  if (!writeFileAtomically(path, out.str(), why)) {
    error = "cannot write " + path + " (" + why + ")";
    return false;
  }
  return true;
}

} // namespace ciq
