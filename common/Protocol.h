// The wrapper <-> engine protocol (docs/protocol.md): newline-delimited JSON
// over the engine's Unix socket, one connection per compiler invocation.
//
//   wrapper -> engine  {"v":1,"op":"hello", ...CompileRequest}
//   engine  -> wrapper {"v":1,"op":"candidate", ...CandidateMessage}
//                   or {"v":1,"op":"error","message":"..."}
//   (the wrapper runs the compiler)
//   wrapper -> engine  {"v":1,"op":"receipt", ...Receipt}
//   engine  -> wrapper {"v":1,"op":"ack"}
#pragma once
#include "common/JsonRead.h"
#include "common/KernelDirective.h"
#include "common/UnitOptions.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

constexpr int kProtocolVersion = 1;

// What one compiler invocation is: sent by the wrapper before compiling.
struct CompileRequest {
  std::string compiler;            // "nvcc" or "ptxas" (the real tool behind any launcher)
  std::string mode;                // "launcher", "ptxas-standin", "nvcc-standin"
  std::string cwd;
  std::string source;              // absolute path of the input (.cu or .ptx), may be empty
  std::string output;              // absolute path of -o, may be empty
  std::vector<std::string> argv;   // the user's command, unchanged
  int pid = 0;
  // The engine instance this compile was started for (CIQ_ENGINE_TOKEN of the
  // build's environment): an engine answers only its own builds, so a compile
  // left by a killed engine never gets a candidate of the next one.
  std::string engineToken;
};

// An ACF to inject: already copied to a path that names its SHA-256 and has no comma.
struct AcfRef {
  std::string stage;   // "ptxas" or "nvcc"
  std::string path;
  std::string sha256;
};

// The current candidate, rendered.
struct CandidateMessage {
  std::string candidateId;                 // e.g. "c0007"
  std::string candidateHash;               // SHA-256 of everything rendered (options, defines, ACF bytes)
  std::vector<std::string> ptxasOptions;   // each a single ptxas argument, e.g. "--opt-level=2"
  std::vector<std::string> nvccOptions;    // nvcc arguments, e.g. "--extra-device-vectorization"
  std::vector<std::string> defines;        // "NAME=VALUE", passed as -DNAME=VALUE
  std::vector<AcfRef> acfs;
  double compileTimeoutSeconds = 0;        // 0: none
  // Arguments the build already carries that must not reach the compiler in
  // this tuning run: the tokens ciq_apply_lock() added for a frozen winner
  // (exact matches, see lockCompileArgs), so the baseline really is the
  // default compile.
  std::vector<std::string> stripArgs;
  // Echoed in the receipt: only receipts of this engine instance count.
  std::string engineToken;
  // narrow_architectures: nvcc compiles SASS for this architecture only
  // ("sm_90"), whatever -gencode/-arch the build passes ("" : as the build says).
  std::string narrowTo;
  // False when every objective is a compile metric: a candidate that reuses
  // kept PTX needs ptxas's statistics and device code, not a new object.
  bool needObject = true;
  // Per-kernel controls (common/KernelDirective.h): written into the PTX of
  // the entries they name before ptxas compiles it.
  std::vector<KernelDirective> kernelDirectives;
  // Per-translation-unit controls (common/UnitOptions.h): options for the
  // compiles of one source only; the wrapper folds those of its source into
  // ptxasOptions/nvccOptions (foldUnitOptions) before anything else.
  std::vector<UnitOptions> unitOptions;
};

// ptxas statistics of one kernel (entry function) for one architecture.
struct KernelStats {
  std::string name;        // mangled name as ptxas prints it
  std::string demangled;   // demangled with LLVM's demangler ("" when not mangled)
  std::string arch;        // "sm_90"
  int registers = 0;
  int barriers = 0;
  long spillStores = 0;    // bytes
  long spillLoads = 0;     // bytes
  long stackFrame = 0;     // bytes
  long sharedBytes = 0;    // static shared memory, bytes
  long constantBytes = 0;  // sum of cmem[N] banks reported, bytes
  double compileMs = 0;    // ptxas "Compile time" for this entry, ms (0 if not printed)
  bool entry = true;       // false: a device (non-entry) function, reported by "Function properties"
  bool frameKnown = false; // the "bytes stack frame, ... spill" line was read: else stack and spills are unknown
  bool usageKnown = false; // the "Used N registers" line was read: else registers and smem are unknown
  // -maxrregcount: ptxas said it applied the cap to this entry, or kept the
  // entry's own limit instead (__launch_bounds__, __maxnreg__), e.g.
  // "entry-specific value 255 computed using thread count" (wrapper/RegisterCap.h).
  bool capApplied = false;
  std::string capOverride;
  // The entry's own directives as nvcc's front end wrote them (before any
  // per-kernel control), where the wrapper read that PTX (kept or reused
  // PTX, a ptxas stand-in's input): the block
  // size of .maxntid/.reqntid (x*y*z, 0: none), .minnctapersm and .maxnreg
  // (0: none). ptxKnown false: the PTX was not read, these are unknown.
  bool ptxKnown = false;
  int ptxMaxThreads = 0;
  int ptxMinBlocks = 0;
  int ptxMaxnreg = 0;
  bool ptxSetmaxnreg = false;     // the body reconfigures registers (setmaxnreg): no register or occupancy directive
  bool ptxDynamicShared = false;  // the body uses dynamic shared memory: ptxas refuses shared-memory spilling
  // The compile that made it, as the per-kernel controls need to know:
  // relocatable device code (-rdc, -dc) and -G forbid shared-memory
  // spilling; `splitProblem` says why PTX directives cannot be written into
  // this compile at all ("nvcc option -keep", "not a compile to an object
  // (-c or -dc)"; "" when they can).
  bool relocatable = false;
  bool deviceDebug = false;
  std::string splitProblem;
};

