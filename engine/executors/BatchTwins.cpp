#include "engine/executors/BatchTwins.h"

namespace ciq {

BatchTwins::BatchTwins(std::vector<Evaluation> &batch, const KnownResults &known) : known_(known) {
  for (auto &e : batch)
    add(&e);
}

void BatchTwins::add(Evaluation *e) {
  std::lock_guard<std::mutex> lock(m_);
  items_.push_back(e);
  hashes_.push_back(e->candidateHash);
  keys_.emplace_back();
  identified_.push_back(false);
  done_.push_back(false);
}

const Evaluation *BatchTwins::keep(std::optional<Evaluation> recorded) {
  if (!recorded)
    return nullptr;
  std::lock_guard<std::mutex> lock(m_);
  recorded_.push_back(std::move(*recorded));
  return &recorded_.back();
}

bool BatchTwins::identifiedUpTo(size_t k) {
  while (identifiedPrefix_ < k && identified_[identifiedPrefix_])
    ++identifiedPrefix_;
  return identifiedPrefix_ >= k;
}

bool BatchTwins::ownConfiguration(size_t k) {
  std::string hash;
  {
    std::lock_guard<std::mutex> lock(m_);
    hash = hashes_[k];
    for (size_t j = 0; j < k; ++j)
      if (hashes_[j] == hash)
        return false;
  }
  return !(known_.byConfiguration && known_.byConfiguration(hash));
}

const Evaluation *BatchTwins::configurationTwin(size_t k) {
  std::string hash;
  {
    std::lock_guard<std::mutex> lock(m_);
    hash = hashes_[k];
  }
  if (const Evaluation *r = keep(known_.byConfiguration ? known_.byConfiguration(hash) : std::nullopt))
    return r;
  std::unique_lock<std::mutex> lock(m_);
  for (size_t j = 0; j < k; ++j)
    if (hashes_[j] == hash) {
      // Its configuration is known before anything is built: k waits for j's
      // result without building (and identifies itself as j did).
      cv_.wait(lock, [&] { return (bool)done_[j]; });
      return items_[j];
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
  if (const Evaluation *r = keep(known_.byDeviceCode ? known_.byDeviceCode(e) : std::nullopt))
    return r;
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait(lock, [&] { return identifiedUpTo(k); });
  for (size_t j = 0; j < k; ++j)
    if (keys_[j] == key) {
      cv_.wait(lock, [&] { return (bool)done_[j]; });
      // Measured OK, as a recorded twin must be; else k is measured itself.
      if (items_[j]->ok && items_[j]->duplicateKind != "config")
        return items_[j];
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
