// libciq-kernel-trace: the CUDA injection library ciq loads into a benchmark
// (CUDA_INJECTION64_PATH, the way NVIDIA's own tools attach) to time every
// kernel launch with CUPTI's Activity API. The CUDA driver calls
// InitializeInjection() in cuInit; at exit the records are flushed and one
// trace file per process is written (TraceTable.h). Whatever fails here is
// written into that file and never changes what the benchmark does: no abort,
// no message, no exit status of ours.
#include "trace/CuptiLoader.h"
#include "trace/TraceTable.h"
#include "common/EnvNames.h"

#include <atomic>
#include <cstdlib>
#include <pthread.h>
#include <unistd.h>

namespace ciq::trace {
namespace {

constexpr size_t kBufferBytes = 8 << 20;

Cupti gCupti;
TraceTable gTable;
std::string gPath;             // <CIQ_KERNEL_TRACE>.<pid>.json
uint32_t gCuptiVersion = 0;
std::atomic<bool> gForkedChild{false};
std::atomic<bool> gTracing{false};

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxNumRecords) {
  *buffer = static_cast<uint8_t *>(aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *maxNumRecords = 0;
}

Launch launchOf(const CUpti_ActivityKernel10 &k) {
  Launch l;
  l.name = k.name ? k.name : "<unnamed>";
  l.startNs = k.start;
  l.endNs = k.end;
  l.grid[0] = k.gridX, l.grid[1] = k.gridY, l.grid[2] = k.gridZ;
  l.block[0] = k.blockX, l.block[1] = k.blockY, l.block[2] = k.blockZ;
  l.registers = k.registersPerThread;
  l.staticShared = k.staticSharedMemory;
  l.dynamicShared = k.dynamicSharedMemory;
  l.device = k.deviceId;
  return l;
}

void CUPTIAPI bufferCompleted(CUcontext ctx, uint32_t streamId, uint8_t *buffer, size_t size, size_t validSize) {
  CUpti_Activity *record = nullptr;
  while (validSize > 0 && gCupti.activityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL)
      gTable.add(launchOf(*reinterpret_cast<const CUpti_ActivityKernel10 *>(record)));
  }
  size_t dropped = 0;
  if (gCupti.activityGetNumDroppedRecords(ctx, streamId, &dropped) == CUPTI_SUCCESS && dropped > 0)
    gTable.addDropped(dropped);
  free(buffer);
}

void writeError(const std::string &error) { gTable.write(gPath, "error", error, gCupti.path, gCuptiVersion); }

// A forked child holds a copy of the parent's records: writing them again
// would count the parent's kernels twice (and CUDA does not work in it).
void onFork() { gForkedChild = true; }

void onExit() {
  if (gForkedChild || !gTracing)
    return;
  CUptiResult r = gCupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_NOT_INITIALIZED) {
    writeError("cuptiActivityFlushAll failed at exit: " + gCupti.describe(r));
    return;
  }
  gTable.write(gPath, "ok", "", gCupti.path, gCuptiVersion);
}

std::string subscriberHint(CUptiResult r) {
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    return " (another CUPTI client is attached: a profiler such as ncu or nsys, or one inside the program such "
           "as PyTorch's; CUPTI allows one)";
  return "";
}

// Loads CUPTI and starts kernel activity records; false after writing why not.
bool startTracing() {
  std::string error;
  if (!loadCupti(gCupti, error)) {
    writeError(error);
    return false;
  }
  if (CUptiResult r = gCupti.getVersion(&gCuptiVersion); r != CUPTI_SUCCESS) {
    writeError("cuptiGetVersion failed: " + gCupti.describe(r));
    return false;
  }
  if (gCuptiVersion < CUPTI_API_VERSION) { // an older library fills older, shorter kernel records
    writeError(gCupti.path + " is CUPTI API version " + std::to_string(gCuptiVersion) +
               ", older than the " + std::to_string(CUPTI_API_VERSION) +
               " libciq-kernel-trace was built with; use the CUPTI of the CUDA toolkit ciq was built with, or newer");
    return false;
  }
  if (CUptiResult r = gCupti.activityRegisterCallbacks(bufferRequested, bufferCompleted); r != CUPTI_SUCCESS) {
    writeError("cuptiActivityRegisterCallbacks failed: " + gCupti.describe(r) + subscriberHint(r));
    return false;
  }
  if (CUptiResult r = gCupti.activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r != CUPTI_SUCCESS) {
    writeError("cuptiActivityEnable(CONCURRENT_KERNEL) failed: " + gCupti.describe(r) + subscriberHint(r));
    return false;
  }
  return true;
}

} // namespace
} // namespace ciq::trace

// Called by the CUDA driver once, in cuInit. Returns 1 (success) in every
// case: a failed trace must not fail the program's CUDA initialization.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace ciq::trace;
  static std::atomic<bool> once{false};
  const char *prefix = std::getenv(ciq::env::KernelTrace);
  if (!prefix || !*prefix || once.exchange(true))
    return 1;
  gPath = traceFileFor(prefix, (long)getpid());
  // Replaced at exit; left as it is when the process ends without exit
  // handlers (_exit, a signal), so the engine can say so.
  gTable.write(gPath, "incomplete", "the process ended before its exit handlers ran (it called _exit, crashed or "
               "was killed), so its kernel records were never flushed", "", 0);
  pthread_atfork(nullptr, nullptr, onFork);
  if (!startTracing())
    return 1;
  gTracing = true;
  std::atexit(onExit);
  return 1;
}
