#include "trace/CuptiLoader.h"

#include "common/EnvNames.h"

#include <cstdlib>
#include <dlfcn.h>
#include <vector>

#ifndef CIQ_CUPTI_SONAME
#define CIQ_CUPTI_SONAME "libcupti.so"
#endif
#ifndef CIQ_CUPTI_BUILD_DIR
#define CIQ_CUPTI_BUILD_DIR ""
#endif

namespace ciq::trace {
namespace {

std::string thisLibraryDir() {
  Dl_info info{};
  if (!dladdr((void *)&thisLibraryDir, &info) || !info.dli_fname)
    return "";
  std::string p = info.dli_fname;
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char *e = std::getenv(env::CuptiLibrary); e && *e)
    out.push_back(e);
  if (std::string d = thisLibraryDir(); !d.empty())
    out.push_back(d + "/" CIQ_CUPTI_SONAME);
  if (std::string d = CIQ_CUPTI_BUILD_DIR; !d.empty())
    out.push_back(d + "/" CIQ_CUPTI_SONAME);
  out.push_back(CIQ_CUPTI_SONAME); // no slash: the loader's own search
  out.push_back("/usr/local/cuda/extras/CUPTI/lib64/" CIQ_CUPTI_SONAME);
  return out;
}

template <typename F> bool bind(void *h, const char *name, F &f, std::string &missing) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (!f)
    missing += std::string(missing.empty() ? "" : ", ") + name;
  return f != nullptr;
}

} // namespace

std::string Cupti::describe(CUptiResult r) const {
  const char *s = nullptr;
  if (getResultString && getResultString(r, &s) == CUPTI_SUCCESS && s)
    return s;
  return "CUPTI error " + std::to_string((int)r);
}

bool loadCupti(Cupti &c, std::string &error) {
  std::string tried, lastError;
  for (const std::string &path : candidates()) {
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    tried += (tried.empty() ? "" : ", ") + path;
    if (!h) {
      const char *e = dlerror();
      lastError = e ? e : "not found";
      continue;
    }
    std::string missing;
    bind(h, "cuptiGetVersion", c.getVersion, missing);
    bind(h, "cuptiGetResultString", c.getResultString, missing);
    bind(h, "cuptiActivityEnable", c.activityEnable, missing);
    bind(h, "cuptiActivityRegisterCallbacks", c.activityRegisterCallbacks, missing);
    bind(h, "cuptiActivityFlushAll", c.activityFlushAll, missing);
    bind(h, "cuptiActivityGetNextRecord", c.activityGetNextRecord, missing);
    bind(h, "cuptiActivityGetNumDroppedRecords", c.activityGetNumDroppedRecords, missing);
    if (!missing.empty()) {
      error = path + " is not a usable CUPTI: it lacks " + missing;
      dlclose(h);
      return false;
    }
    c.path = path;
    return true;
  }
  error = "CUPTI (" CIQ_CUPTI_SONAME ") not found: tried " + tried + " (last: " + lastError +
          "); put libcupti beside libciq-kernel-trace.so or set CIQ_CUPTI_LIBRARY";
  return false;
}

} // namespace ciq::trace
