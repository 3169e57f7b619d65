// NVIDIA's CUPTI, opened at run time rather than linked: a benchmark whose
// CUPTI is missing or of another major version must still load this library
// and run (the injection then writes why it traced nothing), where a link-time
// dependency would make CUDA refuse the injection, or the program.
#pragma once
#include <cupti_activity.h>
#include <cupti_version.h>

#include <string>

namespace ciq::trace {

struct Cupti {
  CUptiResult (*getVersion)(uint32_t *) = nullptr;
  CUptiResult (*getResultString)(CUptiResult, const char **) = nullptr;
  CUptiResult (*activityEnable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*activityFlushAll)(uint32_t) = nullptr;
  CUptiResult (*activityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **) = nullptr;
  CUptiResult (*activityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *) = nullptr;
  std::string path; // the file opened

  // "CUPTI_ERROR_...: text" for r, also when CUPTI cannot name it.
  std::string describe(CUptiResult r) const;
};

// Opens libcupti from, in order: $CIQ_CUPTI_LIBRARY, the folder of this
// library (a copy bundled beside it), the folder CUPTI was found in at build
// time, the loader's search path (LD_LIBRARY_PATH, a libcupti the program
// already loaded) and /usr/local/cuda/extras/CUPTI/lib64. False with one line
// naming every place tried and the loader's last error.
bool loadCupti(Cupti &c, std::string &error);

} // namespace ciq::trace
