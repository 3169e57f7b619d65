#include "GpuState.h"

#include "CsvTable.h"
#include "Subprocess.h"

#include <cstdlib>
#include <ctime>
#include <llvm/ADT/StringRef.h>

namespace ciq {

namespace {
const char *kFields[] = {"name", "driver_version", "clocks.sm", "clocks.mem",
                         "clocks.applications.graphics", "clocks.applications.memory",
                         "compute_cap", "clocks.max.sm", "clocks_event_reasons.active", "temperature.gpu"};
const char *kKeys[] = {"name", "driver_version", "clocks_sm_mhz", "clocks_mem_mhz",
                       "clocks_app_sm_mhz", "clocks_app_mem_mhz", "compute_cap", "clocks_max_sm_mhz",
                       "throttle_reasons", "temperature_c"};

std::string nowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Clocks are integers in MHz; "[N/A]" or "[Not Supported]" become null.
nlohmann::json cellValue(const std::string &key, llvm::StringRef cell) {
  cell = cell.trim();
  if (cell.empty() || cell.startswith("[") || cell == "N/A")
    return nullptr;
  if (llvm::StringRef(key).startswith("clocks_")) {
    long v = 0;
    if (!cell.getAsInteger(10, v))
      return v;
  }
  return cell.str();
}
} // namespace

nlohmann::json queryGpuState(const std::string &device) {
  nlohmann::json out = {{"gpus", nlohmann::json::array()}, {"queried_at", nowUtc()}};
  auto smi = findExecutable("nvidia-smi");
  if (!smi) {
    out["note"] = "no GPU: nvidia-smi not found on PATH";
    return out;
  }
  std::string query;
  for (const char *f : kFields)
    query += (query.empty() ? "" : ",") + std::string(f);
  SubprocessOptions opts;
  opts.timeoutSeconds = 30;
  std::vector<std::string> argv = {*smi, "--query-gpu=" + query, "--format=csv,noheader,nounits"};
  if (!device.empty())
    argv.push_back("--id=" + device);
  auto r = runSubprocess(argv, opts);
  if (r.spawnFailed || r.timedOut || r.exitCode != 0) {
    std::string why = llvm::StringRef(r.out + r.err).trim().str();
    out["note"] = "no GPU: nvidia-smi failed (" +
                  (r.timedOut ? std::string("timed out") : why.substr(0, 200)) + ")";
    return out;
  }
  std::string error;
  auto table = parseCsv(std::string(query) + "\n" + r.out, error);
  if (!table) {
    out["note"] = "nvidia-smi output not understood: " + error;
    return out;
  }
  for (size_t i = 0; i < table->rows.size(); ++i) {
    nlohmann::json gpu = {{"index", i}};
    for (size_t k = 0; k < std::size(kKeys); ++k)
      gpu[kKeys[k]] = cellValue(kKeys[k], k < table->rows[i].size() ? table->rows[i][k] : "");
    // A bit mask such as 0x0000000000000001; bit 0 (idle) holds no clock down.
    unsigned long long reasons = 0;
    gpu["throttled"] = gpu["throttle_reasons"].is_string() &&
                       !llvm::StringRef(gpu["throttle_reasons"].get<std::string>()).getAsInteger(0, reasons) &&
                       (reasons & ~1ull) != 0;
    out["gpus"].push_back(gpu);
  }
  if (out["gpus"].empty())
    out["note"] = "no GPU: nvidia-smi lists none";
  return out;
}

} // namespace ciq
