#include "common/Lockfile.h"
#include "common/LockSections.h"

#include <algorithm>
#include "common/JsonRead.h"
#include "common/AcfStaging.h"
#include "common/FileIO.h"
#include "common/NvccList.h"
#include "common/Sha256.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace ciq {
using nlohmann::json;

std::string candidateHashOf(const std::vector<std::string> &ptxas, const std::vector<std::string> &nvcc,
                            const std::vector<std::string> &defines,
                            const std::vector<std::pair<std::string, std::string>> &acfStageAndSha256,
                            const std::vector<KernelDirective> &kernels, const std::vector<UnitOptions> &units) {
  json acf = json::array();
  for (const auto &[stage, sha] : acfStageAndSha256)
    acf.push_back({stage, sha});
  json j = {{"ptxas", ptxas}, {"nvcc", nvcc}, {"defines", defines}, {"acfs", acf}};
  if (!kernels.empty()) {
    json k = json::array();
    for (const auto &d : kernels)
      k.push_back({d.kernel, d.directive, d.value});
    j["kernels"] = k;
  }
  if (!units.empty())   // absent without: the hashes of earlier candidates and locks stay as they were
    j["units"] = units;
  return sha256Hex(j.dump());
}

json winnerToJson(const Lockfile &l) {
  json acfs = json::array();
  for (const auto &a : l.acfs)
    acfs.push_back({{"stage", a.stage}, {"file", a.file}, {"sha256", a.sha256}});
  json j = l.extra.is_object() ? l.extra : json::object();
  j["engine_version"] = l.engineVersion;
  j["created_at"] = l.createdAt;
  j["target"] = l.target;
  j["compiler"] = {{"nvcc", {{"path", l.nvccPath}, {"version", l.nvccVersion}}},
                   {"ptxas", {{"path", l.ptxasPath}, {"version", l.ptxasVersion}}}};
  j["architectures"] = l.architectures;
  j["gpu"] = l.gpu;
  j["search_space"] = l.searchSpace;
  j["winner"] = {{"candidate_id", l.candidateId},
                 {"candidate_hash", l.candidateHash},
                 {"controls", l.controls},
                 {"rendered", {{"ptxas", l.ptxasOptions}, {"nvcc", l.nvccOptions}, {"defines", l.defines}}},
                 {"acfs", acfs},
                 {"device_code_sha256", l.deviceCodeSha256}};
  if (!l.kernelDirectives.empty())
    j["winner"]["rendered"]["kernels"] = l.kernelDirectives;
  if (!l.unitOptions.empty())
    j["winner"]["rendered"]["units"] = l.unitOptions;
  if (!l.kernelUnits.empty())
    j["kernel_units"] = l.kernelUnits;
  j["score"] = l.score;
  if (!l.measured.empty())
    j["measured"] = l.measured;
  return j;
}

namespace {
const char kRestore[] = "; restore the lockfile from version control or tune again";
} // namespace

std::optional<json> parseLockJson(const std::string &path, std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory; give the lockfile itself (ciq.lock)";
    return std::nullopt;
  }
  // A FIFO or device in its place would block the open or read without end.
  if (auto st = std::filesystem::status(path, ec); !ec && st.type() != std::filesystem::file_type::regular) {
    error = path + ": not a regular file (a FIFO, socket or device); give the lockfile itself";
    return std::nullopt;
  }
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the lockfile; create it with the tune target "
                   "(cmake --build <build> --target ciq-tune-<target>) or check the path given";
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  std::string why;
  if (!parseJson(ss.str(), "", j, why)) {
    // why: ": not valid JSON (parse error at line L, column C: ...)" or ": JSON nested deeper than ..."
    std::string what = why.substr(2);
    if (what.rfind("not valid JSON (", 0) == 0)
      what = "JSON " + what.substr(16, what.size() - 17);
    error = path + ": malformed lockfile (" + what + ")" + kRestore;
    return std::nullopt;
  }
  if (j.is_object())
    return j;
  error = path + ": malformed lockfile (a JSON " + std::string(j.type_name()) + ", not an object)" + kRestore;
  return std::nullopt;
}

