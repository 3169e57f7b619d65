#include "Lockfile.h"
#include "NvccList.h"
#include "Sha256.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace ciq {
using nlohmann::json;

std::string candidateHashOf(const std::vector<std::string> &ptxas, const std::vector<std::string> &nvcc,
                            const std::vector<std::string> &defines,
                            const std::vector<std::pair<std::string, std::string>> &acfStageAndSha256) {
  json acf = json::array();
  for (const auto &[stage, sha] : acfStageAndSha256)
    acf.push_back({stage, sha});
  json j = {{"ptxas", ptxas}, {"nvcc", nvcc}, {"defines", defines}, {"acfs", acf}};
  return sha256Hex(j.dump());
}

json lockToJson(const Lockfile &l) {
  json acfs = json::array();
  for (const auto &a : l.acfs)
    acfs.push_back({{"stage", a.stage}, {"file", a.file}, {"sha256", a.sha256}});
  json j = l.extra.is_object() ? l.extra : json::object();
  j["schema_version"] = l.schemaVersion;
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
  j["score"] = l.score;
  return j;
}

namespace {

const char kRestore[] = "; restore the lockfile from version control or tune again";

// Reads a required member of the given JSON type, or says which key is wrong.
template <typename T>
bool need(const json &obj, const char *key, T &out, const std::string &where, std::string &error) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    error = where + ": missing key '" + key + "'" + kRestore;
    return false;
  }
  try {
    out = it->get<T>();
  } catch (const json::exception &) {
    std::string expected = std::is_same_v<T, std::vector<std::string>> ? "an array of strings"
                           : std::is_same_v<T, std::string>            ? "a string"
                           : std::is_same_v<T, int>                    ? "an integer"
                                                                       : "an object";
    error = where + ": key '" + key + "' must be " + expected + " (it is " + it->dump() + ")" + kRestore;
    return false;
  }
  return true;
}

// The file as one JSON object, or the reason it is not one.
std::optional<json> parseLockJson(const std::string &path, std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error = path + ": is a directory; give the lockfile itself (ciq.lock)";
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
  try {
    json j = json::parse(ss.str());
    if (j.is_object())
      return j;
    error = path + ": malformed lockfile (a JSON " + std::string(j.type_name()) + ", not an object)" + kRestore;
  } catch (const json::parse_error &e) {
    std::string what = e.what(); // "[json.exception.parse_error.101] parse error at line 3, column 1: ..."
    what = what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
    error = path + ": malformed lockfile (JSON " + what + ")" + kRestore;
  }
  return std::nullopt;
}

} // namespace

