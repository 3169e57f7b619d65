#include "engine/measure/KernelTrace.h"
#include "common/FileIO.h"
#include "common/JsonRead.h"

#include <algorithm>
#include <cctype>
#include <llvm/Demangle/Demangle.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <map>
#include <regex>

namespace ciq {
namespace {

// <base>.<digits>.json: a process's trace, not the .tmp it writes first.
bool isTraceOf(llvm::StringRef name, llvm::StringRef base) {
  if (!name.consume_front(base) || !name.consume_front(".") || !name.consume_back(".json") || name.empty())
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit((unsigned char)c); });
}

bool readTriple(const nlohmann::json &k, const char *key, int out[3]) {
  auto it = k.find(key);
  if (it == k.end())
    return true;
  std::vector<int> v;
  std::string why;
  if (!readJson(*it, v, why) || v.size() != 3)
    return false;
  std::copy(v.begin(), v.end(), out);
  return true;
}

bool readKernel(const nlohmann::json &k, const std::string &where, KernelTime &t, std::string &error) {
  unsigned long long launches = 0, total = 0, minNs = 0, maxNs = 0;
  JsonFields f(k, where);
  f.need("name", t.mangled).need("launches", launches).need("total_ns", total).opt("min_ns", minNs).opt("max_ns", maxNs);
  f.opt("registers", t.registers).opt("static_shared_bytes", t.staticSharedBytes);
  f.opt("dynamic_shared_bytes", t.dynamicSharedBytes);
  if (!f.ok()) {
    error = f.error();
    return false;
  }
  if (!readTriple(k, "grid", t.grid) || !readTriple(k, "block", t.block)) {
    error = where + ": grid and block must be arrays of three integers";
    return false;
  }
  t.launches = launches;
  t.gpuMs = total / 1e6;
  t.minMs = minNs / 1e6;
  t.maxMs = maxNs / 1e6;
  t.demangled = demangleKernel(t.mangled);
  return true;
}

// The document's own verdict on itself: "" when its kernels can be counted.
std::string statusProblem(const std::string &status, const std::string &err, unsigned long long dropped, long pid) {
  std::string proc = "process " + std::to_string(pid);
  if (status == "incomplete")
    return proc + ": " + (err.empty() ? "its trace is incomplete" : err);
  if (status == "error")
    return proc + ": kernel tracing failed: " + (err.empty() ? "no reason given" : err);
  if (status != "ok")
    return proc + ": unknown trace status '" + status + "'";
  if (dropped > 0)
    return proc + ": CUPTI dropped " + std::to_string(dropped) +
           " kernel records (its buffers were full), so the kernel times would be too low";
  return "";
}

} // namespace

void mergeKernelTimes(KernelTimes &into, const KernelTimes &from) {
  for (const KernelTime &k : from) {
    auto it = std::find_if(into.begin(), into.end(), [&](const KernelTime &o) { return o.mangled == k.mangled; });
    if (it == into.end()) {
      into.push_back(k);
      continue;
    }
    it->minMs = it->launches && k.launches ? std::min(it->minMs, k.minMs) : std::max(it->minMs, k.minMs);
    it->maxMs = std::max(it->maxMs, k.maxMs);
    it->launches += k.launches;
    it->gpuMs += k.gpuMs;
  }
}

namespace {
void merge(KernelTimes &into, const KernelTimes &from) { mergeKernelTimes(into, from); }
} // namespace

std::string demangleKernel(const std::string &mangled) {
  if (mangled.rfind("_Z", 0) != 0)
    return mangled;
  return llvm::demangle(mangled);
}