namespace {

// Every field a later reader takes from the free-form parts of a lock
// (`ciq lock show`, verify, apply), typed here once, so a wrong type is one
// error line and no reader meets it (a string `direction` read from a number
// aborted `ciq lock show`).
bool checkReadBack(const json &score, const json &top, const std::string &path, std::string &why) {
  std::string s;
  double d;
  bool b;
  std::vector<std::string> list;
  std::vector<json> rows;
  const json *validation, *objectives, *build;
  JsonFields sf(score, path + ": score"), xf(top, path);
  sf.opt("baseline_device_code_sha256", s).opt("unit", s).opt("objective", s).opt("direction", s)
      .opt("aggregate", s).opt("baseline", d).opt("winner", d).opt("speedup", d).opt("cv_percent", d)
      .opt("p_value", d).opt("attribution", rows).object("validation", validation).object("objectives", objectives);
  xf.opt("tune_targets", list).opt("tuned_architecture", s).opt("device_code_architecture", s).object("build", build);
  JsonFields vf(*validation, path + ": score.validation"), bf(*build, path + ": build");
  vf.opt("runs", d).opt("baseline_median", d).opt("winner_median", d).opt("p_value", d).opt("unit", s)
      .opt("validated_at", s);
  bf.opt("build_type", s).opt("device_debug", b).opt("lineinfo", b);
  for (const JsonFields *f : {&sf, &xf, &vf, &bf})
    if (!f->ok())
      return why = f->error(), false;
  for (size_t i = 0; i < rows.size(); ++i) {
    JsonFields rf(rows[i], path + ": score.attribution[" + std::to_string(i) + "]");
    rf.opt("runs", d).opt("p_value", d);
    if (!rf.ok())
      return why = rf.error(), false;
  }
  return true;
}

} // namespace

