#include "engine/compile/ReceiptCheck.h"
#include "common/InvalidReason.h"

#include <cmath>

namespace ciq {

namespace {

bool isSha256Hex(const std::string &s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool plausibleBytes(long v) { return v >= 0 && v <= kAbsurdBytes; }
bool plausibleMs(double v) { return std::isfinite(v) && v >= 0; }

// "" or what is impossible about one kernel's ptxas statistics.
std::string checkKernel(const KernelStats &k) {
  std::string who = "kernel " + (k.name.empty() ? std::string("(unnamed)") : k.name.substr(0, 80)) + ": ";
  if (k.registers < 0 || k.registers > kMaxRegistersPerThread)
    return who + "registers " + std::to_string(k.registers) + " outside 0.." + std::to_string(kMaxRegistersPerThread);
  if (k.barriers < 0 || k.barriers > kMaxBarriers)
    return who + "barriers " + std::to_string(k.barriers) + " outside 0.." + std::to_string(kMaxBarriers);
  for (auto [name, v] : {std::pair<const char *, long>{"spill_stores", k.spillStores}, {"spill_loads", k.spillLoads},
                         {"stack_frame", k.stackFrame}, {"shared_bytes", k.sharedBytes},
                         {"constant_bytes", k.constantBytes}})
    if (!plausibleBytes(v))
      return who + name + " " + std::to_string(v) + " is not a byte count a compiler reports";
  if (!plausibleMs(k.compileMs))
    return who + "compile_ms is negative or not finite";
  return "";
}

// "" or what is impossible about the receipt's own figures.
std::string checkFigures(const Receipt &r) {
  static const std::set<std::string> statuses = {"ok", reason::CompileError, reason::CompilerCrash,
                                                 reason::CompileTimeout};
  if (!statuses.count(r.status))
    return "status '" + r.status.substr(0, 40) + "' is not ok, compile_error, compiler_crash or compile_timeout";
  if (r.ptxReuse != "full" && r.ptxReuse != "kept" && r.ptxReuse != "reused")
    return "ptx_reuse '" + r.ptxReuse.substr(0, 40) + "' is not full, kept or reused";
  if (!plausibleMs(r.wallMs))
    return "wall_ms is negative or not finite";
  if (!plausibleBytes(r.deviceCodeBytes))
    return "device_code_bytes " + std::to_string(r.deviceCodeBytes) + " is not a size an object has";
  if (!r.deviceCodeSha256.empty() && !isSha256Hex(r.deviceCodeSha256))
    return "device_code_sha256 is not a SHA-256";
  if (r.crashSignal < 0 || r.crashSignal > 64 || r.capOverridesUnattributed < 0 || r.ioErrno < 0)
    return "crash_signal, cap_overrides_unattributed or io_errno is negative or out of range";
  for (const auto &k : r.kernels)
    if (std::string bad = checkKernel(k); !bad.empty())
      return bad;
  return "";
}

} // namespace

std::string checkReceipt(const Receipt &r, const std::optional<AnsweredHello> &hello,
                         const std::set<std::string> &tuned, const std::string &token) {
  if (r.engineToken != token)
    return "a receipt without this engine's token";
  if (!hello)
    return "a receipt for " + r.candidateId.substr(0, 40) +
           " on a connection whose hello got no candidate (or that sent its receipt already)";
  if (r.candidateId != hello->candidateId || r.candidateHash != hello->candidateHash)
    return "a receipt for " + r.candidateId.substr(0, 40) + " on the connection that was given " +
           hello->candidateId;
  if (r.output != hello->output)
    return "a receipt for the output " + r.output + ", but the connection's hello named " + hello->output;
  if (hello->mode == "launcher" && !tuned.empty() && !tuned.count(r.output))
    return "a receipt for " + r.output + ", which is no object of the tuned targets";
  if (std::string bad = checkFigures(r); !bad.empty())
    return "a receipt for " + r.output + " with implausible figures: " + bad;
  return "";
}

} // namespace ciq
