#include "engine/measure/MetricParser.h"

#include "engine/measure/CsvTable.h"
#include "engine/measure/MetricSources.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace ciq {

std::optional<double> secondsPerUnit(const std::string &unit) {
  std::string u = llvm::StringRef(unit).trim().lower();
  if (u == "s" || u == "sec" || u == "seconds")
    return 1.0;
  if (u == "ms" || u == "msec")
    return 1e-3;
  if (u == "us" || u == "usec" || u == "\xc2\xb5s")
    return 1e-6;
  if (u == "ns" || u == "nsec")
    return 1e-9;
  return std::nullopt;
}

std::string outputExcerpt(const std::string &text, size_t maxChars) {
  auto escape = [](llvm::StringRef s) {
    std::string out;
    for (char c : s)
      out += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("") : std::string(1, c);
    return out;
  };
  llvm::StringRef t = llvm::StringRef(text).trim();
  if (t.empty())
    return "(empty output)";
  if (t.size() <= maxChars)
    return "'" + escape(t) + "'";
  return "'" + escape(t.take_front(maxChars / 2)) + " ... " + escape(t.take_back(maxChars / 2)) + "'";
}

namespace {

// A whole-string number, optionally followed by a time unit ("12.3 us").
struct Number {
  double value = 0;
  std::string unit;
};
std::optional<Number> parseNumber(llvm::StringRef s) {
  s = s.trim();
  std::string buf = s.str();
  char *end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  // NaN and infinity parse: the benchmark printed them, and the engine
  // rejects them as invalid_value (a value the unit does not allow).
  if (end == buf.c_str())
    return std::nullopt;
  Number n{v, llvm::StringRef(end).trim().str()};
  if (!n.unit.empty() && n.unit != "%" && !secondsPerUnit(n.unit))
    return std::nullopt;
  return n;
}

// Converts a value given in `fromUnit` (a time unit, or "" for a plain number)
// to src.unit and applies src.scale.
std::optional<double> finish(double v, const std::string &fromUnit, const MetricSource &src,
                             std::string &error) {
  if (!fromUnit.empty() && fromUnit != "%") {
    auto from = secondsPerUnit(fromUnit);
    auto to = secondsPerUnit(src.unit);
    if (!to) {
      error = "the metric is a duration in " + fromUnit + " but benchmark.metric.unit is '" +
              src.unit + "', not a time unit; set unit: ms (or s, us, ns)";
      return std::nullopt;
    }
    v = v * *from / *to;
  }
  return v * src.scale;
}

std::optional<double> parseRegex(const MetricSource &src, const std::string &text,
                                 const std::string &where, std::string &error) {
  std::regex re;
  try {
    re = std::regex(src.pattern, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    error = "benchmark.metric.regex '" + src.pattern + "' is not a valid regular expression (" +
            e.what() + ")";
    return std::nullopt;
  }
  if (re.mark_count() < 1) {
    error = "benchmark.metric.regex '" + src.pattern +
            "' has no capture group; put the number in ( )";
    return std::nullopt;
  }
  std::smatch m;
  if (!std::regex_search(text, m, re)) {
    error = "benchmark.metric.regex '" + src.pattern + "' did not match the " + where + ": " +
            outputExcerpt(text);
    return std::nullopt;
  }
  auto n = parseNumber(m.str(1));
  if (!n) {
    error = "benchmark.metric.regex '" + src.pattern + "' captured '" + m.str(1) +
            "', not a number, in the " + where + ": " + outputExcerpt(text);
    return std::nullopt;
  }
  return finish(n->value, n->unit, src, error);
}

// The whole text as JSON, else its last line that is a JSON object or array.
std::optional<nlohmann::json> parseJsonText(const std::string &text) {
  auto whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded())
    return whole;
  llvm::SmallVector<llvm::StringRef, 32> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    llvm::StringRef l = it->trim();
    if (!l.startswith("{") && !l.startswith("["))
      continue;
    auto j = nlohmann::json::parse(l.begin(), l.end(), nullptr, false);
    if (!j.is_discarded())
      return j;
  }
  return std::nullopt;
}

