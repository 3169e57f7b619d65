#include "engine/ResultsCsv.h"

#include "common/FileIO.h"
#include "engine/record/RunSchema.h"

#include <cstdio>
#include <sstream>

namespace ciq {
std::vector<std::string> resultsCsvHeader(const TuneConfig &cfg) {
  std::vector<std::string> h = resultsCsvFixedColumns();
  for (const auto &o : cfg.objectives)
    h.push_back(o.metric);
  return h;
}

bool writeResultsCsv(const std::string &path, const TuneConfig &cfg, const std::vector<Evaluation> &evals,
                     std::string &error) {
  std::ostringstream out;
  auto header = resultsCsvHeader(cfg);
  out << resultsCsvRow(header);
  const std::string &primary = cfg.objectives.front().metric;
  for (const auto &e : evals) {
    std::vector<std::string> row = {
        e.candidateId, std::to_string(e.generation), e.ok ? "OK" : "INVALID", e.reason,
        e.generation == 0 ? "1" : "0", e.pareto ? "1" : "0", e.duplicateOf, e.duplicateKind,
        e.ok && e.scores.count(primary) ? resultsCsvNumber(e.scores.at(primary)) : "", cfg.objectives.front().unit,
        e.cvPercent >= 0 ? resultsCsvNumber(e.cvPercent) : "", e.candidateHash, e.deviceCodeSha256,
        e.rendered.controls.dump(), e.generation == 0 ? "" : e.rendered.summary(), resultsCsvNumber(e.buildMs),
        resultsCsvNumber(e.measureMs), e.evaluatedAt, e.log, e.stoppedBy.empty() ? "" : std::to_string(e.runs.size()),
        e.noisePercent >= 0 ? resultsCsvNumber(e.noisePercent) : "", e.stoppedBy, std::to_string(e.runsSaved)};
    for (const auto &o : cfg.objectives)
      row.push_back(e.ok && e.scores.count(o.metric) ? resultsCsvNumber(e.scores.at(o.metric)) : "");
    out << resultsCsvRow(row);
  }
  std::string why;
  if (!writeFileAtomically(path, out.str(), why)) {
    error = "cannot write " + path + " (" + why + ")";
    return false;
  }
  return true;
}

} // namespace ciq