std::optional<Lockfile> readLockfile(const std::string &path, std::string &error, bool checkIntegrity) {
  auto parsed = parseLockJson(path, error);
  if (!parsed)
    return std::nullopt;
  json &j = *parsed;
  Lockfile l;
  std::string w = path;
  if (!need(j, "schema_version", l.schemaVersion, w, error))
    return std::nullopt;
  if (l.schemaVersion != kLockSchemaVersion) {
    error = path + ": schema_version " + std::to_string(l.schemaVersion) + " is not supported (this ciq reads " +
            std::to_string(kLockSchemaVersion) + "); use the ciq that wrote it (" +
            j.value("engine_version", std::string("version unknown")) + ") or tune again with this one";
    return std::nullopt;
  }
  json compiler, winner, rendered;
  if (!need(j, "target", l.target, w, error) || !need(j, "compiler", compiler, w, error) ||
      !need(j, "winner", winner, w, error) ||
      !need(j, "architectures", l.architectures, w, error))
    return std::nullopt;
  l.engineVersion = j.value("engine_version", "");
  l.createdAt = j.value("created_at", "");
  l.gpu = j.value("gpu", json::object());
  l.searchSpace = j.value("search_space", json::object());
  l.score = j.value("score", json::object());
  if (compiler.contains("nvcc")) {
    l.nvccPath = compiler["nvcc"].value("path", "");
    l.nvccVersion = compiler["nvcc"].value("version", "");
  }
  if (compiler.contains("ptxas")) {
    l.ptxasPath = compiler["ptxas"].value("path", "");
    l.ptxasVersion = compiler["ptxas"].value("version", "");
  }
  std::string ww = w + ": winner";
  json acfs;
  if (!need(winner, "candidate_id", l.candidateId, ww, error) ||
      !need(winner, "rendered", rendered, ww, error) ||
      !need(winner, "device_code_sha256", l.deviceCodeSha256, ww, error) ||
      !need(rendered, "ptxas", l.ptxasOptions, ww + ".rendered", error) ||
      !need(rendered, "nvcc", l.nvccOptions, ww + ".rendered", error) ||
      !need(rendered, "defines", l.defines, ww + ".rendered", error))
    return std::nullopt;
  if (!need(winner, "candidate_hash", l.candidateHash, ww, error))
    return std::nullopt;
  l.controls = winner.value("controls", json::object());
  for (const auto &a : winner.value("acfs", json::array())) {
    LockAcf acf;
    if (!need(a, "stage", acf.stage, ww + ".acfs", error) ||
        !need(a, "file", acf.file, ww + ".acfs", error) ||
        !need(a, "sha256", acf.sha256, ww + ".acfs", error))
      return std::nullopt;
    l.acfs.push_back(acf);
  }
  std::vector<std::pair<std::string, std::string>> acfHashes;
  for (const auto &a : l.acfs)
    acfHashes.push_back({a.stage, a.sha256});
  if (checkIntegrity && candidateHashOf(l.ptxasOptions, l.nvccOptions, l.defines, acfHashes) != l.candidateHash) {
    error = ww + ": the rendered options and ACFs do not hash to candidate_hash " + l.candidateHash.substr(0, 16) +
            "...: the lock was edited by hand" + kRestore;
    return std::nullopt;
  }
  for (const char *k : {"schema_version", "engine_version", "created_at", "target", "compiler",
                        "architectures", "gpu", "search_space", "winner", "score"})
    j.erase(k);
  l.extra = j;
  return l;
}

bool writeLockfile(const std::string &path, const Lockfile &l, std::string &error) {
  // Write beside the target and rename, so a reader never sees half a lock.
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << lockToJson(l).dump(2) << "\n";
    if (!out) {
      error = "cannot write " + tmp;
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot rename " + tmp + " to " + path;
    return false;
  }
  return true;
}

CandidateMessage lockToCandidate(const Lockfile &l, const std::string &lockPath) {
  CandidateMessage c;
  c.candidateId = "lock:" + l.candidateId;
  c.candidateHash = l.candidateHash;
  c.ptxasOptions = l.ptxasOptions;
  c.nvccOptions = l.nvccOptions;
  c.defines = l.defines;
  std::string dir = lockPath.substr(0, lockPath.find_last_of('/') == std::string::npos ? 0 : lockPath.find_last_of('/'));
  if (dir.empty())
    dir = ".";
  for (const auto &a : l.acfs)
    c.acfs.push_back({a.stage, a.file.size() && a.file[0] == '/' ? a.file : dir + "/" + a.file, a.sha256});
  c.wantStats = false;
  return c;
}

std::vector<std::string> lockCompileArgs(const Lockfile &l, const std::string &lockPath) {
  std::vector<std::string> args;
  for (const auto &o : l.ptxasOptions)
    args.push_back("-Xptxas=" + escapeNvccListItem(o));
  for (const auto &o : l.nvccOptions)
    args.push_back(o);
  CandidateMessage c = lockToCandidate(l, lockPath);
  for (const auto &a : c.acfs)
    args.push_back(a.stage == "nvcc" ? "--apply-controls=" + a.path : "-Xptxas=--apply-controls=" + escapeNvccListItem(a.path));
  for (const auto &d : l.defines)
    args.push_back("-D" + d);
  return args;
}

} // namespace ciq
