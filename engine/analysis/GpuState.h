// The GPU's state as nvidia-smi reports it, recorded next to measurements
// (results, lockfile). Read-only: ciq records clocks, it never sets them.
#pragma once
#include <nlohmann/json.hpp>

namespace ciq {

// {"gpus": [{"index", "name", "driver_version", "compute_cap",
//            "clocks_sm_mhz", "clocks_mem_mhz", "clocks_app_sm_mhz",
//            "clocks_app_mem_mhz", "clocks_max_sm_mhz", "throttle_reasons",
//            "throttled", "temperature_c"}, ...], "queried_at": ISO-8601 UTC}
// from `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`; a value
// nvidia-smi prints as "[N/A]" is null. No GPU (nvidia-smi absent or failing):
// {"gpus": [], "note": "<why>"}. `device`: only that GPU (an index or UUID as
// in CUDA_VISIBLE_DEVICES); empty: all. "throttled": an active clock-event
// reason other than idle (the measurement ran below full clocks).
nlohmann::json queryGpuState(const std::string &device = "");

} // namespace ciq
