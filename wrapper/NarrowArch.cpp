#include "wrapper/NarrowArch.h"
#include "common/CommandLine.h"

#include <cstdlib>

namespace ciq::wrapper {
namespace {

bool isTargetOption(const Arg &a) {
  const std::string &n = a.opt.name;
  return a.isOption && (n == "generate-code" || n == "gpu-architecture" || n == "gpu-code");
}

// Removes the target options of `args` (and of options files in it); true
// when one was removed, so that an options file renders from its children.
bool dropTargets(std::vector<Arg> &args) {
  bool any = false;
  for (auto &a : args) {
    if (a.isOptionsFile && dropTargets(a.children))
      any = a.dirty = true;
    else if (isTargetOption(a))
      any = a.removed = true;
  }
  return any;
}

std::string envOr(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

} // namespace

bool narrowNvccArgs(const std::vector<std::string> &args, const std::string &sm, const std::string &cwd,
                    std::vector<std::string> &out, std::string &error) {
  if (sm.rfind("sm_", 0) != 0 || sm.size() < 5) {
    error = "narrow_architectures: '" + sm + "' is not an SASS architecture like sm_90";
    return false;
  }
  NvccCommand cmd = parseNvcc(args, envOr("NVCC_PREPEND_FLAGS"), envOr("NVCC_APPEND_FLAGS"), cwd);
  if (!cmd.error.empty()) {
    error = cmd.error;
    return false;
  }
  for (const auto *env : {&cmd.prependArgs, &cmd.appendArgs})
    for (const auto &a : *env)
      if (isTargetOption(a)) {
        error = "narrow_architectures: '" + a.tokens.front() + "' in " +
                (env == &cmd.prependArgs ? "NVCC_PREPEND_FLAGS" : "NVCC_APPEND_FLAGS") +
                " cannot be narrowed to " + sm + "; move it to the build's flags, or tune without narrow_architectures";
        return false;
      }
  dropTargets(cmd.args);
  out = renderArgs(cmd.args, true);
  out.push_back("--generate-code=arch=compute_" + sm.substr(3) + ",code=" + sm);
  return true;
}

} // namespace ciq::wrapper
