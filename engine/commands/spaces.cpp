// `ciq spaces list|fetch|verify`: release-backed search spaces
// (docs/spaces-and-boosters.md). The resolution itself lives in
// engine/assets/SpaceResolver; this file is the command line.
#include "engine/assets/AssetCache.h"
#include "engine/commands/Command.h"
#include "common/Paths.h"
#include "engine/assets/SpaceResolver.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand SpacesCmd("spaces",
                         "Search spaces: list, fetch or verify curated and release-backed spaces");
cl::list<std::string> Args(cl::Positional, cl::sub(SpacesCmd),
                           cl::desc("list | fetch <compiler> <version> [variant] | fetch --all | verify"));
cl::opt<std::string> Tag("tag", cl::sub(SpacesCmd), cl::init("latest"),
                         cl::desc("release tag, 'latest' (newest search-spaces-* release) or 'builtin'"));
cl::opt<bool> All("all", cl::sub(SpacesCmd), cl::desc("fetch: every entry of the release's manifest"));

std::string shortSha(const std::string &sha) { return sha.substr(0, 12); }

void printEntry(const SpaceEntry &e) {
  llvm::outs() << llvm::format("  %-7s %-6s %-10s %-5s %9lld bytes  %s  %s\n", e.compiler.c_str(),
                               e.compilerVersion.c_str(), e.variant.c_str(), e.format().c_str(),
                               (long long)e.sizeBytes, shortSha(e.sha256).c_str(),
                               e.description.c_str());
}

int list() {
  auto curated = listCuratedSpaces();
  llvm::outs() << "curated (shipped with ciq, tag builtin, " << shareDir() << "/spaces):\n";
  for (const auto &c : curated)
    llvm::outs() << llvm::format("  %-34s %s\n", c.name.c_str(), c.description.c_str());
  if (Tag == "builtin")
    return 0;
  std::string error;
  auto m = loadSpaceManifest(Tag, error);
  if (!m) {
    // Offline is normal for `latest`; a mirror or a pinned tag must work.
    if (Tag == "latest" && SpaceSettings::fromEnv().mirrorDir.empty()) {
      reportWarning("no release listing: " + error);
      return 0;
    }
    return reportError(error);
  }
  llvm::outs() << (m->mirror ? "mirror" : "release") << " " << m->manifest.tag << " ("
               << m->where << "):\n";
  for (const auto &e : m->manifest.entries)
    printEntry(e);
  return 0;
}

void printResolved(const ResolvedSpace &r) {
  llvm::outs() << "fetched " << r.name << " (" << r.provider << ", tag " << r.tag << ", format "
               << r.format << ", sha256 " << r.sha256 << ")\n  " << r.localPath << "\n";
  llvm::outs().flush();   // before any note on stderr
}

int fetchAll() {
  std::string error;
  auto m = loadSpaceManifest(Tag, error);
  if (!m)
    return reportError(error);
  int failed = 0;
  for (const auto &e : m->manifest.entries) {
    auto r = fetchSpaceEntry(*m, e, error);
    if (!r) {
      reportError(error);
      ++failed;
      continue;
    }
    printResolved(*r);
  }
  return failed ? 1 : 0;
}

int fetch() {
  if (All)
    return fetchAll();
  if (Args.size() < 3 || Args.size() > 4)
    return reportError("spaces fetch: expected <compiler> <version> [variant] (e.g. 'ciq spaces "
                       "fetch ptxas 13.0 att'), or --all");
  SpaceRequest req;
  req.provider = Args[1];
  req.version = Args[2];
  if (Args.size() == 4)
    req.variant = Args[3];
  req.tag = Tag;
  std::string error;
  auto r = resolveSpace(req, error);
  if (!r)
    return reportError(error);
  printResolved(*r);
  if (r->format == "bin")
    reportNote("this space is opaque to ciq: " + error);
  return 0;
}

// Every file the tag names, checked against its manifest: the whole mirror,
// or the entries present in the download cache.
int verify() {
  std::string error;
  auto m = loadSpaceManifest(Tag, error);
  if (!m)
    return reportError(error);
  int bad = 0, missing = 0;
  for (const auto &e : m->manifest.entries) {
    std::optional<std::string> entry = m->mirror ? m->mirrorDir + "/" + e.filename
                                                 : cacheEntryPath(m->manifest.tag, e.sha256, e.filename, error);
    if (!entry)
      return reportError(error);
    const std::string &path = *entry;
    std::string why;
    if (!m->mirror && !readWholeFile(path)) {
      llvm::outs() << "  not cached  " << e.name() << "  (ciq spaces fetch " << e.compiler << " "
                   << e.compilerVersion << " " << e.variant << " --tag " << m->manifest.tag << ")\n";
      ++missing;
    } else if (verifyAsset(path, e.sizeBytes, e.sha256, "search space " + e.name(), why)) {
      llvm::outs() << "  OK          " << e.name() << "  " << shortSha(e.sha256) << "  " << path << "\n";
    } else {
      llvm::outs() << "  FAILED      " << e.name() << "  " << why << "\n";
      ++bad;
    }
  }
  llvm::outs().flush();
  if (bad)
    return reportError(std::to_string(bad) + " search space file(s) of " + m->where +
                       " do not match the manifest; fetch them again (the cache) or repair the mirror");
  llvm::outs() << "all " << (m->manifest.entries.size() - missing) << " present file(s) of tag "
               << m->manifest.tag << " match the manifest\n";
  return 0;
}

int run() {
  if (Args.empty())
    return reportError("spaces: expected an action: list, fetch or verify (ciq spaces --help)");
  const std::string &action = Args[0];
  if (action == "list")
    return list();
  if (action == "fetch")
    return fetch();
  if (action == "verify")
    return verify();
  return reportError("spaces: unknown action '" + action + "'; expected list, fetch or verify");
}

RegisterCommand reg(SpacesCmd, run);

} // namespace
