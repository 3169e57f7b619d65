// The names of the CIQ_* environment variables (common/EnvNames.def), as
// constants: code writes getenv(env::Socket), never the literal, so a name is
// spelled in one place and the docs test sees every one.
#pragma once

namespace ciq::env {

#define CIQ_ENV(id, name, reader, what) inline constexpr const char *id = #name;
#include "common/EnvNames.def"
#undef CIQ_ENV

struct EnvVar {
  const char *name;
  const char *reader; // which program reads it
  const char *what;
};

inline constexpr EnvVar kAll[] = {
#define CIQ_ENV(id, name, reader, what) {#name, reader, what},
#include "common/EnvNames.def"
#undef CIQ_ENV
};

} // namespace ciq::env
