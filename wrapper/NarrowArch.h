// narrow_architectures (docs/config.md): in a tuning run, an nvcc compile
// produces SASS only for the architecture the tune measures on. Every GPU
// target option of the user's command (-gencode/--generate-code,
// -arch/--gpu-architecture, -code/--gpu-code, in argv or an options file) is
// dropped and one `--generate-code=arch=compute_XX,code=sm_XX` added. Builds
// outside tuning runs (pass-through, --lock) are never narrowed.
#pragma once
#include <string>
#include <vector>

namespace ciq::wrapper {

// The user's nvcc arguments narrowed to `sm` ("sm_90", "sm_90a"); false with
// `error` when a target option sits where the wrapper cannot rewrite it
// (NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS) or `sm` is not an SASS architecture.
bool narrowNvccArgs(const std::vector<std::string> &args, const std::string &sm, const std::string &cwd,
                    std::vector<std::string> &out, std::string &error);

} // namespace ciq::wrapper
