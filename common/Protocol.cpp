#include "Protocol.h"

namespace ciq {
using nlohmann::json;

// Reads fields into v through JsonFields; why gets the message without a "where".
#define READ(...)                                                                                                   \
  JsonFields f(j, "");                                                                                              \
  f __VA_ARGS__;                                                                                                    \
  if (!f.ok())                                                                                                      \
    why = f.error().substr(2);                                                                                      \
  return f.ok();

void to_json(json &j, const CompileRequest &v) {
  j = json{{"compiler", v.compiler}, {"mode", v.mode}, {"cwd", v.cwd}, {"source", v.source},
           {"output", v.output}, {"argv", v.argv}, {"pid", v.pid}, {"engine_token", v.engineToken}};
}
bool readJson(const json &j, CompileRequest &v, std::string &why) {
  READ(.opt("compiler", v.compiler).opt("mode", v.mode).opt("cwd", v.cwd).opt("source", v.source)
           .opt("output", v.output).opt("argv", v.argv).opt("pid", v.pid).opt("engine_token", v.engineToken))
}

void to_json(json &j, const AcfRef &v) {
  j = json{{"stage", v.stage}, {"path", v.path}, {"sha256", v.sha256}};
}
bool readJson(const json &j, AcfRef &v, std::string &why) {
  READ(.opt("stage", v.stage).opt("path", v.path).opt("sha256", v.sha256))
}

void to_json(json &j, const CandidateMessage &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"ptxas_options", v.ptxasOptions}, {"nvcc_options", v.nvccOptions},
           {"defines", v.defines}, {"acfs", v.acfs},
           {"compile_timeout_s", v.compileTimeoutSeconds}, {"want_stats", v.wantStats},
           {"strip_args", v.stripArgs}, {"narrow_to", v.narrowTo},
           {"need_object", v.needObject}, {"engine_token", v.engineToken}};
}
bool readJson(const json &j, CandidateMessage &v, std::string &why) {
  READ(.opt("candidate_id", v.candidateId).opt("candidate_hash", v.candidateHash)
           .opt("ptxas_options", v.ptxasOptions).opt("nvcc_options", v.nvccOptions).opt("defines", v.defines)
           .opt("acfs", v.acfs).opt("compile_timeout_s", v.compileTimeoutSeconds).opt("want_stats", v.wantStats)
           .opt("strip_args", v.stripArgs).opt("narrow_to", v.narrowTo).opt("need_object", v.needObject)
           .opt("engine_token", v.engineToken))
}

void to_json(json &j, const KernelStats &v) {
  j = json{{"name", v.name}, {"demangled", v.demangled}, {"arch", v.arch},
           {"registers", v.registers}, {"barriers", v.barriers},
           {"spill_stores", v.spillStores}, {"spill_loads", v.spillLoads},
           {"stack_frame", v.stackFrame}, {"shared_bytes", v.sharedBytes},
           {"constant_bytes", v.constantBytes}, {"compile_ms", v.compileMs}, {"entry", v.entry},
           {"frame_known", v.frameKnown}, {"usage_known", v.usageKnown},
           {"cap_applied", v.capApplied}, {"cap_override", v.capOverride}};
}
bool readJson(const json &j, KernelStats &v, std::string &why) {
  // Journals written before these fields: every recorded kernel was an entry
  // whose report was read.
  v.entry = v.frameKnown = v.usageKnown = true;
  READ(.opt("name", v.name).opt("demangled", v.demangled).opt("arch", v.arch).opt("registers", v.registers)
           .opt("barriers", v.barriers).opt("spill_stores", v.spillStores).opt("spill_loads", v.spillLoads)
           .opt("stack_frame", v.stackFrame).opt("shared_bytes", v.sharedBytes)
           .opt("constant_bytes", v.constantBytes).opt("compile_ms", v.compileMs)
           .opt("entry", v.entry).opt("frame_known", v.frameKnown).opt("usage_known", v.usageKnown)
           .opt("cap_applied", v.capApplied).opt("cap_override", v.capOverride))
}

void to_json(json &j, const Receipt &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"source", v.source}, {"output", v.output}, {"exit_status", v.exitStatus},
           {"status", v.status}, {"wall_ms", v.wallMs}, {"ptxas_ran", v.ptxasRan},
           {"kernels", v.kernels}, {"device_code_sha256", v.deviceCodeSha256},
           {"device_code_bytes", v.deviceCodeBytes}, {"log_path", v.logPath},
           {"final_argv", v.finalArgv}, {"overridden_user_options", v.overriddenUserOptions},
           {"skipped_controls", v.skippedControls}, {"crash_signal", v.crashSignal},
           {"crashed_tool", v.crashedTool}, {"cap_overrides_unattributed", v.capOverridesUnattributed},
           {"ptx_reuse", v.ptxReuse}, {"engine_token", v.engineToken}};
}
bool readJson(const json &j, Receipt &v, std::string &why) {
  READ(.opt("candidate_id", v.candidateId).opt("candidate_hash", v.candidateHash).opt("source", v.source)
           .opt("output", v.output).opt("exit_status", v.exitStatus).opt("status", v.status)
           .opt("wall_ms", v.wallMs).opt("ptxas_ran", v.ptxasRan).opt("kernels", v.kernels)
           .opt("device_code_sha256", v.deviceCodeSha256).opt("device_code_bytes", v.deviceCodeBytes)
           .opt("log_path", v.logPath).opt("final_argv", v.finalArgv)
           .opt("overridden_user_options", v.overriddenUserOptions).opt("skipped_controls", v.skippedControls)
           .opt("crash_signal", v.crashSignal).opt("crashed_tool", v.crashedTool)
           .opt("cap_overrides_unattributed", v.capOverridesUnattributed).opt("ptx_reuse", v.ptxReuse)
           .opt("engine_token", v.engineToken))
}
#undef READ

json makeMessage(const std::string &op, const json &payload) {
  json m = payload.is_object() ? payload : json::object();
  m["v"] = kProtocolVersion;
  m["op"] = op;
  return m;
}

} // namespace ciq