std::optional<double> jsonNumber(const nlohmann::json &v) {
  if (v.is_number())
    return v.get<double>();
  if (v.is_string())
    if (auto n = parseNumber(v.get<std::string>()); n && n->unit.empty())
      return n->value;
  return std::nullopt;
}

std::optional<double> parseJsonPointer(const MetricSource &src, const std::string &text,
                                       const std::string &where, std::string &error) {
  auto doc = parseJsonText(text);
  if (!doc) {
    error = "benchmark.metric.json_pointer '" + src.pattern + "': the " + where +
            " is not JSON: " + outputExcerpt(text);
    return std::nullopt;
  }
  nlohmann::json::json_pointer ptr;
  try {
    ptr = nlohmann::json::json_pointer(src.pattern);
  } catch (const nlohmann::json::exception &e) {
    error = "benchmark.metric.json_pointer '" + src.pattern +
            "' is not a JSON pointer (RFC 6901: '/key/0/...')";
    return std::nullopt;
  }
  if (!doc->contains(ptr)) {
    error = "benchmark.metric.json_pointer '" + src.pattern + "' names nothing in the " + where +
            ": " + outputExcerpt(text);
    return std::nullopt;
  }
  auto v = jsonNumber(doc->at(ptr));
  if (!v) {
    error = "benchmark.metric.json_pointer '" + src.pattern + "' is " + doc->at(ptr).dump() +
            ", not a number, in the " + where;
    return std::nullopt;
  }
  return finish(*v, "", src, error);
}

// --- NVBench ---------------------------------------------------------------

struct StateSelector {
  std::vector<std::pair<std::string, std::string>> axes;   // Key=Value
  std::vector<std::string> benchmarks;                     // bare tokens
};
StateSelector parseSelector(const std::string &s) {
  StateSelector sel;
  std::istringstream in(s);
  std::string tok;
  while (in >> tok) {
    auto eq = tok.find('=');
    if (eq == std::string::npos)
      sel.benchmarks.push_back(tok);
    else
      sel.axes.emplace_back(tok.substr(0, eq), tok.substr(eq + 1));
  }
  return sel;
}
std::string describeSelector(const MetricSource &src) {
  return src.nvbenchState.empty() ? "the first state" : "state '" + src.nvbenchState + "'";
}
// "2^20" == "1048576": NVBench prints power-of-two axes both ways.
bool axisValueMatches(const std::string &have, const std::string &want) {
  if (have == want)
    return true;
  auto asInt = [](const std::string &s) -> std::optional<long long> {
    llvm::StringRef r(s);
    long long v = 0;
    if (r.consume_front("2^")) {
      unsigned e = 0;
      if (r.getAsInteger(10, e) || e > 62)
        return std::nullopt;
      return 1LL << e;
    }
    if (r.getAsInteger(10, v))
      return std::nullopt;
    return v;
  };
  auto a = asInt(have), b = asInt(want);
  return a && b && *a == *b;
}

// nvbench_json: summaries as an array (JSON format 1.x) or, in early NVBench,
// an object keyed by tag with a "values" array.
std::optional<nlohmann::json> summaryValue(const nlohmann::json &summ) {
  const nlohmann::json *values = nullptr;
  if (summ.contains("data"))
    values = &summ["data"];
  else if (summ.contains("values"))
    values = &summ["values"];
  if (!values || !values->is_array())
    return std::nullopt;
  for (const auto &v : *values)
    if (v.value("name", "") == "value" && v.contains("value"))
      return v["value"];
  return std::nullopt;
}
std::string summaryField(const nlohmann::json &summ, const char *field) {
  if (summ.contains(field) && summ[field].is_string())
    return summ[field].get<std::string>();
  // Early format: name/hint live in the values array.
  if (summ.contains("values") && summ["values"].is_array())
    for (const auto &v : summ["values"])
      if (v.value("name", "") == field && v.contains("value") && v["value"].is_string())
        return v["value"].get<std::string>();
  return "";
}

