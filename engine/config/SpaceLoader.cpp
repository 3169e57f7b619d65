#include "engine/config/SpaceLoader.h"
#include "engine/config/KnownOptions.h"
#include "common/Paths.h"
#include "common/UnitOptions.h"
#include "common/Sha256.h"
#include "common/CompilerVersion.h"
#include "engine/assets/SpaceResolver.h"
#include "common/Subprocess.h"

#include <algorithm>
#include <cmath>
#include <glob.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <map>
#include <set>

namespace ciq {
namespace {

std::string formatNumber(double v, bool integral) {
  if (integral)
    return std::to_string((long)std::llround(v));
  char buf[64];
  snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool isInteger(const std::string &s) {
  if (s.empty())
    return false;
  size_t i = s[0] == '-' ? 1 : 0;
  return i < s.size() && std::all_of(s.begin() + i, s.end(), ::isdigit);
}

constexpr size_t kMaxDomain = 100000;

std::vector<std::string> rangeDomain(const YAML::Node &n, const YamlReader &r, const std::string &key) {
  r.onlyKeys(n, key, {"start", "end", "step"});
  for (const char *k : {"start", "end"})
    if (!n[k])
      r.fail(n, key, std::string("missing '") + k + "'; a range needs start, end and step");
  bool integral = isInteger(n["start"].Scalar()) && isInteger(n["end"].Scalar()) &&
                  (!n["step"] || isInteger(n["step"].Scalar()));
  double start = r.number(n["start"], key + ".start", -1e18, 1e18);
  double end = r.number(n["end"], key + ".end", -1e18, 1e18);
  double step = n["step"] ? r.number(n["step"], key + ".step", 1e-12, 1e18) : 1;
  if (end < start)
    r.fail(n, key, "end is smaller than start");
  if ((end - start) / step + 1 > kMaxDomain)
    r.fail(n, key, "more than " + std::to_string(kMaxDomain) + " values; raise step");
  std::vector<std::string> vals;
  for (long i = 0;; ++i) {
    double v = start + i * step;
    if (v > end + step * 1e-9)
      break;
    vals.push_back(formatNumber(v, integral));
  }
  return vals;
}

std::vector<std::string> logDomain(const YAML::Node &n, const YamlReader &r, const std::string &key) {
  r.onlyKeys(n, key, {"start", "end", "points"});
  for (const char *k : {"start", "end", "points"})
    if (!n[k])
      r.fail(n, key, std::string("missing '") + k + "'; log_sampling needs start, end and points");
  bool integral = isInteger(n["start"].Scalar()) && isInteger(n["end"].Scalar());
  double start = r.number(n["start"], key + ".start", 1e-300, 1e300);
  double end = r.number(n["end"], key + ".end", start, 1e300);
  long points = r.integer(n["points"], key + ".points", 2, (long)kMaxDomain);
  std::vector<std::string> vals;
  for (long i = 0; i < points; ++i) {
    double v = start * std::pow(end / start, (double)i / (points - 1));
    std::string s = formatNumber(v, integral);
    if (std::find(vals.begin(), vals.end(), s) == vals.end())
      vals.push_back(s);
  }
  return vals;
}

// The ACF domain: listed files and globs, hashed; never decoded.
void acfDomain(Control &c, const YAML::Node &n, const YamlReader &r, const std::string &key,
               const std::string &baseDir) {
  r.onlyKeys(n, key, {"files", "include_none", "stage"});
  if (!n["files"])
    r.fail(n, key, "missing 'files': a list of ACF files or globs");
  if (n["stage"]) {
    c.acfStage = r.str(n["stage"], key + ".stage");
    if (c.acfStage != "ptxas" && c.acfStage != "nvcc")
      r.fail(n["stage"], key + ".stage", "expected ptxas or nvcc, got '" + c.acfStage + "'");
  }
  c.canUnset = n["include_none"] ? r.boolean(n["include_none"], key + ".include_none") : true;
  c.domain = DomainKind::AcfFiles;
  for (const auto &pattern : r.strings(n["files"], key + ".files")) {
    std::string abs = absolutePath(pattern, baseDir);
    glob_t g{};
    int rc = glob(abs.c_str(), GLOB_NOCHECK, nullptr, &g);
    std::vector<std::string> matches;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i)
      matches.push_back(g.gl_pathv[i]);
    globfree(&g);
    for (const auto &m : matches) {
      auto h = sha256File(m);
      if (!h)
        r.fail(n["files"], key + ".files", "ACF file '" + m + "' cannot be read; fix the path or the glob");
      c.values.push_back(m);
      c.acfSha256.push_back(*h);
    }
  }
  if (c.values.empty())
    r.fail(n["files"], key + ".files", "no ACF file matched");
}

// nvcc passes -D values and options on through a shell, which would run a
// "$(...)" in them; spaces can come from fetched packs, so a value a shell
// would interpret is refused before anything runs.
void rejectShellCharacters(const Control &c, const YAML::Node &n, const YamlReader &r, const std::string &k) {
  if (c.render == RenderKind::Acf)
    return;
  static const char kShell[] = "$`\"'\\;|&<>\n";
  std::vector<std::pair<std::string, YAML::Node>> texts = {{c.option, n[c.render == RenderKind::Define ? "define"
                                                                   : c.render == RenderKind::Ptxas ? "ptxas" : "nvcc"]}};
  YAML::Node domain = n["choice"] ? n["choice"] : n["literal"] ? n["literal"] : n;
  for (const auto &v : c.values)
    texts.push_back({v, domain});
  for (const auto &[text, at] : texts)
    if (size_t i = text.find_first_of(kShell); i != std::string::npos)
      r.fail(at, k, "control '" + c.name + "': '" + text + "' contains " +
                        (text[i] == '\n' ? std::string("a newline") : "'" + std::string(1, text[i]) + "'") +
                        ", which the shell nvcc runs through would interpret; remove it from the space file");
}

// A control's name, option and values go into the journal, results.csv, the
// lockfile and the engine's messages to ciq-ptxas, all JSON text: bytes that
// are not UTF-8 (a Latin-1 -D value) made nlohmann::json throw mid-tune, a
// crash. They are refused here, with the bytes shown escaped.
void rejectNonUtf8(const Control &c, const YAML::Node &n, const YamlReader &r, const std::string &k) {
  auto escaped = [](const std::string &text) {
    std::string shown;
    llvm::raw_string_ostream os(shown);
    llvm::printEscapedString(text, os);
    return os.str();
  };
  std::vector<std::string> texts = {c.name, c.option, c.help, c.compilerDefault};
  if (c.render != RenderKind::Acf) // ACF values are file paths, recorded as bytes
    texts.insert(texts.end(), c.values.begin(), c.values.end());
  for (const auto &text : texts)
    if (!llvm::json::isUTF8(text))
      r.fail(n, escaped(k), "control '" + escaped(c.name) + "': '" + escaped(text) +
                                "' is not UTF-8 (\\XX: a byte); ciq records controls as JSON text (journal, "
                                "results.csv, lockfile): spell it in UTF-8");
}

Control parseControl(const YAML::Node &n, const YamlReader &r, const std::string &key,
                     const std::string &baseDir) {
  r.onlyKeys(n, key, {"name", "ptxas", "nvcc", "define", "acf", "choice", "range", "literal",
                      "log_sampling", "knockout_prob", "required", "help", "changes_results", "compiler_default",
                      "unit"});
  Control c;
  if (!n["name"])
    r.fail(n, key, "missing 'name'");
  c.name = r.str(n["name"], key + ".name");
  std::string k = key + "(" + c.name + ")";
  c.origin = r.where(n, k);
  int renders = 0;
  // An option's origin points at its own line: checkOptionsKnown reports there.
  if (n["ptxas"]) { c.render = RenderKind::Ptxas; c.option = r.str(n["ptxas"], k + ".ptxas"); c.origin = r.where(n["ptxas"], k + ".ptxas"); ++renders; }
  if (n["nvcc"]) { c.render = RenderKind::Nvcc; c.option = r.str(n["nvcc"], k + ".nvcc"); c.origin = r.where(n["nvcc"], k + ".nvcc"); ++renders; }
  if (n["define"]) { c.render = RenderKind::Define; c.option = r.str(n["define"], k + ".define"); ++renders; }
  if (n["acf"]) { c.render = RenderKind::Acf; ++renders; }
  if (renders != 1)
    r.fail(n, k, "needs exactly one of ptxas, nvcc, define, acf (how the control reaches the compiler)");
  if (c.render == RenderKind::Define &&
      (c.option.empty() || c.option.find_first_of(" =\t") != std::string::npos))
    r.fail(n["define"], k + ".define", "expected a macro name without spaces or '='");
  int domains = 0;
  if (n["choice"]) { c.domain = DomainKind::Choice; c.values = r.strings(n["choice"], k + ".choice"); ++domains; }
  if (n["range"]) { c.domain = DomainKind::Range; c.values = rangeDomain(n["range"], r, k + ".range"); ++domains; }
  if (n["literal"]) { c.domain = DomainKind::Literal; c.values = {r.str(n["literal"], k + ".literal")}; ++domains; }
  if (n["log_sampling"]) { c.domain = DomainKind::LogSampling; c.values = logDomain(n["log_sampling"], r, k + ".log_sampling"); ++domains; }
  if (c.render == RenderKind::Acf) {
    if (domains)
      r.fail(n, k, "an acf control takes its values from acf.files; remove choice/range/literal");
    acfDomain(c, n["acf"], r, k + ".acf", baseDir);
  } else if (domains != 1)
    r.fail(n, k, "needs exactly one domain: choice, range, literal or log_sampling");
  if (c.values.empty())
    r.fail(n, k, "the domain is empty");
  rejectShellCharacters(c, n, r, k);
  bool templ = c.option.find("{}") != std::string::npos;
  if ((c.render == RenderKind::Ptxas || c.render == RenderKind::Nvcc) && !templ &&
      c.domain != DomainKind::Literal)
    r.fail(n, k, "option '" + c.option + "' has no '{}' for the value; use literal: true for a flag");
  if (n["knockout_prob"])
    c.knockoutProb = r.number(n["knockout_prob"], k + ".knockout_prob", 0, 1);
  if (n["required"])
    c.canUnset = !r.boolean(n["required"], k + ".required");
  if (n["help"])
    c.help = r.str(n["help"], k + ".help");
  if (n["changes_results"])
    c.changesResults = r.boolean(n["changes_results"], k + ".changes_results");
  if (n["compiler_default"])
    c.compilerDefault = r.str(n["compiler_default"], k + ".compiler_default");
  if (n["unit"]) {
    c.unit = r.str(n["unit"], k + ".unit");
    if (c.render != RenderKind::Ptxas && c.render != RenderKind::Nvcc)
      r.fail(n["unit"], k + ".unit", "only a ptxas or nvcc option can be given to one translation unit (a define or "
                                     "an ACF reaches the whole build); remove unit:");
    std::string given = c.unit;
    c.unit = normalUnit(given); // src//a.cu, ./src/a.cu and src/x/../a.cu are one unit in the lock
    if (c.unit.empty() || c.unit == "." || llvm::sys::path::is_absolute(given) || c.unit.rfind("..", 0) == 0)
      r.fail(n["unit"], k + ".unit", "expected a CUDA source as the build names it, relative to the project (src/a.cu)"
                                     " or a file name (a.cu), got '" + given + "'");
  }
  rejectNonUtf8(c, n, r, k);
  return c;
}

void addControl(SearchSpace &space, Control c, const YamlReader &r, const YAML::Node &at, const std::string &key) {
  int existing = space.find(c.name);
  // Included controls carry their space's name; this file's own do not yet (fromFile).
  if (existing >= 0 && space.controls[existing].spaceName.empty())
    r.fail(at["name"], key, "control '" + c.name + "' is defined twice (first at " +
                                space.controls[existing].origin + "); rename or remove one");
  if (existing >= 0) // a user's control replaces an included one of the same name
    space.controls[existing] = std::move(c);
  else
    space.controls.push_back(std::move(c));
}

// Two included spaces defining one name: neither silently wins.
void merge(SearchSpace &into, const SearchSpace &from, const YamlReader &r, const YAML::Node &at,
           const std::string &key) {
  for (const auto &c : from.controls) {
    if (int i = into.find(c.name); i >= 0)
      r.fail(at, key, "control '" + c.name + "' (" + c.origin + ") is already defined by " + into.controls[i].origin +
                          "; exclude: it in an entry before this include, or rename one");
    into.controls.push_back(c);
  }
  into.constraints.insert(into.constraints.end(), from.constraints.begin(), from.constraints.end());
  into.sources.insert(into.sources.end(), from.sources.begin(), from.sources.end());
}

SearchSpace includeEntry(const YAML::Node &e, const YamlReader &r, const std::string &key,
                         const std::string &baseDir);

// "space" + "controls" -> "space.controls"; a space file's top level has no prefix.
std::string child(const std::string &key, const std::string &name) { return key.empty() ? name : key + "." + name; }

} // namespace

void readConstraints(SearchSpace &space, const YAML::Node &n, const YamlReader &r, const std::string &key) {
  if (!n.IsSequence())
    r.fail(n, key, "expected a list of expressions over control names (lines starting with '- ')");
  for (size_t i = 0; i < n.size(); ++i) {
    std::string at = key + "[" + std::to_string(i) + "]";
    std::string expr = r.str(n[i], at);
    if (expr.find_first_not_of(" \t") == std::string::npos)
      r.fail(n[i], at, "an empty constraint; write an expression such as 'BLOCK_X * BLOCK_Y <= 1024'");
    space.constraints.push_back({expr, r.where(n[i], "")});
  }
}

namespace {

void loadOne(SearchSpace &space, const YAML::Node &n, const YamlReader &r, const std::string &key,
             const std::string &baseDir) {
  r.onlyKeys(n, key, {"include", "controls", "exclude", "constraints", "provider", "version", "variant", "tag",
                      "file", "name", "description", "compiler", "compiler_version"});
  if (n["provider"] || n["file"])
    merge(space, includeEntry(n, r, key, baseDir), r, n, key);
  if (n["include"]) {
    YAML::Node inc = n["include"];
    if (inc.IsScalar() || inc.IsMap())
      merge(space, includeEntry(inc, r, child(key, "include"), baseDir), r, inc, child(key, "include"));
    else if (inc.IsSequence())
      for (size_t i = 0; i < inc.size(); ++i)
        merge(space, includeEntry(inc[i], r, child(key, "include[" + std::to_string(i) + "]"), baseDir), r, inc[i],
              child(key, "include[" + std::to_string(i) + "]"));
    else
      r.fail(inc, child(key, "include"), "expected a space name, a file or a list of them");
  }
  if (n["controls"]) {
    YAML::Node cs = n["controls"];
    if (!cs.IsSequence())
      r.fail(cs, child(key, "controls"), "expected a list of controls (lines starting with '- name:')");
    for (size_t i = 0; i < cs.size(); ++i)
      addControl(space, parseControl(cs[i], r, child(key, "controls[" + std::to_string(i) + "]"), baseDir), r, cs[i],
                 child(key, "controls[" + std::to_string(i) + "]"));
  }
  if (n["exclude"]) {
    for (const auto &name : r.strings(n["exclude"], child(key, "exclude"))) {
      int i = space.find(name);
      if (i < 0) {
        std::string known;
        for (const auto &c : space.controls)
          known += (known.empty() ? "" : ", ") + c.name;
        r.fail(n["exclude"], child(key, "exclude"), "unknown control '" + name + "'; known controls: " + known);
      }
      space.controls.erase(space.controls.begin() + i);
    }
  }
  if (n["constraints"])
    readConstraints(space, n["constraints"], r, child(key, "constraints"));
}

SearchSpace fromFile(const std::string &path, const SpaceSource &src, int depth) {
  if (depth > 8)
    throw ConfigError(path + ": space includes nest deeper than 8 (an include cycle?)");
  YAML::Node root = loadYamlFile(path);
  YamlReader r(path);
  SearchSpace space;
  std::string base = llvm::sys::path::parent_path(path).str();
  loadOne(space, root, r, "", base);
  // This file's own controls (those of its includes are already marked).
  for (auto &c : space.controls)
    if (c.spaceName.empty()) {
      c.spaceName = root["name"] && root["name"].IsScalar() ? root["name"].Scalar() : path;
      if (root["compiler_version"] && root["compiler_version"].IsScalar())
        c.spaceCompilerVersion = root["compiler_version"].Scalar();
    }
  SpaceSource s = src;
  if (s.sha256.empty())
    s.sha256 = sha256File(path).value_or("");
  space.sources.insert(space.sources.begin(), s);
  return space;
}

std::string builtinPath(const std::string &name) {
  llvm::SmallString<256> p(shareDir());
  llvm::sys::path::append(p, "spaces", name + ".yaml");
  return p.str().str();
}

SearchSpace includeEntry(const YAML::Node &e, const YamlReader &r, const std::string &key,
                         const std::string &baseDir) {
  if (e.IsScalar()) {
    std::string name = e.Scalar();
    bool isPath = name.find('/') != std::string::npos || llvm::StringRef(name).endswith(".yaml") ||
                  llvm::StringRef(name).endswith(".yml");
    std::string path = isPath ? absolutePath(name, baseDir) : builtinPath(name);
    if (!llvm::sys::fs::exists(path)) {
      if (isPath)
        r.fail(e, key, "space file '" + path + "' does not exist");
      std::string known;
      std::error_code ec;
      for (llvm::sys::fs::directory_iterator it(shareDir() + "/spaces", ec), end; !ec && it != end; it.increment(ec))
        known += (known.empty() ? "" : ", ") + llvm::sys::path::stem(it->path()).str();
      r.fail(e, key, "unknown built-in space '" + name + "'; built-in spaces: " + known +
                         " (or give a path to a .yaml file)");
    }
    return fromFile(path, {name, isPath ? "file" : "builtin", "", ""}, 1);
  }
  if (!e.IsMap())
    r.fail(e, key, "expected a space name, a file, or {provider, version, variant, tag}");
  SpaceRequest req;
  if (e["file"]) {
    req.provider = "file";
    req.file = absolutePath(r.str(e["file"], key + ".file"), baseDir);
  } else {
    req.provider = e["provider"] ? r.str(e["provider"], key + ".provider") : "";
    if (e["version"]) req.version = r.str(e["version"], key + ".version");
    if (e["variant"]) req.variant = r.str(e["variant"], key + ".variant");
    if (e["tag"]) req.tag = r.str(e["tag"], key + ".tag");
  }
  std::string err;
  auto resolved = resolveSpace(req, err);
  if (!resolved)
    r.fail(e, key, err);
  if (resolved->format != "yaml")
    r.fail(e, key, "space '" + resolved->localPath + "' is in NVIDIA's encrypted '" + resolved->format +
                       "' format, which only NVIDIA's own search core can consume; ciq searches YAML spaces "
                       "(use provider ptxas/nvcc with ciq's curated spaces, or a YAML file)");
  return fromFile(resolved->localPath, {req.provider == "file" ? req.file : req.provider + "-" + req.version + "-" + req.variant,
                                        resolved->provider, resolved->tag, resolved->sha256}, 1);
}

} // namespace

// Two controls that render one compiler option for the same compiles would
// put it on one command line twice whenever both are set (ptxas takes the
// last, or refuses; issue 51 item 9): one option, one control, whose values
// are the choice. Defines are left out: two controls of one macro are how a
// space gives the same binary twice on purpose (twin tests), and a macro
// defined twice is the compiler's own warning.
static void rejectSameOption(const SearchSpace &space, const YAML::Node &at, const YamlReader &r) {
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < space.controls.size(); ++i) {
    const Control &c = space.controls[i];
    if (c.render != RenderKind::Ptxas && c.render != RenderKind::Nvcc)
      continue;
    // Every spelling of one option is that option (issue 56 item 5).
    std::string option = optionIdentity(c);
    auto [it, fresh] = seen.emplace(option + "\n" + c.unit, i);
    if (fresh)
      continue;
    const Control &first = space.controls[it->second];
    std::string spellings;
    if (first.option != c.option || first.render != c.render)
      spellings = " (written '" + first.option + "' and '" + c.option + "')";
    r.fail(at, "space", "controls '" + first.name + "' (" + first.origin + ") and '" + c.name + "' (" + c.origin +
                            ") both render " + option + (c.unit.empty() ? "" : " for " + c.unit) + spellings +
                            ", which would reach one compile twice; keep one control with all the values");
  }
}

