#include "common/Protocol.h"

#include <llvm/Support/ConvertUTF.h>
#include <openssl/evp.h>

namespace ciq {
using nlohmann::json;

// Reads fields into v through JsonFields; why gets the message without a "where".
#define READ(...)                                                                                                   \
  JsonFields f(j, "");                                                                                              \
  f __VA_ARGS__;                                                                                                    \
  if (!f.ok())                                                                                                      \
    why = f.error().substr(2);                                                                                      \
  return f.ok();

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

// Byte fields arrive as strings or {"base64": ...}: decode them in place (a
// json string holds any bytes) so the typed readers below see plain strings.
bool decodeBytes(json &j, std::initializer_list<const char *> keys, std::string &why) {
  if (!j.is_object())
    return true; // the typed reader says what was expected
  for (const char *k : keys) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null())
      continue;
    try {
      if (it->is_array())
        for (auto &e : *it)
          e = bytesFromJson(e);
      else
        *it = bytesFromJson(*it);
    } catch (const json::exception &e) {
      why = std::string("\"") + k + "\": " + e.what();
      return false;
    }
  }
  return true;
}

} // namespace

void to_json(json &j, const CompileRequest &v) {
  j = json{{"compiler", v.compiler}, {"mode", v.mode}, {"cwd", bytesToJson(v.cwd)},
           {"source", bytesToJson(v.source)}, {"output", bytesToJson(v.output)},
           {"argv", bytesListToJson(v.argv)}, {"pid", v.pid}, {"engine_token", v.engineToken}};
}
bool readJson(const json &in, CompileRequest &v, std::string &why) {
  json j = in;
  if (!decodeBytes(j, {"cwd", "source", "output", "argv"}, why))
    return false;
  READ(.opt("compiler", v.compiler).opt("mode", v.mode).opt("cwd", v.cwd).opt("source", v.source)
           .opt("output", v.output).opt("argv", v.argv).opt("pid", v.pid).opt("engine_token", v.engineToken))
}

void to_json(json &j, const AcfRef &v) {
  j = json{{"stage", v.stage}, {"path", bytesToJson(v.path)}, {"sha256", v.sha256}};
}
bool readJson(const json &in, AcfRef &v, std::string &why) {
  json j = in;
  if (!decodeBytes(j, {"path"}, why))
    return false;
  READ(.opt("stage", v.stage).opt("path", v.path).opt("sha256", v.sha256))
}

void to_json(json &j, const CandidateMessage &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"ptxas_options", bytesListToJson(v.ptxasOptions)}, {"nvcc_options", bytesListToJson(v.nvccOptions)},
           {"defines", bytesListToJson(v.defines)}, {"acfs", v.acfs},
           {"compile_timeout_s", v.compileTimeoutSeconds},
           {"strip_args", bytesListToJson(v.stripArgs)}, {"narrow_to", v.narrowTo},
           {"need_object", v.needObject}, {"engine_token", v.engineToken}};
  if (!v.kernelDirectives.empty())
    j["kernel_directives"] = v.kernelDirectives;
  if (!v.unitOptions.empty())
    j["unit_options"] = v.unitOptions;
}
bool readJson(const json &in, CandidateMessage &v, std::string &why) {
  json j = in;
  if (!decodeBytes(j, {"ptxas_options", "nvcc_options", "defines", "strip_args"}, why))
    return false;
  READ(.opt("candidate_id", v.candidateId).opt("candidate_hash", v.candidateHash)
           .opt("ptxas_options", v.ptxasOptions).opt("nvcc_options", v.nvccOptions).opt("defines", v.defines)
           .opt("acfs", v.acfs).opt("compile_timeout_s", v.compileTimeoutSeconds)
           .opt("strip_args", v.stripArgs).opt("narrow_to", v.narrowTo).opt("need_object", v.needObject)
           .opt("engine_token", v.engineToken).opt("kernel_directives", v.kernelDirectives)
           .opt("unit_options", v.unitOptions))
}

