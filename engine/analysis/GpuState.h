// The GPU's state as nvidia-smi reports it, recorded next to measurements
// (results, lockfile). Read-only: ciq records clocks, it never sets them.
#pragma once
#include <nlohmann/json.hpp>

namespace ciq {

// {"gpus": [{"index", "name", "driver_version", "compute_cap",
//            "clocks_sm_mhz", "clocks_mem_mhz", "clocks_app_sm_mhz",
//            "clocks_app_mem_mhz"}, ...], "queried_at": ISO-8601 UTC}
// from `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`; a value
// nvidia-smi prints as "[N/A]" is null. No GPU (nvidia-smi absent or failing):
// {"gpus": [], "note": "<why>"}.
nlohmann::json queryGpuState();

} // namespace ciq
