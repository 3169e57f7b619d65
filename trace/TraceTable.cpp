#include "trace/TraceTable.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace ciq::trace {

void TraceTable::add(const Launch &l) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t ns = l.endNs > l.startNs ? l.endNs - l.startNs : 0;
  KernelAggregate &k = kernels_[l.name];
  if (k.launches == 0)
    k.first = l;
  ++k.launches;
  ++records_;
  k.totalNs += ns;
  k.minNs = std::min(k.minNs, ns);
  k.maxNs = std::max(k.maxNs, ns);
}

void TraceTable::addDropped(uint64_t n) {
  std::lock_guard<std::mutex> g(mu_);
  dropped_ += n;
}

void TraceTable::clear() {
  std::lock_guard<std::mutex> g(mu_);
  kernels_.clear();
  dropped_ = records_ = 0;
}

std::string traceFileFor(const std::string &prefix, long pid) { return prefix + "." + std::to_string(pid) + ".json"; }

static nlohmann::json triple(const int32_t v[3]) { return nlohmann::json::array({v[0], v[1], v[2]}); }

bool TraceTable::write(const std::string &path, const std::string &status, const std::string &error,
                       const std::string &cuptiPath, uint32_t cuptiVersion) {
  nlohmann::json doc = {{"format", "ciq-kernel-trace"}, {"version", 1},         {"pid", (long)getpid()},
                        {"status", status},             {"error", error},       {"cupti", cuptiPath},
                        {"cupti_version", cuptiVersion}};
  {
    std::lock_guard<std::mutex> g(mu_);
    doc["records"] = records_;
    doc["dropped_records"] = dropped_;
    nlohmann::json ks = nlohmann::json::array();
    for (const auto &[name, k] : kernels_)
      ks.push_back({{"name", name},
                    {"launches", k.launches},
                    {"total_ns", k.totalNs},
                    {"min_ns", k.minNs == UINT64_MAX ? 0 : k.minNs},
                    {"max_ns", k.maxNs},
                    {"grid", triple(k.first.grid)},
                    {"block", triple(k.first.block)},
                    {"registers", k.first.registers},
                    {"static_shared_bytes", k.first.staticShared},
                    {"dynamic_shared_bytes", k.first.dynamicShared},
                    {"device", k.first.device}});
    doc["kernels"] = std::move(ks);
  }
  // A name that is not UTF-8 is kept readable (U+FFFD) rather than dropping
  // the whole document: nlohmann refuses invalid UTF-8 by default.
  std::string text = doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f)
    return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  // Renamed whole: the engine never reads half a trace.
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

} // namespace ciq::trace
