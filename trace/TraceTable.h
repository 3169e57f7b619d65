// One process's kernel launches, aggregated per kernel name as CUPTI hands
// them over, and the trace file the engine reads (engine/measure/KernelTrace.h
// reads it; docs/config.md "Kernel times" describes it). Independent of CUPTI
// so that the format has one writer.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace ciq::trace {

struct Launch {
  std::string name; // mangled, as CUPTI reports it
  uint64_t startNs = 0, endNs = 0;
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint32_t registers = 0, device = 0;
  int32_t staticShared = 0, dynamicShared = 0;
};

struct KernelAggregate {
  uint64_t launches = 0, totalNs = 0, minNs = UINT64_MAX, maxNs = 0;
  Launch first; // grid, block, registers, shared memory of the first launch
};

// Thread-safe: CUPTI delivers buffers on its own thread.
class TraceTable {
public:
  void add(const Launch &l);
  void addDropped(uint64_t n);
  // The trace document: "ok" with the kernels, or `status` "error" with `error`,
  // or "incomplete" (written at start, replaced at exit: a process that ends
  // without running exit handlers leaves it). Written to <path>.tmp, then renamed.
  bool write(const std::string &path, const std::string &status, const std::string &error,
             const std::string &cuptiPath, uint32_t cuptiVersion);
  void clear();

private:
  std::mutex mu_;
  std::map<std::string, KernelAggregate> kernels_;
  uint64_t dropped_ = 0, records_ = 0;
};

// The file one process writes: <CIQ_KERNEL_TRACE>.<pid>.json.
std::string traceFileFor(const std::string &prefix, long pid);

} // namespace ciq::trace
