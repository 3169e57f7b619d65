#include "engine/record/RunSchema.h"
#include "common/JsonRead.h"
#include "common/Subprocess.h"

#include <cstdio>
#include <iterator>

namespace ciq {

namespace {

// The header names, in the order of CsvCol.
constexpr const char *kFixedColumns[] = {
    "candidate_id", "generation", "status", "reason", "baseline", "pareto", "duplicate_of",
    "duplicate_kind", "score", "score_unit", "cv_percent", "candidate_hash",
    "device_code_sha256", "controls", "rendered", "build_ms", "measure_ms", "evaluated_at", "log",
    "runs", "noise_percent", "stopped_by", "runs_saved"};
static_assert(std::size(kFixedColumns) == size_t(CsvCol::kCount), "one name for each CsvCol");

} // namespace

const std::vector<std::string> &resultsCsvFixedColumns() {
  static const std::vector<std::string> cols(std::begin(kFixedColumns), std::end(kFixedColumns));
  return cols;
}

const std::string &resultsCsvColumn(CsvCol c) { return resultsCsvFixedColumns().at(size_t(c)); }

namespace {

std::string quoteCell(const std::string &s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

} // namespace

std::string resultsCsvRow(const std::vector<std::string> &cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i)
    line += (i ? "," : "") + quoteCell(cells[i]);
  return line + "\n";
}

std::string resultsCsvNumber(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string renderedSummary(const std::vector<std::string> &ptxas, const std::vector<std::string> &nvcc,
                            const std::vector<std::string> &defines,
                            const std::vector<std::pair<std::string, std::string>> &acfs,
                            const std::vector<KernelDirective> &kernels, const std::vector<UnitOptions> &units) {
  std::vector<std::string> parts;
  for (const auto &o : ptxas)
    parts.push_back("-Xptxas " + shellQuote(o));
  for (const auto &o : nvcc)
    parts.push_back(shellQuote(o));
  for (const auto &d : defines)
    parts.push_back("-D" + shellQuote(d));
  for (const auto &[stage, path] : acfs)
    parts.push_back("--apply-controls(" + stage + ") " + shellQuote(path));
  for (const auto &k : kernels)
    parts.push_back("kernel " + (k.label.empty() ? k.kernel : k.label) + ": " + directivePtx(k));
  for (const auto &u : units) {
    std::string opts;
    for (const auto &o : u.ptxas)
      opts += " -Xptxas " + shellQuote(o);
    for (const auto &o : u.nvcc)
      opts += " " + shellQuote(o);
    parts.push_back("unit " + u.unit + ":" + opts);
  }
  std::string s;
  for (const auto &p : parts)
    s += (s.empty() ? "" : " ") + p;
  return s.empty() ? "(default compile)" : s;
}

std::string renderedSummary(const nlohmann::json &rendered) {
  if (!rendered.is_object())
    return "";
  std::vector<std::string> ptxas, nvcc, defines;
  std::vector<nlohmann::json> acfJson;
  auto member = [&](const char *key, auto &out) { JsonFields(rendered, "").opt(key, out); };
  member("ptxas", ptxas);
  member("nvcc", nvcc);
  member("defines", defines);
  member("acfs", acfJson);
  std::vector<KernelDirective> kernels;
  member("kernels", kernels);
  std::vector<UnitOptions> units;
  member("units", units);
  std::vector<std::pair<std::string, std::string>> acfs;
  for (const auto &a : acfJson) {
    std::string stage, path;
    JsonFields(a, "").opt("stage", stage).opt("path", path);
    acfs.push_back({stage, path});
  }
  return renderedSummary(ptxas, nvcc, defines, acfs, kernels, units);
}

} // namespace ciq
