#include "common/LockSections.h"

#include "common/FileIO.h"
#include "common/JsonRead.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace ciq {
using nlohmann::json;

namespace {

const char kRestore[] = "; restore the lockfile from version control or tune again";

// The keys of a section's body that the lock's top level holds instead.
const char *const kTopKeys[] = {"schema_version", "target", "architectures", kLockShaKey};

std::string joined(const std::vector<std::string> &v, const char *sep = ", ") {
  std::string out;
  for (const auto &s : v)
    out += (out.empty() ? "" : sep) + s;
  return out;
}

// Schema 1: the whole file is one winner, for every architecture it names.
std::optional<LockSet> readOneWinner(json &j, const std::string &path, bool checkIntegrity, std::string &error) {
  auto l = winnerFromJson(j, path, checkIntegrity, error);
  if (!l || (checkIntegrity && !checkLockSha256(j, path, error)))
    return std::nullopt;
  l->schemaVersion = kLockSchemaOneWinner;
  LockSet set;
  set.schemaVersion = kLockSchemaOneWinner;
  set.target = l->target;
  set.engineVersion = l->engineVersion;
  set.createdAt = l->createdAt;
  set.sealed = l->sealed;
  set.sections.push_back(*l);
  return set;
}

// One section of a schema-2 lock, read as a winner of its own.
std::optional<Lockfile> readSection(const std::string &arch, const json &body, const LockSet &set,
                                    const std::string &path, bool checkIntegrity, std::string &error) {
  std::string where = path + ": architectures: " + arch;
  if (!isArchitectureName(arch)) {
    error = path + ": architectures: '" + arch + "' is not an architecture name (sm_80, sm_90, sm_90a, ...)" + kRestore;
    return std::nullopt;
  }
  if (!body.is_object()) {
    error = where + ": a JSON " + std::string(body.type_name()) + ", not a section object" + kRestore;
    return std::nullopt;
  }
  json w = body;
  w["target"] = set.target;
  w["architectures"] = {arch};
  auto l = winnerFromJson(w, where, checkIntegrity, error);
  if (!l)
    return std::nullopt;
  l->section = arch;
  l->schemaVersion = kLockSchemaVersion;
  l->sealed = set.sealed;
  return l;
}

} // namespace

bool isArchitectureName(const std::string &arch) {
  static const std::regex name("^sm_[0-9]{2,3}[af]?$");
  return std::regex_match(arch, name);
}

std::string archFamilyOf(const std::string &arch) {
  if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f'))
    return arch.substr(0, arch.size() - 1);
  return arch;
}

const Lockfile *LockSet::sectionFor(const std::string &arch) const {
  if (oneWinner())
    return &sections[0];
  for (const auto &s : sections)
    if (archFamilyOf(s.section) == archFamilyOf(arch))
      return &s;
  return nullptr;
}

std::vector<std::string> LockSet::names() const {
  std::vector<std::string> out;
  for (const auto &s : sections)
    out.push_back(s.section.empty() ? "every architecture" : s.section);
  return out;
}

std::string definesConflict(const std::vector<Lockfile> &sections, const std::string &where) {
  for (size_t i = 1; i < sections.size(); ++i)
    if (sections[i].defines != sections[0].defines)
      return where + ": section " + sections[0].section + " has the -D parameters [" + joined(sections[0].defines, " ") +
             "] and " + sections[i].section + " [" + joined(sections[i].defines, " ") +
             "]: a build preprocesses each source once for all its architectures, so one lock cannot mix them; "
             "tune both architectures with the same parameters, or give each its own lockfile";
  return "";
}

