// The GPU's state as nvidia-smi reports it, recorded next to measurements
// (results, lockfile) and checked before and after every measured phase: a
// throttled GPU or one shared with another compute process gives no
// verdict. Read-only: ciq records clocks, it never sets them.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

// {"gpus": [{"index", "uuid", "name", "driver_version", "compute_cap",
//            "clocks_sm_mhz", "clocks_mem_mhz", "clocks_app_sm_mhz",
//            "clocks_app_mem_mhz", "temperature_c", "power_w", "power_limit_w",
//            "throttle": ["hw_thermal_slowdown", ...],
//            "processes": [{"pid", "name", "used_memory_mib"}]}, ...],
//  "queried_at": ISO-8601 UTC}
// from `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` and
// `--query-compute-apps`; a value nvidia-smi prints as "[N/A]" is null. No
// GPU (nvidia-smi absent or failing): {"gpus": [], "note": "<why>"}.
nlohmann::json queryGpuState();

// The GPU a benchmark runs on: the first of `visibleDevices` (a
// CUDA_VISIBLE_DEVICES value: indices or UUIDs; empty: this process's
// CUDA_VISIBLE_DEVICES), else GPU 0; null when `state` lists none.
nlohmann::json measuredGpu(const nlohmann::json &state, const std::string &visibleDevices = "");

// What makes a measurement on `gpu` untrustworthy, one phrase each: active
// throttle reasons that slow the clocks (thermal, power cap, hardware
// slowdown) and compute processes other than `ownPids`.
std::vector<std::string> gpuProblems(const nlohmann::json &gpu, const std::vector<long> &ownPids = {});

// One line for people: "NVIDIA H200, 41 C, 120/700 W, SM 1980 MHz (app 1980)".
std::string describeGpu(const nlohmann::json &gpu);

} // namespace ciq
