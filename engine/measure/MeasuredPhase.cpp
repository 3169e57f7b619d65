#include "engine/measure/MeasuredPhase.h"
#include "engine/measure/GpuState.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <unistd.h>

namespace ciq {

MeasuredPhase::MeasuredPhase(std::string visibleDevices, std::string holder,
                             std::function<void(const std::string &)> say)
    : visible_(std::move(visibleDevices)), holder_(std::move(holder)), say_(std::move(say)) {}

bool MeasuredPhase::begin(std::string &error) {
  if (uuid_.empty()) { // which GPU: asked once, it does not change
    nlohmann::json gpu = measuredGpu(queryGpuState(), visible_);
    uuid_ = gpu.is_object() && gpu.value("uuid", nlohmann::json()).is_string() ? gpu["uuid"].get<std::string>()
                                                                               : "host";
  }
  std::string me = "pid " + std::to_string(getpid()) + " (" + (getenv("USER") ? getenv("USER") : "?") + "): " + holder_;
  // Another worker of this search on the same GPU is no news: it is how
  // workers beyond the GPU count take turns.
  bool foreign = false;
  auto waiting = [&](const std::string &other) {
    foreign = other.rfind("pid " + std::to_string(getpid()) + " ", 0) != 0;
    if (say_ && foreign)
      say_("waiting for GPU " + uuid_ + ": it is measuring for " + other + " (lock " + lock_.path() + ")");
  };
  auto asked = std::chrono::steady_clock::now();
  if (!lock_.acquire(uuid_, me, error, waiting))
    return false;
  if (foreign)
    foreignWait_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count();
  // The state once the GPU is ours: what a foreign process does now counts.
  before_ = measuredGpu(queryGpuState(), visible_);
  if (first_.is_null())
    first_ = before_;
  return true;
}

std::vector<std::string> MeasuredPhase::end() {
  after_ = measuredGpu(queryGpuState(), visible_);
  lock_.release();
  ++phases_;
  std::vector<std::string> found = gpuProblems(before_);
  for (const auto &p : gpuProblems(after_))
    if (std::find(found.begin(), found.end(), p) == found.end())
      found.push_back(p);
  problems_.insert(found.begin(), found.end());
  return found;
}

std::vector<double> MeasuredPhase::smClocks() const {
  auto mhz = [](const nlohmann::json &g) {
    return g.is_object() && g.contains("clocks_sm_mhz") && g["clocks_sm_mhz"].is_number() ? g["clocks_sm_mhz"].get<double>()
                                                                                         : -1.0;
  };
  double b = mhz(before_), a = mhz(after_);
  if (b < 0 || a < 0)
    return {};
  return {b, a};
}

nlohmann::json MeasuredPhase::record() const {
  return {{"exclusive", true},
          {"gpu_uuid", uuid_},
          {"lock_file", lock_.path()},
          {"phases", phases_},
          {"problems", std::vector<std::string>(problems_.begin(), problems_.end())},
          {"gpu_before", first_},
          {"gpu_after", after_}};
}

} // namespace ciq
