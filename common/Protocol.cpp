#include "Protocol.h"

#include <llvm/Support/ConvertUTF.h>
#include <openssl/evp.h>

namespace ciq {
using nlohmann::json;

// Paths and arguments are bytes, JSON strings are UTF-8: a value that is not
// valid UTF-8 (a Latin-1 file name) travels as {"base64": "..."} so that it
// arrives byte for byte instead of making the JSON writer throw.
json bytesToJson(const std::string &bytes) {
  auto *p = reinterpret_cast<const llvm::UTF8 *>(bytes.data());
  if (llvm::isLegalUTF8String(&p, p + bytes.size()))
    return bytes;
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                          reinterpret_cast<const unsigned char *>(bytes.data()), (int)bytes.size());
  out.resize(n < 0 ? 0 : n);
  return json{{"base64", out}};
}

std::string bytesFromJson(const json &j) {
  if (j.is_string())
    return j.get<std::string>();
  if (!j.is_object() || !j.contains("base64") || !j["base64"].is_string())
    throw json::type_error::create(302, "expected a string or {\"base64\": ...} for a byte string", &j);
  const std::string &b64 = j["base64"].get_ref<const std::string &>();
  std::string out(3 * (b64.size() / 4), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                          reinterpret_cast<const unsigned char *>(b64.data()), (int)b64.size());
  if (n < 0 || b64.size() % 4)
    throw json::type_error::create(302, "invalid base64 in a byte string", &j);
  // EVP_DecodeBlock counts the '=' padding as zero bytes.
  size_t pad = b64.size() >= 2 && b64[b64.size() - 2] == '=' ? 2 : !b64.empty() && b64.back() == '=' ? 1 : 0;
  out.resize(n - pad);
  return out;
}

namespace {

json bytesListToJson(const std::vector<std::string> &list) {
  json a = json::array();
  for (const auto &s : list)
    a.push_back(bytesToJson(s));
  return a;
}

void getBytes(const json &j, const char *key, std::string &out) {
  auto it = j.find(key);
  out = it == j.end() || it->is_null() ? std::string() : bytesFromJson(*it);
}

void getBytes(const json &j, const char *key, std::vector<std::string> &out) {
  out.clear();
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    return;
  if (!it->is_array())
    throw json::type_error::create(302, std::string("expected a list for '") + key + "'", &*it);
  for (const auto &e : *it)
    out.push_back(bytesFromJson(e));
}

} // namespace

// value() with a default keeps older or newer peers readable: unknown keys are
// ignored, missing ones take their defaults.
#define GET(field, key) v.field = j.value(key, decltype(v.field){})

void to_json(json &j, const CompileRequest &v) {
  j = json{{"compiler", v.compiler}, {"mode", v.mode}, {"cwd", bytesToJson(v.cwd)},
           {"source", bytesToJson(v.source)}, {"output", bytesToJson(v.output)},
           {"argv", bytesListToJson(v.argv)}, {"pid", v.pid}};
}
void from_json(const json &j, CompileRequest &v) {
  GET(compiler, "compiler"); GET(mode, "mode"); getBytes(j, "cwd", v.cwd); getBytes(j, "source", v.source);
  getBytes(j, "output", v.output); getBytes(j, "argv", v.argv); GET(pid, "pid");
}

void to_json(json &j, const AcfRef &v) {
  j = json{{"stage", v.stage}, {"path", bytesToJson(v.path)}, {"sha256", v.sha256}};
}
void from_json(const json &j, AcfRef &v) {
  GET(stage, "stage"); getBytes(j, "path", v.path); GET(sha256, "sha256");
}

void to_json(json &j, const CandidateMessage &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"ptxas_options", bytesListToJson(v.ptxasOptions)}, {"nvcc_options", bytesListToJson(v.nvccOptions)},
           {"defines", bytesListToJson(v.defines)}, {"acfs", v.acfs},
           {"compile_timeout_s", v.compileTimeoutSeconds}, {"want_stats", v.wantStats},
           {"strip_args", bytesListToJson(v.stripArgs)}, {"narrow_to", v.narrowTo}};
}
void from_json(const json &j, CandidateMessage &v) {
  GET(candidateId, "candidate_id"); GET(candidateHash, "candidate_hash");
  getBytes(j, "ptxas_options", v.ptxasOptions); getBytes(j, "nvcc_options", v.nvccOptions);
  getBytes(j, "defines", v.defines);
  GET(acfs, "acfs"); GET(compileTimeoutSeconds, "compile_timeout_s");
  v.wantStats = j.value("want_stats", true);
  getBytes(j, "strip_args", v.stripArgs);
  GET(narrowTo, "narrow_to");
}

void to_json(json &j, const KernelStats &v) {
  j = json{{"name", v.name}, {"demangled", v.demangled}, {"arch", v.arch},
           {"registers", v.registers}, {"barriers", v.barriers},
           {"spill_stores", v.spillStores}, {"spill_loads", v.spillLoads},
           {"stack_frame", v.stackFrame}, {"shared_bytes", v.sharedBytes},
           {"constant_bytes", v.constantBytes}, {"compile_ms", v.compileMs},
           {"cap_applied", v.capApplied}, {"cap_override", v.capOverride}};
}
void from_json(const json &j, KernelStats &v) {
  GET(name, "name"); GET(demangled, "demangled"); GET(arch, "arch"); GET(registers, "registers");
  GET(barriers, "barriers"); GET(spillStores, "spill_stores"); GET(spillLoads, "spill_loads");
  GET(stackFrame, "stack_frame"); GET(sharedBytes, "shared_bytes");
  GET(constantBytes, "constant_bytes"); GET(compileMs, "compile_ms");
  GET(capApplied, "cap_applied"); GET(capOverride, "cap_override");
}

void to_json(json &j, const Receipt &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"source", bytesToJson(v.source)}, {"output", bytesToJson(v.output)}, {"exit_status", v.exitStatus},
           {"status", v.status}, {"reason", bytesToJson(v.reason)}, {"wall_ms", v.wallMs}, {"ptxas_ran", v.ptxasRan},
           {"kernels", v.kernels}, {"device_code_sha256", v.deviceCodeSha256},
           {"device_code_bytes", v.deviceCodeBytes}, {"log_path", bytesToJson(v.logPath)},
           {"final_argv", bytesListToJson(v.finalArgv)}, {"overridden_user_options", bytesListToJson(v.overriddenUserOptions)},
           {"skipped_controls", bytesListToJson(v.skippedControls)},
           {"cap_overrides_unattributed", v.capOverridesUnattributed}};
}
void from_json(const json &j, Receipt &v) {
  GET(candidateId, "candidate_id"); GET(candidateHash, "candidate_hash"); getBytes(j, "source", v.source);
  getBytes(j, "output", v.output); GET(exitStatus, "exit_status"); GET(status, "status");
  getBytes(j, "reason", v.reason);
  GET(wallMs, "wall_ms"); GET(ptxasRan, "ptxas_ran"); GET(kernels, "kernels");
  GET(deviceCodeSha256, "device_code_sha256"); GET(deviceCodeBytes, "device_code_bytes");
  getBytes(j, "log_path", v.logPath); getBytes(j, "final_argv", v.finalArgv);
  getBytes(j, "overridden_user_options", v.overriddenUserOptions);
  getBytes(j, "skipped_controls", v.skippedControls);
  GET(capOverridesUnattributed, "cap_overrides_unattributed");
}
#undef GET

json makeMessage(const std::string &op, const json &payload) {
  json m = payload.is_object() ? payload : json::object();
  m["v"] = kProtocolVersion;
  m["op"] = op;
  return m;
}

} // namespace ciq
