// A measured phase (one candidate's runs, the finalists, a validation):
// exclusive use of the GPU across processes (GpuLock) and the GPU's state
// before and after. A GPU that throttled or was shared with another compute
// process during any phase makes the measurements untrustworthy: the
// problems are collected, shown, and recorded in the lock.
#pragma once
#include "engine/measure/GpuLock.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace ciq {

class MeasuredPhase {
public:
  // visibleDevices: the CUDA_VISIBLE_DEVICES the benchmark runs with ("" =
  // this process's); holder: who measures ("ciq tune app (/path/ciq.yaml)");
  // say: where the "waiting for GPU ..." line goes.
  MeasuredPhase(std::string visibleDevices, std::string holder, std::function<void(const std::string &)> say);

  // Takes the GPU (waiting while another process measures on it) and
  // records its state; false with `error` when the lock cannot be taken.
  bool begin(std::string &error);
  // Records the state after, releases the GPU; returns this phase's problems
  // (throttling, foreign compute processes), before or after.
  std::vector<std::string> end();

  // Every problem seen in any phase so far.
  const std::set<std::string> &problems() const { return problems_; }
  // For the lockfile: {"exclusive": true, "gpu_uuid", "lock_file",
  // "phases", "problems": [...], "gpu_before", "gpu_after"}.
  nlohmann::json record() const;
  // The SM clock (MHz) before and after the last phase: one reading each,
  // taken with the state; empty where either is unknown (no GPU).
  std::vector<double> smClocks() const;
  // The GPU's state at the end of the last phase (measuredGpu; null before).
  const nlohmann::json &after() const { return after_; }
  // Seconds spent waiting while another process held the GPU: not a cost
  // of this program's runs (the tune's clock keeps it apart).
  double foreignWaitSeconds() const { return foreignWait_; }

private:
  std::string visible_, holder_;
  std::function<void(const std::string &)> say_;
  GpuLock lock_;
  std::string uuid_;
  nlohmann::json before_, after_, first_;
  std::set<std::string> problems_;
  int phases_ = 0;
  double foreignWait_ = 0;
};

} // namespace ciq