SearchSpace loadSpace(const YAML::Node &node, const YamlReader &r, const std::string &baseDir) {
  SearchSpace space;
  if (node.IsMap())
    loadOne(space, node, r, "space", baseDir);
  else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      if (node[i].IsScalar())
        merge(space, includeEntry(node[i], r, "space[" + std::to_string(i) + "]", baseDir), r, node[i],
              "space[" + std::to_string(i) + "]");
      else
        loadOne(space, node[i], r, "space[" + std::to_string(i) + "]", baseDir);
    }
  } else if (node.IsScalar())
    merge(space, includeEntry(node, r, "space", baseDir), r, node, "space");
  else
    r.fail(node, "space", "expected a mapping with include/controls, or a list of them");
  rejectSameOption(space, node, r);
  return space;
}

SearchSpace loadSpaceFile(const std::string &nameOrPath, const std::string &baseDir) {
  YAML::Node n(nameOrPath);
  YamlReader r("<command line>");
  SearchSpace space = includeEntry(n, r, "space", baseDir);
  // Whoever uses the file alone (bench/search_efficiency, the default space)
  // gets its constraints in force; loadConfig compiles again once the space is final.
  if (std::string err; !space.compileConstraints(err))
    throw ConfigError(err);
  return space;
}

SearchSpace defaultSpace(bool withNumerics, const std::string &baseDir) {
  SearchSpace space = loadSpaceFile("ptxas-13.0-default", baseDir);
  if (!withNumerics) {
    // ptxas's own result-changing controls (--fmad) follow nvcc's rule:
    // without an output comparison nothing would notice what they change.
    auto &c = space.controls;
    c.erase(std::remove_if(c.begin(), c.end(), [](const Control &ctl) { return ctl.changesResults; }), c.end());
    return space;
  }
  SearchSpace nvcc = loadSpaceFile("nvcc-13.0-default", baseDir);
  for (const char *name : {"ftz", "prec-div", "prec-sqrt", "use-fast-math"}) {
    int i = nvcc.find(name);
    if (i < 0 || !nvcc.controls[i].changesResults) // the shipped file is ours: a bad edit, not a user error
      throw ConfigError("built-in space nvcc-13.0-default lacks the changes_results control '" + std::string(name) +
                        "'; reinstall ciq");
    space.controls.push_back(nvcc.controls[i]);
  }
  space.sources.insert(space.sources.end(), nvcc.sources.begin(), nvcc.sources.end());
  return space;
}

} // namespace ciq
