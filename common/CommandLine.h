// The argument model of one nvcc or ptxas command line: what the user asked
// for (phases, inputs, output, GPU targets, ptxas options wherever they came
// from), kept as a tree over the user's own tokens so that the wrapper can
// render the command back byte for byte, or with the few edits a candidate
// requires.
//
// Sources of arguments, as nvcc 13.0 reads them: argv; `--options-file`/`-optf`
// files (GNU shell-like quoting, expanded in place); NVCC_PREPEND_FLAGS before
// and NVCC_APPEND_FLAGS after argv (read only, never rewritten). nvcc and ptxas
// 13.0 do not expand `@file`: it is an input name to them, and so it is here.
#pragma once
#include "common/NvccList.h"
#include "common/OptionTable.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

enum class Origin { Argv, OptionsFile, PrependEnv, AppendEnv };
const char *originName(Origin o);

// One element of a comma list (-Xptxas a,b  /  -D X,Y), after nvcc's escape rules.
struct ListItem {
  std::string text;
  bool removed = false;
};

// One argument of the user's command: an option (1 or 2 tokens), an input,
// or an options file (whose contents are its children).
struct Arg {
  std::vector<std::string> tokens;  // exactly as the user wrote them
  ParsedOption opt;                 // opt.known / opt.name empty for inputs
  bool isOption = false;
  bool isOptionsFile = false;
  std::string input;                // non-empty for an input file
  Origin origin = Origin::Argv;
  std::vector<ListItem> items;      // -Xptxas / -D lists, split on unescaped commas
  std::vector<Arg> children;        // contents of an options file
  bool removed = false;             // dropped because a candidate sets it (candidate wins)
  bool dirty = false;               // render from items/children instead of tokens
};

// nvcc's comma splitting of list-valued options ("\," keeps a comma, "\\" a backslash).
std::vector<std::string> splitNvccList(const std::string &value);
using ciq::escapeNvccListItem; // common/NvccList.h

// A GPU target: virtual architecture and the code it becomes ("sm_90", "compute_90", "lto_90").
struct GpuTarget {
  std::string arch;
  std::string code;
};

// A ptxas option the user passed, and where it lives (for the candidate-wins rule).
struct UserPtxasOption {
  ParsedOption opt;
  std::string spelled;             // as written, e.g. "-O3"
  Origin origin = Origin::Argv;
  std::vector<ListItem *> items;   // nvcc: the -Xptxas list elements it used
  Arg *arg = nullptr;              // ptxas: the argument itself
};

struct NvccCommand {
  std::vector<std::string> argv;       // the user's arguments after the compiler, unchanged
  std::vector<Arg> args;               // argv parsed (options files expanded as children)
  std::vector<Arg> prependArgs, appendArgs; // NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS
  std::vector<std::string> inputs;
  std::string output;                  // -o value, "" when absent
  std::string depfile;                 // -MF value, "" when absent
  std::vector<GpuTarget> targets;      // after nvcc's defaults (sm_75 when none is given)
  std::vector<UserPtxasOption> ptxasOptions;
  bool userAskedPtxasVerbose = false;  // -Xptxas -v / --verbose or --resource-usage
  bool ptxasRuns = false;              // a SASS (cubin) is produced by ptxas in this invocation
  bool deviceDebug = false;            // -G, or -Xptxas -g: ptxas accepts no optimisation but -O0
  bool lineinfo = false;               // -lineinfo, or -Xptxas -lineinfo
  bool relocatable = false;            // -rdc=true or -dc: relocatable device code, linked by nvlink
  std::string error;                   // an options file that cannot be read
  // Every Arg in order, options files flattened, env included (prepend, argv, append).
  std::vector<Arg *> flat();
  // The SASS architectures this invocation compiles for ("sm_90", "sm_90a").
  std::vector<std::string> sassArchs() const;
  // The main input (first .cu/.ptx/... file), "" when none.
  std::string source() const;
};

// Parses nvcc's arguments; env values are NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS ("" when unset).
NvccCommand parseNvcc(const std::vector<std::string> &argv, const std::string &prependEnv,
                      const std::string &appendEnv, const std::string &cwd);

struct PtxasCommand {
  std::vector<std::string> argv;
  std::vector<Arg> args;
  std::vector<UserPtxasOption> options;
  std::string input;           // the .ptx input
  std::string output;          // -o value; ptxas's default is elf.o
  std::string arch;            // --gpu-name / -arch value
  bool verbose = false;
  bool deviceDebug = false;    // -g / --device-debug
  bool lineinfo = false;       // -lineinfo / --generate-line-info
  bool versionQuery = false;   // --version / -V: prints, compiles nothing
  bool ptxasRuns = false;
  std::string error;
};

PtxasCommand parsePtxas(const std::vector<std::string> &argv, const std::string &cwd);

// Renders the user's arguments back: identical tokens unless an Arg was edited.
std::vector<std::string> renderArgs(const std::vector<Arg> &args, bool nvccLists);

} // namespace ciq::wrapper
