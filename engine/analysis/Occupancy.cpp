#include "engine/analysis/Occupancy.h"

#include <climits>
#include <cuda_occupancy.h>
#include <llvm/ADT/StringRef.h>

namespace ciq {

namespace {
constexpr long KiB = 1024;

// Max resident threads, blocks per SM; largest shared carveout; opt-in per
// block; driver reservation per block.
const std::vector<ArchLimits> &table() {
  static const std::vector<ArchLimits> t = {
      {"sm_70", 7, 0, 2048, 32, 65536, 65536, 256, 96 * KiB, 96 * KiB, 0},
      {"sm_72", 7, 2, 2048, 32, 65536, 65536, 256, 96 * KiB, 96 * KiB, 0},
      {"sm_75", 7, 5, 1024, 16, 65536, 65536, 256, 64 * KiB, 64 * KiB, 0},
      {"sm_80", 8, 0, 2048, 32, 65536, 65536, 256, 164 * KiB, 163 * KiB, 1 * KiB},
      {"sm_86", 8, 6, 1536, 16, 65536, 65536, 256, 100 * KiB, 99 * KiB, 1 * KiB},
      {"sm_87", 8, 7, 1536, 16, 65536, 65536, 256, 164 * KiB, 163 * KiB, 1 * KiB},
      {"sm_89", 8, 9, 1536, 24, 65536, 65536, 256, 100 * KiB, 99 * KiB, 1 * KiB},
      {"sm_90", 9, 0, 2048, 32, 65536, 65536, 256, 228 * KiB, 227 * KiB, 1 * KiB},
      {"sm_100", 10, 0, 2048, 32, 65536, 65536, 256, 228 * KiB, 227 * KiB, 1 * KiB},
      {"sm_103", 10, 3, 2048, 32, 65536, 65536, 256, 228 * KiB, 227 * KiB, 1 * KiB},
      {"sm_110", 11, 0, 1536, 24, 65536, 65536, 256, 228 * KiB, 227 * KiB, 1 * KiB},
      {"sm_120", 12, 0, 1536, 24, 65536, 65536, 256, 100 * KiB, 99 * KiB, 1 * KiB},
      {"sm_121", 12, 1, 1536, 24, 65536, 65536, 256, 100 * KiB, 99 * KiB, 1 * KiB},
  };
  return t;
}
} // namespace

std::optional<ArchLimits> archLimits(const std::string &archIn) {
  llvm::StringRef a(archIn);
  a.consume_front("sm_") || a.consume_front("compute_") || a.consume_front("lto_");
  // Feature suffixes (sm_90a, sm_100f) run on the same hardware limits.
  a = a.take_while([](char c) { return c >= '0' && c <= '9'; });
  for (const auto &l : table())
    if (llvm::StringRef(l.arch).drop_front(3) == a)
      return l;
  return std::nullopt;
}

std::optional<OccupancyResult> computeOccupancy(const ArchLimits &limits, const OccupancyInput &in,
                                                std::string &error) {
  cudaOccDeviceProp prop;
  prop.computeMajor = limits.major;
  prop.computeMinor = limits.minor;
  prop.maxThreadsPerBlock = 1024;
  prop.maxThreadsPerMultiprocessor = limits.maxThreadsPerSM;
  prop.regsPerBlock = limits.registersPerBlock;
  prop.regsPerMultiprocessor = limits.registersPerSM;
  prop.warpSize = 32;
  prop.sharedMemPerBlock = 48 * KiB;
  prop.sharedMemPerMultiprocessor = size_t(limits.sharedPerSM);
  prop.numSms = 1;
  prop.sharedMemPerBlockOptin = size_t(limits.sharedPerBlockOptin);
  prop.reservedSharedMemPerBlock = size_t(limits.reservedSharedPerBlock);

  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = INT_MAX;
  attr.numRegs = in.registersPerThread;
  attr.sharedSizeBytes = size_t(in.staticSharedBytes);
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  // The kernel opted in to the large dynamic shared memory it is given
  // (cudaFuncSetAttribute), as a launch with that much would have to.
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attr.maxDynamicSharedSizeBytes = size_t(in.dynamicSharedBytes);
  attr.numBlockBarriers = in.barriers;
  attr.virtualResourceCount = 0;

  cudaOccDeviceState state;   // default carveout: the largest shared memory
  cudaOccResult res{};
  cudaOccError st = cudaOccMaxActiveBlocksPerMultiprocessor(
      &res, &prop, &attr, &state, in.threadsPerBlock, size_t(in.dynamicSharedBytes));
  if (st != CUDA_OCC_SUCCESS) {
    error = st == CUDA_OCC_ERROR_UNKNOWN_DEVICE
                ? "cuda_occupancy.h of this CUDA toolkit does not know " + limits.arch
                : "invalid occupancy input for " + limits.arch + " (" +
                      std::to_string(in.threadsPerBlock) + " threads per block, " +
                      std::to_string(in.registersPerThread) + " registers per thread)";
    return std::nullopt;
  }
  OccupancyResult r;
  r.activeBlocksPerSM = res.activeBlocksPerMultiprocessor;
  int warpsPerBlock = (in.threadsPerBlock + 31) / 32;
  r.activeWarpsPerSM = r.activeBlocksPerSM * warpsPerBlock;
  r.maxWarpsPerSM = limits.maxThreadsPerSM / 32;
  r.occupancyPercent = 100.0 * r.activeWarpsPerSM / r.maxWarpsPerSM;
  r.limitRegisters = res.blockLimitRegs;
  r.limitSharedMemory = res.blockLimitSharedMem;
  r.limitWarps = res.blockLimitWarps;
  r.limitBlocks = res.blockLimitBlocks;
  r.limitBarriers = res.blockLimitBarriers;
  r.allocatedRegistersPerBlock = res.allocatedRegistersPerBlock;
  r.allocatedSharedPerBlock = long(res.allocatedSharedMemPerBlock);
  std::vector<std::string> why;
  if (res.limitingFactors & OCC_LIMIT_REGISTERS) why.push_back("registers");
  if (res.limitingFactors & OCC_LIMIT_SHARED_MEMORY) why.push_back("shared memory");
  if (res.limitingFactors & OCC_LIMIT_WARPS) why.push_back("warps");
  if (res.limitingFactors & OCC_LIMIT_BLOCKS) why.push_back("blocks");
  if (res.limitingFactors & OCC_LIMIT_BARRIERS) why.push_back("barriers");
  for (size_t i = 0; i < why.size(); ++i)
    r.limitedBy += (i ? ", " : "") + why[i];
  if (r.activeBlocksPerSM == 0 && error.empty())
    error = "the block does not fit on an SM of " + limits.arch + " (limited by " +
            r.limitedBy + ")";
  return r;
}

} // namespace ciq