std::optional<LockSet> readLockSet(const std::string &path, std::string &error, bool checkIntegrity) {
  auto parsed = parseLockJson(path, error);
  if (!parsed)
    return std::nullopt;
  json &j = *parsed;
  LockSet set;
  JsonFields top(j, path);
  top.need("schema_version", set.schemaVersion).opt("engine_version", set.engineVersion);
  if (!top.ok())
    return error = top.error() + kRestore, std::nullopt;
  if (set.schemaVersion == kLockSchemaOneWinner)
    return readOneWinner(j, path, checkIntegrity, error);
  if (set.schemaVersion != kLockSchemaVersion) {
    error = path + ": schema_version " + std::to_string(set.schemaVersion) + " is not supported (this ciq reads " +
            std::to_string(kLockSchemaOneWinner) + " and " + std::to_string(kLockSchemaVersion) +
            "); use the ciq that wrote it (" +
            (set.engineVersion.empty() ? std::string("version unknown") : set.engineVersion) +
            ") or tune again with this one";
    return std::nullopt;
  }
  const json *archs = nullptr;
  top.need("target", set.target).opt("created_at", set.createdAt).object("architectures", archs, true);
  if (!top.ok())
    return error = top.error() + kRestore, std::nullopt;
  if (archs->empty())
    return error = path + ": architectures: no section; tune to write one" + kRestore, std::nullopt;
  set.sealed = j.contains(kLockShaKey);
  for (auto it = archs->begin(); it != archs->end(); ++it) {
    auto s = readSection(it.key(), it.value(), set, path, checkIntegrity, error);
    if (!s)
      return std::nullopt;
    set.sections.push_back(*s);
  }
  // sm_90 and sm_90a are one GPU: a compile for either takes the first
  // section of the family (sectionFor), so a second one would never apply.
  // A tune replaces the family's section; only a hand-made lock has two.
  std::map<std::string, std::string> family;
  for (const auto &s : set.sections)
    if (auto [it, fresh] = family.emplace(archFamilyOf(s.section), s.section); !fresh)
      return error = path + ": architectures: sections " + it->second + " and " + s.section +
                     " are for one GPU, and a compile for it takes one of them; keep one" + kRestore,
             std::nullopt;
  if (std::string c = definesConflict(set.sections, path + ": architectures"); !c.empty())
    return error = c, std::nullopt;
  if (checkIntegrity && !checkLockSha256(j, path, error))
    return std::nullopt;
  for (const char *k : {"schema_version", "engine_version", "created_at", "target", "architectures", kLockShaKey})
    j.erase(k);
  set.extra = j;
  return set;
}

json lockSetToJson(const LockSet &set) {
  json j = set.extra.is_object() ? set.extra : json::object();
  j["schema_version"] = kLockSchemaVersion;
  j["target"] = set.target;
  j["engine_version"] = set.engineVersion;
  j["created_at"] = set.createdAt;
  json archs = json::object();
  for (const auto &s : set.sections) {
    json body = winnerToJson(s);
    for (const char *k : kTopKeys)
      body.erase(k);
    archs[s.section] = body;
  }
  j["architectures"] = archs;
  j[kLockShaKey] = lockSha256Of(j);
  return j;
}

bool writeLockSet(const std::string &path, const LockSet &set, std::string &error, int *errNo) {
  // Written beside the target and renamed (fsync'd), so a reader never sees
  // half a lock, and the errno says what went wrong.
  removeKilledWritersTemps(path);
  return writeFileAtomically(path, lockSetToJson(set).dump(2) + "\n", error, /*durable=*/true, errNo);
}

LockSet lockSetOf(const Lockfile &l) {
  LockSet set;
  set.target = l.target;
  set.engineVersion = l.engineVersion;
  set.createdAt = l.createdAt;
  std::vector<std::string> archs = l.section.empty() ? l.architectures : std::vector<std::string>{l.section};
  std::set<std::string> seen;
  for (const auto &a : archs) {
    if (!seen.insert(archFamilyOf(a)).second)
      continue;
    Lockfile s = l;
    s.section = a;
    s.architectures = {a};
    s.schemaVersion = kLockSchemaVersion;
    set.sections.push_back(s);
  }
  return set;
}

