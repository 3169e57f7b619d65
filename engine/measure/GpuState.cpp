#include "engine/measure/GpuState.h"

#include "engine/measure/CsvTable.h"
#include "common/Subprocess.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <llvm/ADT/StringRef.h>

namespace ciq {

namespace {
// nvidia-smi field, our key. Numbers are integers (MHz, C) or decimals (W).
const std::pair<const char *, const char *> kFields[] = {
    {"name", "name"},
    {"uuid", "uuid"},
    {"driver_version", "driver_version"},
    {"clocks.sm", "clocks_sm_mhz"},
    {"clocks.mem", "clocks_mem_mhz"},
    {"clocks.applications.graphics", "clocks_app_sm_mhz"},
    {"clocks.applications.memory", "clocks_app_mem_mhz"},
    {"compute_cap", "compute_cap"},
    {"temperature.gpu", "temperature_c"},
    {"power.draw", "power_w"},
    {"power.limit", "power_limit_w"},
};
// Throttle ("clock event") reasons that lower the clocks under load; idle
// and the application-clock setting are not problems.
const char *kThrottle[] = {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown",
                           "sw_power_cap"};

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// "[N/A]" or "[Not Supported]" become null; numbers become numbers.
nlohmann::json cellValue(const std::string &key, llvm::StringRef cell) {
  cell = cell.trim();
  if (cell.empty() || cell.startswith("[") || cell == "N/A")
    return nullptr;
  llvm::StringRef k(key);
  if (k.endswith("_mhz") || k.endswith("_c")) {
    long v = 0;
    if (!cell.getAsInteger(10, v))
      return v;
  }
  if (k.endswith("_w")) {
    double v = 0;
    if (!cell.getAsDouble(v))
      return v;
  }
  return cell.str();
}

std::optional<CsvTable> smiCsv(const std::string &smi, const std::string &what, const std::vector<std::string> &fields,
                               std::string &error) {
  std::string query;
  for (const auto &f : fields)
    query += (query.empty() ? "" : ",") + f;
  SubprocessOptions opts;
  opts.timeoutSeconds = 30;
  auto r = runSubprocess({smi, "--" + what + "=" + query, "--format=csv,noheader,nounits"}, opts);
  if (r.spawnFailed || r.timedOut || r.exitCode != 0) {
    std::string why = llvm::StringRef(r.out + r.err).trim().str();
    error = "nvidia-smi failed (" + (r.timedOut ? std::string("timed out") : why.substr(0, 200)) + ")";
    return std::nullopt;
  }
  return parseCsv(query + "\n" + r.out, error);
}

// Active throttle reasons by name; newer drivers call them clock events.
nlohmann::json throttleReasons(const std::string &smi, size_t gpus) {
  std::vector<nlohmann::json> out(gpus, nlohmann::json::array());
  for (const char *prefix : {"clocks_event_reasons.", "clocks_throttle_reasons."}) {
    std::vector<std::string> fields;
    for (const char *t : kThrottle)
      fields.push_back(prefix + std::string(t));
    std::string err;
    auto table = smiCsv(smi, "query-gpu", fields, err);
    if (!table)
      continue;
    for (size_t i = 0; i < table->rows.size() && i < gpus; ++i)
      for (size_t k = 0; k < fields.size() && k < table->rows[i].size(); ++k)
        if (llvm::StringRef(table->rows[i][k]).trim() == "Active")
          out[i].push_back(kThrottle[k]);
    return out;
  }
  return nullptr; // this nvidia-smi reports neither spelling
}

void addProcesses(const std::string &smi, nlohmann::json &gpus) {
  std::string err;
  auto table = smiCsv(smi, "query-compute-apps", {"gpu_uuid", "pid", "process_name", "used_memory"}, err);
  if (!table)
    return;
  for (auto &g : gpus) {
    g["processes"] = nlohmann::json::array();
    for (const auto &row : table->rows)
      if (row.size() >= 4 && g["uuid"].is_string() && llvm::StringRef(row[0]).trim() == g["uuid"].get<std::string>())
        g["processes"].push_back({{"pid", std::atol(row[1].c_str())},
                                  {"name", llvm::StringRef(row[2]).trim().str()},
                                  {"used_memory_mib", std::atol(row[3].c_str())}});
  }
}
} // namespace

nlohmann::json queryGpuState() {
  nlohmann::json out = {{"gpus", nlohmann::json::array()}, {"queried_at", nowUtc()}};
  auto smi = findExecutable("nvidia-smi");
  if (!smi) {
    out["note"] = "no GPU: nvidia-smi not found on PATH";
    return out;
  }
  std::vector<std::string> fields;
  for (const auto &f : kFields)
    fields.push_back(f.first);
  std::string error;
  auto table = smiCsv(*smi, "query-gpu", fields, error);
  if (!table) {
    out["note"] = "no GPU: " + error;
    return out;
  }
  for (size_t i = 0; i < table->rows.size(); ++i) {
    nlohmann::json gpu = {{"index", i}};
    for (size_t k = 0; k < std::size(kFields); ++k)
      gpu[kFields[k].second] = cellValue(kFields[k].second, k < table->rows[i].size() ? table->rows[i][k] : "");
    out["gpus"].push_back(gpu);
  }
  auto throttle = throttleReasons(*smi, out["gpus"].size());
  for (size_t i = 0; i < out["gpus"].size(); ++i)
    out["gpus"][i]["throttle"] = throttle.is_null() ? nlohmann::json() : throttle[i];
  addProcesses(*smi, out["gpus"]);
  if (out["gpus"].empty())
    out["note"] = "no GPU: nvidia-smi lists none";
  return out;
}

nlohmann::json measuredGpu(const nlohmann::json &state, const std::string &visibleDevices) {
  const auto gpus = state.value("gpus", nlohmann::json::array());
  if (gpus.empty())
    return nullptr;
  std::string visible = visibleDevices;
  if (const char *v = getenv("CUDA_VISIBLE_DEVICES"); v && visible.empty())
    visible = v;
  std::string first = llvm::StringRef(visible).split(',').first.trim().str();
  for (const auto &g : gpus) {
    if (first.empty() && g.value("index", -1) == 0)
      return g;
    if (!first.empty() && (g.value("uuid", nlohmann::json()) == first || std::to_string(g.value("index", -1)) == first))
      return g;
  }
  return gpus.front();
}

std::vector<std::string> gpuProblems(const nlohmann::json &gpu, const std::vector<long> &ownPids) {
  std::vector<std::string> p;
  if (!gpu.is_object())
    return p;
  std::string idx = std::to_string(gpu.value("index", 0));
  if (gpu.contains("throttle") && gpu["throttle"].is_array() && !gpu["throttle"].empty()) {
    std::string list;
    for (const auto &t : gpu["throttle"])
      list += (list.empty() ? "" : ", ") + t.get<std::string>();
    p.push_back("GPU " + idx + " throttled (" + list + ")");
  }
  if (gpu.contains("processes") && gpu["processes"].is_array())
    for (const auto &pr : gpu["processes"]) {
      long pid = pr.value("pid", 0L);
      if (std::find(ownPids.begin(), ownPids.end(), pid) == ownPids.end())
        p.push_back("GPU " + idx + " shared with another compute process (pid " + std::to_string(pid) + " " +
                    pr.value("name", std::string("?")) + ", " + std::to_string(pr.value("used_memory_mib", 0L)) +
                    " MiB)");
    }
  return p;
}

std::string describeGpu(const nlohmann::json &g) {
  auto s = [&](const char *k) { return !g.contains(k) || g[k].is_null() ? std::string("n/a") : g[k].dump(); };
  auto str = [&](const char *k) { return g.contains(k) && g[k].is_string() ? g[k].get<std::string>() : "n/a"; };
  return str("name") + ", compute capability " + str("compute_cap") + ", driver " + str("driver_version") + ", " +
         s("temperature_c") + " C, power " + s("power_w") + "/" + s("power_limit_w") + " W, SM " + s("clocks_sm_mhz") +
         " MHz, memory " + s("clocks_mem_mhz") + " MHz, application clocks " + s("clocks_app_sm_mhz") + "/" +
         s("clocks_app_mem_mhz") + " MHz";
}

} // namespace ciq
