#include "engine/executors/BatchTwins.h"

namespace ciq {

BatchTwins::BatchTwins(std::vector<Evaluation> &batch, const KnownResults &known)
    : batch_(batch), known_(known), keys_(batch.size()), identified_(batch.size()), done_(batch.size()) {}

bool BatchTwins::identifiedUpTo(size_t k) const {
  for (size_t j = 0; j < k; ++j)
    if (!identified_[j])
      return false;
  return true;
}

bool BatchTwins::ownConfiguration(size_t k) const {
  if (known_.byConfiguration && known_.byConfiguration(batch_[k].candidateHash))
    return false;
  for (size_t j = 0; j < k; ++j)
    if (batch_[j].candidateHash == batch_[k].candidateHash)
      return false;
  return true;
}

const Evaluation *BatchTwins::configurationTwin(size_t k) {
  if (const Evaluation *r = known_.byConfiguration ? known_.byConfiguration(batch_[k].candidateHash) : nullptr)
    return r;
  std::unique_lock<std::mutex> lock(m_);
  for (size_t j = 0; j < k; ++j)
    if (batch_[j].candidateHash == batch_[k].candidateHash) {
      // Its configuration is known before anything is built: k waits for j's
      // result without building (and identifies itself as j did).
      cv_.wait(lock, [&] { return (bool)done_[j]; });
      return &batch_[j];
    }
  return nullptr;
}

const Evaluation *BatchTwins::deviceTwin(size_t k, const Evaluation &e) {
  std::string key = known_.reuseKey ? known_.reuseKey(e) : "";
  {
    std::lock_guard<std::mutex> lock(m_);
    keys_[k] = key;
    identified_[k] = true;
  }
  cv_.notify_all();
  if (key.empty())
    return nullptr;
  if (const Evaluation *r = known_.byDeviceCode ? known_.byDeviceCode(e) : nullptr)
    return r;
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return identifiedUpTo(k); });
  for (size_t j = 0; j < k; ++j)
    if (keys_[j] == key) {
      cv_.wait(lock, [&] { return (bool)done_[j]; });
      // Measured OK, as a recorded twin must be; else k is measured itself.
      if (batch_[j].ok && batch_[j].duplicateKind != "config")
        return &batch_[j];
    }
  return nullptr;
}

void BatchTwins::finished(size_t k) {
  {
    std::lock_guard<std::mutex> lock(m_);
    identified_[k] = done_[k] = true;
  }
  cv_.notify_all();
}

} // namespace ciq