bool mergeSections(LockSet &into, const LockSet &added, SectionMerge &merge, std::string &error) {
  // Another target's winners are not this tune's to discard: a lockfile
  // shared by two targets (one LOCKFILE for both) lost every section of the
  // first target, silently.
  if (!into.sections.empty() && into.target != added.target)
    return error = "holds the lock of target '" + into.target + "' (" + joined(into.names()) +
                   "), and this tune's winner is of target '" + added.target + "', so writing it would discard " +
                   "that target's winners; give '" + added.target + "' a lockfile of its own (lockfile:, ciq_tune(... " +
                   "LOCKFILE)), or move that lock away",
           false;
  std::map<std::string, Lockfile> byArch;
  if (into.oneWinner())
    merge.replacedOneWinner = true; // its winner claimed every architecture: no section of it can stay
  else
    for (const auto &s : into.sections)
      byArch[archFamilyOf(s.section)] = s;
  for (const auto &s : added.sections) {
    // The same section again (a resume of a finished search writes its
    // winner once more) replaces nothing: "replaced" told of a change.
    auto old = byArch.find(archFamilyOf(s.section));
    if (old != byArch.end() && winnerToJson(old->second) != winnerToJson(s))
      merge.replaced.push_back(s.section);
    byArch[archFamilyOf(s.section)] = s;
  }
  std::vector<Lockfile> sections;
  for (auto &[arch, s] : byArch)
    sections.push_back(s);
  // The new winner first, so the message names it against the one it clashes with.
  std::vector<Lockfile> order = {added.sections.front()};
  for (const auto &s : sections)
    if (s.section != added.sections.front().section)
      order.push_back(s);
  if (std::string c = definesConflict(order, "the new winner"); !c.empty())
    return error = c, false;
  into.schemaVersion = kLockSchemaVersion;
  into.target = added.target;
  into.engineVersion = added.engineVersion;
  into.createdAt = added.createdAt;
  into.sections = sections;
  return true;
}

std::vector<std::string> lockSetCompileArgs(const LockSet &set, const std::string &lockPath) {
  std::vector<std::string> out;
  for (const auto &s : set.sections)
    for (auto &a : lockCompileArgs(s, lockPath))
      if (std::find(out.begin(), out.end(), a) == out.end())
        out.push_back(a);
  return out;
}

std::optional<Lockfile> readLockSection(const std::string &path, const std::string &arch, std::string &error) {
  auto set = readLockSet(path, error);
  if (!set)
    return std::nullopt;
  if (const Lockfile *s = arch.empty() ? nullptr : set->sectionFor(arch))
    return *s;
  if (set->sections.size() == 1 && (arch.empty() || set->oneWinner()))
    return set->sections.front();
  error = path + ": no section for " + (arch.empty() ? std::string("the architecture measured here") : arch) +
          " (the lock has " + joined(set->names()) + "); run this on a GPU of one of those, or tune for " +
          (arch.empty() ? std::string("it") : arch) + " first";
  return std::nullopt;
}

bool writeLockSection(const std::string &path, const Lockfile &section, std::string &error) {
  auto set = readLockSet(path, error);
  if (!set)
    return false;
  if (set->oneWinner())
    return writeLockfile(path, section, error); // one winner: the lock is that winner, now in sections
  for (auto &s : set->sections)
    if (s.section == section.section)
      s = section;
  return writeLockSet(path, *set, error);
}

// The one-winner API over sections: a lock of one section reads as that
// winner; several need a reader that picks by architecture.
std::optional<Lockfile> readLockfile(const std::string &path, std::string &error, bool checkIntegrity) {
  auto set = readLockSet(path, error, checkIntegrity);
  if (!set)
    return std::nullopt;
  if (set->sections.size() != 1) {
    error = path + ": holds a section per architecture (" + joined(set->names()) +
            "); this reads one winner: name the architecture, or use a command that reads every section";
    return std::nullopt;
  }
  return set->sections.front();
}

json lockToJson(const Lockfile &l) { return lockSetToJson(lockSetOf(l)); }

bool writeLockfile(const std::string &path, const Lockfile &l, std::string &error, int *errNo) {
  LockSet set = lockSetOf(l);
  if (set.sections.empty())
    return error = path + ": the winner names no architecture, so the lock would have no section", false;
  return writeLockSet(path, set, error, errNo);
}

} // namespace ciq
