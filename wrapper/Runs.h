// The two modes of ciq-ptxas that do more than pass the compile through:
// a tuning run (CIQ_SOCKET: the engine's candidate, and a receipt back) and
// lock mode (--lock / CIQ_LOCK: the lockfile's winner). Both return the
// compiler's exit status.
#pragma once
#include "wrapper/Invocation.h"

#include <string>

namespace ciq::wrapper {

int tuningRun(const Invocation &inv, const std::string &socket);
int lockRun(const Invocation &inv);

} // namespace ciq::wrapper