// What the wrapper reports after one compiler invocation.
struct Receipt {
  std::string candidateId;
  std::string candidateHash;
  std::string source;
  std::string output;
  int exitStatus = 0;
  std::string status;               // "ok", or reason::CompileError, CompilerCrash, CompileTimeout (InvalidReason.h)
  int crashSignal = 0;              // compiler_crash: the signal that killed the compiler (or a tool nvcc ran)
  std::string crashedTool;          // compiler_crash: "ptxas", "cicc", ... as nvcc names it
  std::string reason;               // why the compiler did not run, e.g. "ACF /x.acf does not exist"
  double wallMs = 0;
  bool ptxasRan = false;            // false for -E, -M, PTX-only, host-only steps
  // Served by a compiler cache (ccache, sccache) behind ciq-ptxas: no
  // compiler ran, so wallMs is the cache's answer time, not a compile's; the
  // statistics are the cached compile's (the cache replays its output).
  bool cached = false;
  std::vector<KernelStats> kernels;
  std::string deviceCodeSha256;     // SHA-256 of the object's .nv_fatbin section (or cubin bytes)
  long deviceCodeBytes = 0;
  std::vector<std::string> finalArgv; // the command actually run (replayable)
  // User options removed because the candidate sets the same option (candidate wins), as written.
  std::vector<std::string> overriddenUserOptions;
  // Controls that cannot reach this compiler (e.g. nvcc options when ptxas runs alone).
  std::vector<std::string> skippedControls;
  std::string engineToken;          // the candidate's engineToken
  // "Overriding global maxrregcount" lines ptxas printed that name no kernel
  // this receipt could attribute them to (wrapper/RegisterCap.h).
  int capOverridesUnattributed = 0;
  // How the object was made (docs/wrapper.md, "PTX reuse"): "full" (nvcc ran),
  // "kept" (nvcc ran and its front end was kept), "reused" (ptxas on kept PTX).
  std::string ptxReuse = "full";
  // A write the file system refused (common/DiskFault.h): the compile, or
  // keeping its PTX, failed because `ioPath` is on a full, read-only or
  // failing disk (ENOSPC, EDQUOT, EROFS, EIO). Not the candidate's doing:
  // the engine records nothing for it and stops the search. 0: none.
  int ioErrno = 0;
  std::string ioPath;
  // What became of each per-kernel control of the candidate in this compile
  // (one per directive and architecture of an entry it names).
  std::vector<DirectiveOutcome> directives;
};

void to_json(nlohmann::json &j, const CompileRequest &v);
void to_json(nlohmann::json &j, const AcfRef &v);
void to_json(nlohmann::json &j, const CandidateMessage &v);
void to_json(nlohmann::json &j, const KernelStats &v);
void to_json(nlohmann::json &j, const Receipt &v);

// Typed readers (JsonRead.h): every field's type is checked; false with why
// naming the key and the expectation. Missing keys keep their defaults, so
// older or newer peers stay readable.
bool readJson(const nlohmann::json &j, CompileRequest &v, std::string &why);
bool readJson(const nlohmann::json &j, AcfRef &v, std::string &why);
bool readJson(const nlohmann::json &j, CandidateMessage &v, std::string &why);
bool readJson(const nlohmann::json &j, KernelStats &v, std::string &why);
bool readJson(const nlohmann::json &j, Receipt &v, std::string &why);

// Byte strings (paths, arguments) on the wire: valid UTF-8 as a JSON string,
// anything else as {"base64": "..."} (lossless). bytesFromJson throws
// nlohmann::json::type_error for anything else.
nlohmann::json bytesToJson(const std::string &bytes);
std::string bytesFromJson(const nlohmann::json &j);

// Wraps a payload with {"v":1,"op":op}.
nlohmann::json makeMessage(const std::string &op, const nlohmann::json &payload = nlohmann::json::object());

} // namespace ciq