bool jsonStateMatches(const nlohmann::json &bench, const nlohmann::json &state,
                      const StateSelector &sel) {
  for (const auto &b : sel.benchmarks)
    if (bench.value("name", "") != b)
      return false;
  for (const auto &[key, want] : sel.axes) {
    bool found = false;
    for (const auto &av : state.value("axis_values", nlohmann::json::array())) {
      if (av.value("name", "") != key || !av.contains("value"))
        continue;
      std::string have = av["value"].is_string() ? av["value"].get<std::string>()
                                                 : av["value"].dump();
      found = axisValueMatches(have, want);
    }
    // Also accept the state's name tokens ("Device=0 Elements=2^20").
    std::istringstream in(state.value("name", state.value("description", "")));
    std::string tok;
    while (!found && in >> tok)
      found = tok == key + "=" + want ||
              (tok.rfind(key + "=", 0) == 0 && axisValueMatches(tok.substr(key.size() + 1), want));
    if (!found)
      return false;
  }
  return true;
}

std::optional<double> parseNvbenchJson(const MetricSource &src, const std::string &text,
                                       const std::string &where, std::string &error) {
  auto doc = parseJsonText(text);
  std::string what = "nvbench_json '" + src.nvbenchColumn + "' of " + describeSelector(src);
  if (!doc || !doc->is_object() || !doc->contains("benchmarks")) {
    error = what + ": the " + where +
            " is not NVBench JSON (no \"benchmarks\"); run the benchmark with --json <file>: " +
            outputExcerpt(text);
    return std::nullopt;
  }
  StateSelector sel = parseSelector(src.nvbenchState);
  for (const auto &bench : (*doc)["benchmarks"]) {
    for (const auto &state : bench.value("states", nlohmann::json::array())) {
      if (!jsonStateMatches(bench, state, sel))
        continue;
      if (state.value("is_skipped", false)) {
        if (src.nvbenchState.empty())
          continue;
        error = what + ": NVBench skipped that state (" + state.value("skip_reason", "") + ")";
        return std::nullopt;
      }
      const auto &summaries = state.value("summaries", nlohmann::json::array());
      for (auto it = summaries.begin(); it != summaries.end(); ++it) {
        const nlohmann::json &summ = *it;
        std::string tag = summaries.is_object() ? it.key() : summaryField(summ, "tag");
        if (summaryField(summ, "name") != src.nvbenchColumn && tag != src.nvbenchColumn &&
            summaryField(summ, "short_name") != src.nvbenchColumn)
          continue;
        auto raw = summaryValue(summ);
        auto v = raw ? jsonNumber(*raw) : std::nullopt;
        if (!v) {
          error = what + ": the summary has no numeric value";
          return std::nullopt;
        }
        bool duration = summaryField(summ, "hint") == "duration";
        return finish(*v, duration ? "s" : "", src, error);
      }
      error = what + ": the state has no summary named '" + src.nvbenchColumn +
              "' (NVBench names: \"GPU Time\", \"CPU Time\", \"Batch GPU\", ...)";
      return std::nullopt;
    }
  }
  error = what + ": no such state in the NVBench JSON of the " + where;
  return std::nullopt;
}