std::optional<KernelTrace> parseKernelTrace(const std::string &text, const std::string &where, std::string &error) {
  nlohmann::json doc;
  if (!parseJson(text, where, doc, error))
    return std::nullopt;
  std::string format, status, err;
  long pid = 0;
  unsigned long long dropped = 0;
  nlohmann::json kernels = nlohmann::json::array();
  JsonFields f(doc, where);
  f.need("format", format).need("status", status).opt("error", err).opt("pid", pid).opt("dropped_records", dropped);
  f.opt("kernels", kernels);
  if (!f.ok() || format != "ciq-kernel-trace") {
    error = f.ok() ? where + ": not a ciq kernel trace (format '" + format + "')" : f.error();
    return std::nullopt;
  }
  if (std::string p = statusProblem(status, err, dropped, pid); !p.empty()) {
    error = where + ": " + p;
    return std::nullopt;
  }
  KernelTrace t;
  t.processes = 1;
  if (!kernels.is_array()) {
    error = where + ": \"kernels\": expected an array, found " + jsonKind(kernels);
    return std::nullopt;
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    KernelTime k;
    if (!readKernel(kernels[i], where + ": kernels[" + std::to_string(i) + "]", k, error))
      return std::nullopt;
    merge(t.kernels, {k});
  }
  return t;
}

std::vector<std::string> kernelTraceFiles(const std::string &prefix) {
  std::vector<std::string> out;
  llvm::StringRef dir = llvm::sys::path::parent_path(prefix), base = llvm::sys::path::filename(prefix);
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; it != end && !ec; it.increment(ec))
    if (isTraceOf(llvm::sys::path::filename(it->path()), base))
      out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

bool removeKernelTraces(const std::string &prefix, std::string &error) {
  for (const std::string &f : kernelTraceFiles(prefix))
    if (auto ec = llvm::sys::fs::remove(f)) {
      error = "cannot remove the earlier kernel trace " + f + ": " + ec.message();
      return false;
    }
  return true;
}

// A trace holds one record per kernel name and launch shape: far below this.
constexpr size_t kMaxTraceBytes = 64u << 20;

std::optional<KernelTrace> readKernelTrace(const std::string &prefix, std::string &error) {
  std::vector<std::string> files = kernelTraceFiles(prefix);
  if (files.empty()) {
    error = "no kernel times: the benchmark launched no kernel or the injection did not load (no process of the run "
            "wrote " + prefix + ".<pid>.json: none initialized CUDA, or CUDA_INJECTION64_PATH was replaced, as a "
            "profiler such as nsys or ncu does)";
    return std::nullopt;
  }
  KernelTrace all;
  for (const std::string &file : files) {
    // The run dir is the user's own, but the benchmark writes here: a FIFO
    // or a link to /dev/zero in a trace's place must not stall the engine.
    std::string why;
    auto text = readRegularFile(file, kMaxTraceBytes, why);
    if (!text) {
      error = "no kernel times: " + why;
      return std::nullopt;
    }
    auto one = parseKernelTrace(*text, file, error);
    if (!one) {
      error = "no kernel times: " + error;
      return std::nullopt;
    }
    merge(all.kernels, one->kernels);
    all.processes += one->processes;
  }
  if (all.kernels.empty()) {
    error = "no kernel times: the benchmark launched no kernel (" + std::to_string(all.processes) +
            " process(es) initialized CUDA and traced none)";
    return std::nullopt;
  }
  std::stable_sort(all.kernels.begin(), all.kernels.end(),
                   [](const KernelTime &a, const KernelTime &b) { return a.gpuMs > b.gpuMs; });
  return all;
}

std::optional<double> kernelTimeMs(const KernelTimes &kernels, const std::string &pattern, std::string &error) {
  std::regex re;
  try {
    re = std::regex(pattern.empty() ? "." : pattern, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    error = "benchmark.kernels '" + pattern + "' is not a regular expression: " + e.what();
    return std::nullopt;
  }
  double sum = 0;
  bool any = false;
  std::string launched;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelTime &k = kernels[i];
    if (i < 8)
      launched += (launched.empty() ? "" : ", ") + k.demangled;
    else if (i == 8)
      launched += ", and " + std::to_string(kernels.size() - 8) + " more";
    if (pattern.empty() || std::regex_search(k.mangled, re) || std::regex_search(k.demangled, re)) {
      sum += k.gpuMs;
      any = true;
    }
  }
  if (!any) {
    error = "no kernel times: no launched kernel matches benchmark.kernels '" + pattern + "' (launched: " +
            (launched.empty() ? "none" : launched) + ")";
    return std::nullopt;
  }
  return sum;
}

} // namespace ciq
