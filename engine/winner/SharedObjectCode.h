// `ciq lock verify --object` on a linked shared object (a PyTorch extension
// module, a library of several .cu files): the linker concatenates the
// .nv_fatbin sections of its objects, one fatbin container each, so the
// module's device code is hashed container by container, as each object's
// was when the lock was frozen.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// The device-code hash of each fatbin container in the .nv_fatbin section of
// the shared object `path`, in order; nullopt when `path` is not an ELF
// shared object with more than one container (hash it as one object), or,
// with `error`, when a container is damaged.
std::optional<std::vector<std::string>> sharedObjectUnitHashes(const std::string &path, std::string &error,
                                                               int onlySm = 0);

} // namespace ciq
