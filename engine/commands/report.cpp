// `ciq report [run dir] [-o dir]`: an HTML page with SVG plots of a search
// (engine/analysis/Report, drawn by gnuplot).
#include "engine/commands/Command.h"
#include "engine/commands/RunPath.h"
#include "engine/analysis/Report.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand ReportCmd("report", "Write an HTML page with SVG plots of a search");
cl::opt<std::string> ConfigPath("config", cl::sub(ReportCmd),
                                cl::desc("ciq.yaml of the search: read its run_dir"));
cl::opt<std::string> RunPath(cl::Positional, cl::sub(ReportCmd), cl::init("."),
                             cl::desc("<run dir | results.csv> (default: .)"));
cl::opt<std::string> OutDir("o", cl::sub(ReportCmd),
                            cl::desc("output directory (default: <run dir>/report)"),
                            cl::value_desc("dir"));

int run() {
  std::string error;
  auto path = searchRunPath(RunPath, RunPath.getNumOccurrences() > 0, ConfigPath);
  if (!path)
    return 1;
  auto data = loadRun(*path, error);
  if (!data)
    return reportError(error);
  if (data->evals.empty())
    return reportError(data->dir + ": the run has no evaluations yet; run `ciq tune` first");
  std::string out = OutDir;
  if (out.empty()) {
    llvm::SmallString<256> p(data->dir);
    llvm::sys::path::append(p, "report");
    out = std::string(p);
  }
  auto r = writeReport(*data, out, error);
  if (!r)
    return reportError(error);
  if (std::string stopped = stoppedBeforeVerdict(*data); !stopped.empty())
    llvm::outs() << "note: " << stopped << "\n";
  llvm::outs() << "report: " << r->htmlPath << " (" << r->svgPaths.size() << " plots)\n";
  for (const auto &s : r->svgPaths)
    llvm::outs() << "  " << s << "\n";
  return 0;
}

RegisterCommand reg(ReportCmd, run);

} // namespace