void to_json(json &j, const KernelStats &v) {
  j = json{{"name", v.name}, {"demangled", v.demangled}, {"arch", v.arch},
           {"registers", v.registers}, {"barriers", v.barriers},
           {"spill_stores", v.spillStores}, {"spill_loads", v.spillLoads},
           {"stack_frame", v.stackFrame}, {"shared_bytes", v.sharedBytes},
           {"constant_bytes", v.constantBytes}, {"compile_ms", v.compileMs}, {"entry", v.entry},
           {"frame_known", v.frameKnown}, {"usage_known", v.usageKnown},
           {"cap_applied", v.capApplied}, {"cap_override", v.capOverride}};
  if (v.ptxKnown)
    j["ptx"] = json{{"max_threads", v.ptxMaxThreads}, {"min_blocks", v.ptxMinBlocks}, {"maxnreg", v.ptxMaxnreg},
                    {"setmaxnreg", v.ptxSetmaxnreg}, {"dynamic_shared", v.ptxDynamicShared}};
  if (v.relocatable)
    j["relocatable"] = true;
  if (v.deviceDebug)
    j["device_debug"] = true;
  if (!v.splitProblem.empty())
    j["split_problem"] = v.splitProblem;
}
static bool readKernelFields(const json &j, KernelStats &v, std::string &why) {
  // Journals written before these fields: every recorded kernel was an entry
  // whose report was read.
  v.entry = v.frameKnown = v.usageKnown = true;
  READ(.opt("name", v.name).opt("demangled", v.demangled).opt("arch", v.arch).opt("registers", v.registers)
           .opt("barriers", v.barriers).opt("spill_stores", v.spillStores).opt("spill_loads", v.spillLoads)
           .opt("stack_frame", v.stackFrame).opt("shared_bytes", v.sharedBytes)
           .opt("constant_bytes", v.constantBytes).opt("compile_ms", v.compileMs)
           .opt("entry", v.entry).opt("frame_known", v.frameKnown).opt("usage_known", v.usageKnown)
           .opt("cap_applied", v.capApplied).opt("cap_override", v.capOverride).opt("relocatable", v.relocatable)
           .opt("device_debug", v.deviceDebug).opt("split_problem", v.splitProblem))
}

// KernelStats with its "ptx" member: the entry's directives, when read.
static bool readKernelPtx(const json &j, KernelStats &v, std::string &why) {
  auto it = j.find("ptx");
  if (it == j.end() || it->is_null())
    return true;
  v.ptxKnown = true;
  JsonFields f(*it, "");
  f.opt("max_threads", v.ptxMaxThreads).opt("min_blocks", v.ptxMinBlocks).opt("maxnreg", v.ptxMaxnreg)
      .opt("setmaxnreg", v.ptxSetmaxnreg).opt("dynamic_shared", v.ptxDynamicShared);
  if (!f.ok())
    why = "\"ptx\"" + f.error().substr(1);
  return f.ok();
}

bool readJson(const json &j, KernelStats &v, std::string &why) {
  return readKernelFields(j, v, why) && readKernelPtx(j, v, why);
}

void to_json(json &j, const Receipt &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"source", bytesToJson(v.source)}, {"output", bytesToJson(v.output)}, {"exit_status", v.exitStatus},
           {"status", v.status}, {"reason", bytesToJson(v.reason)}, {"wall_ms", v.wallMs}, {"ptxas_ran", v.ptxasRan},
           {"kernels", v.kernels}, {"device_code_sha256", v.deviceCodeSha256},
           {"device_code_bytes", v.deviceCodeBytes},
           {"final_argv", bytesListToJson(v.finalArgv)}, {"overridden_user_options", bytesListToJson(v.overriddenUserOptions)},
           {"skipped_controls", bytesListToJson(v.skippedControls)}, {"crash_signal", v.crashSignal},
           {"crashed_tool", v.crashedTool}, {"cap_overrides_unattributed", v.capOverridesUnattributed},
           {"ptx_reuse", v.ptxReuse}, {"engine_token", v.engineToken}};
  if (!v.directives.empty())
    j["directives"] = v.directives;
  if (v.cached)
    j["cached"] = true;
  if (v.ioErrno != 0) {
    j["io_errno"] = v.ioErrno;
    j["io_path"] = bytesToJson(v.ioPath);
  }
}
bool readJson(const json &in, Receipt &v, std::string &why) {
  json j = in;
  if (!decodeBytes(j, {"source", "output", "reason", "final_argv", "overridden_user_options",
                       "skipped_controls", "io_path"}, why))
    return false;
  READ(.opt("candidate_id", v.candidateId).opt("candidate_hash", v.candidateHash).opt("source", v.source)
           .opt("output", v.output).opt("exit_status", v.exitStatus).opt("status", v.status).opt("reason", v.reason)
           .opt("wall_ms", v.wallMs).opt("ptxas_ran", v.ptxasRan).opt("kernels", v.kernels)
           .opt("device_code_sha256", v.deviceCodeSha256).opt("device_code_bytes", v.deviceCodeBytes)
           .opt("final_argv", v.finalArgv)
           .opt("overridden_user_options", v.overriddenUserOptions).opt("skipped_controls", v.skippedControls)
           .opt("crash_signal", v.crashSignal).opt("crashed_tool", v.crashedTool)
           .opt("cap_overrides_unattributed", v.capOverridesUnattributed).opt("ptx_reuse", v.ptxReuse)
           .opt("engine_token", v.engineToken).opt("io_errno", v.ioErrno).opt("io_path", v.ioPath)
           .opt("directives", v.directives).opt("cached", v.cached))
}
#undef READ

json makeMessage(const std::string &op, const json &payload) {
  json m = payload.is_object() ? payload : json::object();
  m["v"] = kProtocolVersion;
  m["op"] = op;
  return m;
}

} // namespace ciq
