#include "Protocol.h"

namespace ciq {
using nlohmann::json;

// value() with a default keeps older or newer peers readable: unknown keys are
// ignored, missing ones take their defaults.
#define GET(field, key) v.field = j.value(key, decltype(v.field){})

void to_json(json &j, const CompileRequest &v) {
  j = json{{"compiler", v.compiler}, {"mode", v.mode}, {"cwd", v.cwd}, {"source", v.source},
           {"output", v.output}, {"argv", v.argv}, {"pid", v.pid}};
}
void from_json(const json &j, CompileRequest &v) {
  GET(compiler, "compiler"); GET(mode, "mode"); GET(cwd, "cwd"); GET(source, "source");
  GET(output, "output"); GET(argv, "argv"); GET(pid, "pid");
}

void to_json(json &j, const AcfRef &v) {
  j = json{{"stage", v.stage}, {"path", v.path}, {"sha256", v.sha256}};
}
void from_json(const json &j, AcfRef &v) {
  GET(stage, "stage"); GET(path, "path"); GET(sha256, "sha256");
}

void to_json(json &j, const CandidateMessage &v) {
  j = json{{"candidate_id", v.candidateId}, {"candidate_hash", v.candidateHash},
           {"ptxas_options", v.ptxasOptions}, {"nvcc_options", v.nvccOptions},
           {"defines", v.defines}, {"acfs", v.acfs},
           {"compile_timeout_s", v.compileTimeoutSeconds}, {"want_stats", v.wantStats},
           {"strip_args", v.stripArgs}, {"narrow_to", v.narrowTo}};
}
void from_json(const json &j, CandidateMessage &v) {
  GET(candidateId, "candidate_id"); GET(candidateHash, "candidate_hash");
  GET(ptxasOptions, "ptxas_options"); GET(nvccOptions, "nvcc_options"); GET(defines, "defines");
  GET(acfs, "acfs"); GET(compileTimeoutSeconds, "compile_timeout_s");
  v.wantStats = j.value("want_stats", true);
  GET(stripArgs, "strip_args");
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
           {"source", v.source}, {"output", v.output}, {"exit_status", v.exitStatus},
           {"status", v.status}, {"wall_ms", v.wallMs}, {"ptxas_ran", v.ptxasRan},
           {"kernels", v.kernels}, {"device_code_sha256", v.deviceCodeSha256},
           {"device_code_bytes", v.deviceCodeBytes}, {"log_path", v.logPath},
           {"final_argv", v.finalArgv}, {"overridden_user_options", v.overriddenUserOptions},
           {"skipped_controls", v.skippedControls},
           {"cap_overrides_unattributed", v.capOverridesUnattributed}};
}
void from_json(const json &j, Receipt &v) {
  GET(candidateId, "candidate_id"); GET(candidateHash, "candidate_hash"); GET(source, "source");
  GET(output, "output"); GET(exitStatus, "exit_status"); GET(status, "status");
  GET(wallMs, "wall_ms"); GET(ptxasRan, "ptxas_ran"); GET(kernels, "kernels");
  GET(deviceCodeSha256, "device_code_sha256"); GET(deviceCodeBytes, "device_code_bytes");
  GET(logPath, "log_path"); GET(finalArgv, "final_argv");
  GET(overriddenUserOptions, "overridden_user_options"); GET(skippedControls, "skipped_controls");
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