// The CSV block of NVBench's output: from the "Benchmark," header line to the
// first line that is blank (stdout may also hold logs and markdown tables).
std::string nvbenchCsvBlock(const std::string &text) {
  size_t start = 0;
  while (start < text.size()) {
    if (llvm::StringRef(text).substr(start).startswith("Benchmark,"))
      break;
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      return "";
    start = nl + 1;
  }
  if (start >= text.size())
    return "";
  size_t end = text.find("\n\n", start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
}

bool csvRowMatches(const CsvTable &t, size_t r, const StateSelector &sel) {
  for (const auto &b : sel.benchmarks)
    if (t.cell(r, "Benchmark") != b)
      return false;
  for (const auto &[key, want] : sel.axes) {
    bool ok = (t.column(key) >= 0 && axisValueMatches(t.cell(r, key), want)) ||
              (t.column(key + " (pow2)") >= 0 && axisValueMatches(t.cell(r, key + " (pow2)"), want));
    if (!ok)
      return false;
  }
  return true;
}

std::optional<double> parseNvbenchCsv(const MetricSource &src, const std::string &text,
                                      const std::string &where, std::string &error) {
  std::string what = "nvbench_csv '" + src.nvbenchColumn + "' of " + describeSelector(src);
  std::string block = nvbenchCsvBlock(text);
  if (block.empty()) {
    error = what + ": no NVBench CSV (a line starting with 'Benchmark,') in the " + where +
            "; run the benchmark with --csv <file>: " + outputExcerpt(text);
    return std::nullopt;
  }
  std::string csvError;
  auto table = parseCsv(block, csvError);
  if (!table) {
    error = what + ": " + csvError + " in the " + where;
    return std::nullopt;
  }
  // "GPU Time" or "GPU Time (sec)": the unit in parentheses.
  int col = -1;
  std::string headerUnit;
  for (size_t i = 0; i < table->header.size() && col < 0; ++i) {
    llvm::StringRef h(table->header[i]);
    if (h == src.nvbenchColumn) {
      col = int(i);
    } else if (h.startswith(src.nvbenchColumn + " (") && h.endswith(")")) {
      col = int(i);
      headerUnit = h.drop_front(src.nvbenchColumn.size() + 2).drop_back().str();
    }
  }
  if (col < 0) {
    error = what + ": no column '" + src.nvbenchColumn + "' in the CSV header '" +
            llvm::join(table->header, ",") + "'";
    return std::nullopt;
  }
  StateSelector sel = parseSelector(src.nvbenchState);
  for (size_t r = 0; r < table->rows.size(); ++r) {
    if (!csvRowMatches(*table, r, sel))
      continue;
    if (table->cell(r, "Skipped") == "Yes") {
      if (src.nvbenchState.empty())
        continue;
      error = what + ": NVBench skipped that state";
      return std::nullopt;
    }
    const std::string &cell = table->rows[r][size_t(col)];
    auto n = parseNumber(cell);
    if (!n) {
      error = what + ": cell '" + cell + "' is not a number";
      return std::nullopt;
    }
    std::string unit = !n->unit.empty() ? n->unit : secondsPerUnit(headerUnit) ? headerUnit : "";
    return finish(n->value, unit, src, error);
  }
  error = what + ": no such row in the NVBench CSV of the " + where;
  return std::nullopt;
}

} // namespace

std::string metricFilePath(const MetricSource &src, const std::string &workingDir) {
  if (src.file.empty())
    return "";
  llvm::SmallString<256> path(src.file);
  if (!llvm::sys::path::is_absolute(path) && !workingDir.empty())
    path = workingDir, llvm::sys::path::append(path, src.file);
  return std::string(path);
}

std::optional<double> parseMetric(const MetricSource &src, const std::string &stdoutText,
                                  const std::string &workingDir, std::string &error) {
  std::string text = stdoutText, where = "benchmark's stdout";
  const MetricSourceInfo *info = findMetricSource(src.kind);
  if (!info) {
    error = "benchmark.metric kind '" + src.kind + "' is unknown; use " + metricSourceNames(" or ");
    return std::nullopt;
  }
  if (info->id == MetricSourceId::WallTime || info->id == MetricSourceId::KernelTime) {
    error = "benchmark.metric " + src.kind + " is measured by the engine, not parsed from output";
    return std::nullopt;
  }
  if (!src.file.empty()) {
    std::string path = metricFilePath(src, workingDir);
    auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buf) {
      error = "benchmark.metric.file " + std::string(path) + " cannot be read (" +
              buf.getError().message() + "); does the benchmark write it there?";
      return std::nullopt;
    }
    text = (*buf)->getBuffer().str();
    where = "file " + std::string(path);
  }
  switch (info->id) {
  case MetricSourceId::Regex:
    return parseRegex(src, text, where, error);
  case MetricSourceId::JsonPointer:
    return parseJsonPointer(src, text, where, error);
  case MetricSourceId::NvbenchJson:
    return parseNvbenchJson(src, text, where, error);
  case MetricSourceId::NvbenchCsv:
    return parseNvbenchCsv(src, text, where, error);
  case MetricSourceId::WallTime:
  case MetricSourceId::KernelTime:
    break; // answered above
  }
  return std::nullopt;
}

} // namespace ciq
