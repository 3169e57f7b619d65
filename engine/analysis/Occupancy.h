// Theoretical occupancy of a kernel on one GPU architecture, from what ptxas
// reports (registers per thread, static shared memory, barriers) and the
// launch (threads per block, dynamic shared memory).
//
// The calculation is NVIDIA's own: cuda_occupancy.h from the CUDA toolkit
// (the header behind the CUDA Occupancy Calculator). ciq only supplies the
// per-architecture device limits below, which the header takes from
// cudaDeviceProp on a live GPU.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// Per-SM limits of one compute capability (CUDA Programming Guide, "Technical
// Specifications per Compute Capability"). Shared memory in bytes.
struct ArchLimits {
  std::string arch;            // "sm_90"
  int major = 0, minor = 0;
  int maxThreadsPerSM = 0;     // max resident warps x 32
  int maxBlocksPerSM = 0;      // informative; cuda_occupancy.h has its own table
  int registersPerSM = 65536;  // 32-bit registers
  int registersPerBlock = 65536;
  int registerAllocUnit = 256; // registers, allocated per warp
  long sharedPerSM = 0;        // largest shared-memory carveout, bytes
  long sharedPerBlockOptin = 0;
  long reservedSharedPerBlock = 0;   // bytes the driver reserves per block (sm_80+)
};

// "sm_90", "sm_90a", "compute_90", "90" -> limits; nullopt for an architecture
// outside sm_70..sm_121.
std::optional<ArchLimits> archLimits(const std::string &arch);

struct OccupancyInput {
  int registersPerThread = 0;
  long staticSharedBytes = 0;
  long dynamicSharedBytes = 0;
  int threadsPerBlock = 256;
  int barriers = 0;            // named barriers ptxas reports (0: not limiting)
};

struct OccupancyResult {
  int activeBlocksPerSM = 0;
  int activeWarpsPerSM = 0;
  int maxWarpsPerSM = 0;
  double occupancyPercent = 0;   // active warps / max warps x 100
  // Blocks per SM each resource allows; the smallest is the limiter.
  int limitRegisters = 0, limitSharedMemory = 0, limitWarps = 0, limitBlocks = 0,
      limitBarriers = 0;
  std::string limitedBy;         // "registers", "shared memory", "warps", "blocks", "barriers"
  long allocatedRegistersPerBlock = 0;
  long allocatedSharedPerBlock = 0;   // bytes, with the driver's reservation and granularity
};

// nullopt with `error` when the input cannot launch (e.g. block too large).
std::optional<OccupancyResult> computeOccupancy(const ArchLimits &limits, const OccupancyInput &in,
                                                std::string &error);

} // namespace ciq
