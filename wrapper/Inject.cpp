#include "wrapper/Inject.h"

#include <set>

namespace ciq::wrapper {
namespace {

// Canonical ptxas option names a candidate sets (its ACF counts as apply-controls).
std::set<std::string> candidatePtxasNames(const CandidateMessage &c, bool ptxasAcf) {
  std::set<std::string> names;
  for (const auto &o : c.ptxasOptions)
    names.insert(parsePtxasOption(o, nullptr).name);
  if (ptxasAcf)
    names.insert("apply-controls");
  return names;
}

std::string conflictError(const std::string &spelled, Origin o, const CandidateMessage &c) {
  return std::string(originName(o)) + " sets '" + spelled + "', which candidate " + c.candidateId +
         " also sets; ciq never rewrites " + originName(o) +
         ", so remove the option from it while tuning or applying a lock";
}

// Marks options files and lists that lost an element as needing re-rendering.
bool propagateDirty(std::vector<Arg> &args) {
  bool any = false;
  for (auto &a : args) {
    for (auto &it : a.items)
      a.dirty = a.dirty || it.removed;
    if (propagateDirty(a.children))
      a.dirty = true;
    any = any || a.dirty || a.removed;
  }
  return any;
}

// Removes -D NAME elements the candidate redefines.
void dropDefines(std::vector<Arg *> flat, const CandidateMessage &c, Injection &inj) {
  std::set<std::string> names;
  for (const auto &d : c.defines)
    names.insert(d.substr(0, d.find('=')));
  for (Arg *a : flat) {
    if (a->opt.name != "define-macro")
      continue;
    for (auto &it : a->items) {
      if (!names.count(it.text.substr(0, it.text.find('='))))
        continue;
      if (a->origin == Origin::PrependEnv || a->origin == Origin::AppendEnv) {
        inj.error = conflictError("-D" + it.text, a->origin, c);
        return;
      }
      it.removed = true;
      inj.overridden.push_back("-D" + it.text);
    }
  }
}

void dropNvccOptions(std::vector<Arg *> flat, const CandidateMessage &c, bool nvccAcf,
                     bool ptxasMaxrreg, Injection &inj) {
  std::set<std::string> names;
  for (const auto &o : c.nvccOptions) {
    auto p = parseNvccOption(o, nullptr);
    if (!p.accumulates)
      names.insert(p.name);
  }
  if (nvccAcf)
    names.insert("apply-controls");
  // nvcc's own --maxrregcount reaches ptxas as --maxrregcount: same control.
  if (ptxasMaxrreg)
    names.insert("maxrregcount");
  for (Arg *a : flat) {
    if (!a->isOption || a->isOptionsFile || !names.count(a->opt.name))
      continue;
    std::string spelled = a->tokens[0] + (a->tokens.size() > 1 ? " " + a->tokens[1] : "");
    if (a->origin == Origin::PrependEnv || a->origin == Origin::AppendEnv) {
      inj.error = conflictError(spelled, a->origin, c);
      return;
    }
    a->removed = true;
    inj.overridden.push_back(spelled);
  }
}

std::string defineArg(const std::string &d) { return "-D" + escapeNvccListItem(d); }

} // namespace

Injection injectNvcc(NvccCommand &cmd, const CandidateMessage &c,
                     const std::vector<std::string> &prefix, bool addVerbose) {
  Injection inj;
  const AcfRef *ptxasAcf = nullptr, *nvccAcf = nullptr;
  for (const auto &a : c.acfs)
    (a.stage == "nvcc" ? nvccAcf : ptxasAcf) = &a;
  auto ptxNames = candidatePtxasNames(c, ptxasAcf != nullptr);
  for (auto &u : cmd.ptxasOptions) {
    if (!ptxNames.count(u.opt.name))
      continue;
    if (u.origin == Origin::PrependEnv || u.origin == Origin::AppendEnv) {
      inj.error = conflictError("-Xptxas " + u.spelled, u.origin, c);
      return inj;
    }
    for (ListItem *it : u.items)
      it->removed = true;
    inj.overridden.push_back("-Xptxas " + u.spelled);
  }
  auto flat = cmd.flat();
  dropNvccOptions(flat, c, nvccAcf != nullptr, ptxNames.count("maxrregcount") != 0, inj);
  if (inj.error.empty())
    dropDefines(flat, c, inj);
  if (!inj.error.empty())
    return inj;
  propagateDirty(cmd.args);

  inj.argv = prefix;
  auto user = renderArgs(cmd.args, true);
  inj.argv.insert(inj.argv.end(), user.begin(), user.end());
  for (const auto &o : c.nvccOptions)
    inj.argv.push_back(o);
  for (const auto &d : c.defines)
    inj.argv.push_back(defineArg(d));
  if (nvccAcf) {
    inj.argv.push_back("--apply-controls");
    inj.argv.push_back(nvccAcf->path);
  }
  // One -Xptxas per option, each escaped so that nvcc's comma split keeps it whole.
  for (const auto &o : c.ptxasOptions) {
    inj.argv.push_back("-Xptxas");
    inj.argv.push_back(escapeNvccListItem(o));
  }
  if (ptxasAcf) {
    inj.argv.push_back("-Xptxas");
    inj.argv.push_back(escapeNvccListItem("--apply-controls=" + ptxasAcf->path));
  }
  if (addVerbose && !cmd.userAskedPtxasVerbose) {
    inj.argv.push_back("-Xptxas");
    inj.argv.push_back("-v");
    inj.addedVerbose = true;
  }
  return inj;
}

Injection injectPtxas(PtxasCommand &cmd, const CandidateMessage &c,
                      const std::vector<std::string> &prefix, bool addVerbose) {
  Injection inj;
  const AcfRef *ptxasAcf = nullptr;
  for (const auto &a : c.acfs) {
    if (a.stage == "ptxas")
      ptxasAcf = &a;
    else
      inj.skipped.push_back("ACF for nvcc " + a.path + " (ptxas runs alone)");
  }
  for (const auto &o : c.nvccOptions)
    inj.skipped.push_back("nvcc option " + o + " (ptxas runs alone)");
  for (const auto &d : c.defines)
    inj.skipped.push_back("define " + d + " (ptxas runs alone: PTX is already preprocessed)");
  auto names = candidatePtxasNames(c, ptxasAcf != nullptr);
  for (auto &u : cmd.options) {
    if (!names.count(u.opt.name))
      continue;
    u.arg->removed = true;
    inj.overridden.push_back(u.spelled);
  }
  propagateDirty(cmd.args);
  inj.argv = prefix;
  auto user = renderArgs(cmd.args, false);
  inj.argv.insert(inj.argv.end(), user.begin(), user.end());
  for (const auto &o : c.ptxasOptions)
    inj.argv.push_back(o);
  if (ptxasAcf) {
    inj.argv.push_back("--apply-controls");
    inj.argv.push_back(ptxasAcf->path);
  }
  if (addVerbose && !cmd.verbose) {
    inj.argv.push_back("-v");
    inj.addedVerbose = true;
  }
  return inj;
}

} // namespace ciq::wrapper