std::string lockSha256Of(const json &lock) {
  json rest = lock;
  if (rest.is_object())
    rest.erase(kLockShaKey);
  return sha256Hex(rest.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool checkLockSha256(const json &lock, const std::string &path, std::string &error) {
  auto it = lock.find(kLockShaKey);
  if (it == lock.end()) // written by hand or by a ciq before it (docs/lockfile.md, "Integrity")
    return true;
  if (it->is_string() && it->get_ref<const std::string &>() == lockSha256Of(lock))
    return true;
  error = path + ": \"" + std::string(kLockShaKey) +
          "\" does not match the lock's content: the lock was edited by hand" + kRestore;
  return false;
}

std::string unsealedLockWarning(const std::string &path) {
  return path + ": no \"" + std::string(kLockShaKey) +
         "\" (written by hand or by an older ciq): its winner is checked against candidate_hash, but an edit of "
         "its other fields (score, compiler versions) would go unnoticed; seal it as it is with `ciq lock seal " +
         path + "`, or tune again";
}

bool sealLockfile(const std::string &path, bool &alreadySealed, std::string &error) {
  auto l = readLockSet(path, error);
  if (!l)
    return false;
  alreadySealed = l->sealed;
  if (l->sealed)
    return true;
  auto j = parseLockJson(path, error); // the lock as it is, every key kept
  if (!j)
    return false;
  (*j)[kLockShaKey] = lockSha256Of(*j);
  removeKilledWritersTemps(path);
  return writeFileAtomically(path, j->dump(2) + "\n", error, /*durable=*/true);
}

std::optional<Lockfile> winnerFromJson(json j, const std::string &path, bool checkIntegrity, std::string &error) {
  Lockfile l;
  auto fail = [&](const std::string &e) {
    error = e + kRestore;
    return std::nullopt;
  };
  JsonFields top(j, path);
  top.opt("engine_version", l.engineVersion).opt("measured", l.measured);
  if (!top.ok())
    return fail(top.error());
  const json *compiler, *winner, *rendered, *nvcc, *ptxas;
  std::vector<json> acfs;
  top.need("target", l.target).object("compiler", compiler, true).object("winner", winner, true)
      .need("architectures", l.architectures).opt("created_at", l.createdAt).opt("gpu", l.gpu)
      .opt("search_space", l.searchSpace).opt("score", l.score).opt("kernel_units", l.kernelUnits);
  if (!top.ok())
    return fail(top.error());
  // A lock written before issue 41 may hold "" for a translation unit
  // without kernels (device functions only): no architecture at all.
  l.architectures.erase(std::remove(l.architectures.begin(), l.architectures.end(), ""), l.architectures.end());
  JsonFields cf(*compiler, path + ": compiler");
  cf.object("nvcc", nvcc).object("ptxas", ptxas);
  JsonFields nf(*nvcc, path + ": compiler: nvcc"), pf(*ptxas, path + ": compiler: ptxas");
  nf.opt("path", l.nvccPath).opt("version", l.nvccVersion);
  pf.opt("path", l.ptxasPath).opt("version", l.ptxasVersion);
  std::string ww = path + ": winner";
  JsonFields wf(*winner, ww);
  wf.need("candidate_id", l.candidateId).object("rendered", rendered, true).need("device_code_sha256", l.deviceCodeSha256)
      .need("candidate_hash", l.candidateHash).opt("controls", l.controls).opt("acfs", acfs);
  JsonFields rf(*rendered, ww + ".rendered");
  rf.need("ptxas", l.ptxasOptions).need("nvcc", l.nvccOptions).need("defines", l.defines)
      .opt("kernels", l.kernelDirectives).opt("units", l.unitOptions);
  for (const JsonFields *f : {&cf, &nf, &pf, &wf, &rf})
    if (!f->ok())
      return fail(f->error());
  for (size_t i = 0; i < acfs.size(); ++i) {
    LockAcf acf;
    JsonFields af(acfs[i], ww + ".acfs[" + std::to_string(i) + "]");
    af.need("stage", acf.stage).need("file", acf.file).need("sha256", acf.sha256);
    if (!af.ok())
      return fail(af.error());
    l.acfs.push_back(acf);
  }
  if (std::string why; !checkReadBack(l.score, j, path, why))
    return fail(why);
  if (!l.gpu.is_object() || !l.searchSpace.is_object() || !l.controls.is_object())
    return fail(path + ": \"gpu\", \"search_space\" and \"winner\": \"controls\" must be objects");
  std::vector<std::pair<std::string, std::string>> acfHashes;
  for (const auto &a : l.acfs)
    acfHashes.push_back({a.stage, a.sha256});
  if (checkIntegrity && candidateHashOf(l.ptxasOptions, l.nvccOptions, l.defines, acfHashes, l.kernelDirectives, l.unitOptions) !=
                            l.candidateHash) {
    error = ww + ": the rendered options and ACFs do not hash to candidate_hash " + l.candidateHash.substr(0, 16) +
            "...: the lock was edited by hand" + kRestore;
    return std::nullopt;
  }
  l.sealed = j.contains(kLockShaKey);
  for (const char *k : {"schema_version", "engine_version", "created_at", "target", "compiler", "measured",
                        "architectures", "gpu", "search_space", "winner", "score", "kernel_units", kLockShaKey})
    j.erase(k);
  l.extra = j;
  return l;
}

std::string defaultLockfilePath(const std::string &dir, const std::string &target) {
  std::string named = dir + "/" + target + ".ciq.lock", old = dir + "/ciq.lock";
  std::string err;
  if (!std::filesystem::exists(named) && std::filesystem::exists(old))
    if (auto l = readLockSet(old, err, /*checkIntegrity=*/false); !l || l->target == target)
      return old;
  return named;
}

CandidateMessage lockToCandidate(const Lockfile &l, const std::string &lockPath) {
  CandidateMessage c;
  c.candidateId = "lock:" + l.candidateId;
  c.candidateHash = l.candidateHash;
  c.ptxasOptions = l.ptxasOptions;
  c.nvccOptions = l.nvccOptions;
  c.defines = l.defines;
  c.kernelDirectives = l.kernelDirectives;
  c.unitOptions = l.unitOptions;
  std::string dir = lockPath.substr(0, lockPath.find_last_of('/') == std::string::npos ? 0 : lockPath.find_last_of('/'));
  if (dir.empty())
    dir = ".";
  for (const auto &a : l.acfs)
    c.acfs.push_back({a.stage, a.file.size() && a.file[0] == '/' ? a.file : dir + "/" + a.file, a.sha256});
  return c;
}

std::vector<std::string> lockCompileArgs(const Lockfile &l, const std::string &lockPath) {
  std::vector<std::string> args;
  for (const auto &o : l.ptxasOptions)
    args.push_back("-Xptxas=" + escapeNvccListItem(o));
  for (const auto &o : l.nvccOptions)
    args.push_back(o);
  CandidateMessage c = lockToCandidate(l, lockPath);
  for (const auto &a : c.acfs) {
    std::string err; // as ciq_apply_lock() renders it: `ciq lock acfs`
    std::string path = plainAcfPath(a.path, err).value_or(a.path);
    args.push_back(a.stage == "nvcc" ? "--apply-controls=" + path : "-Xptxas=--apply-controls=" + escapeNvccListItem(path));
  }
  for (const auto &d : l.defines)
    args.push_back("-D" + d);
  return args;
}

} // namespace ciq
