#include "engine/winner/LockSectionCheck.h"

#include "common/DeviceCode.h"
#include "common/JsonRead.h"

#include <algorithm>
#include <cstdlib>

namespace ciq {

std::vector<std::string> lockedSectionLines(const Lockfile &l, const std::string &arch) {
  std::vector<std::string> out;
  auto it = l.extra.find("device_code_sections");
  if (it == l.extra.end() || !it->is_object())
    return out;
  for (const auto &[unit, lines] : it->items())
    if (lines.is_array())
      for (const auto &line : lines)
        if (line.is_string()) {
          const auto &s = line.get_ref<const std::string &>();
          if (arch.empty() || archFamilyOf(s.substr(0, s.find(' '))) == archFamilyOf(arch))
            out.push_back(s);
        }
  return out;
}

bool identityIsOwnArchitecture(const Lockfile &l) {
  if (l.section.empty() || archFamilyOf(stringAt(l.extra, "device_code_architecture")) == archFamilyOf(l.section))
    return true;
  auto all = lockedSectionLines(l);
  return all.size() == lockedSectionLines(l, l.section).size();
}

namespace {

int smNumber(const std::string &arch) { return std::atoi(archFamilyOf(arch).c_str() + 3); }

// One section: the build's SASS of its architecture against the lines the
// tune recorded for it, or against the hash when that covers it alone.
std::optional<ArchCheck> checkOne(const Lockfile &s, const std::vector<std::string> &objects, std::string &error) {
  ArchCheck c;
  c.arch = s.section;
  c.candidateId = s.candidateId;
  std::vector<std::string> built, hashes;
  for (const auto &o : objects) {
    auto dc = readDeviceCode(o, error, smNumber(s.section));
    if (!dc)
      return std::nullopt;
    built.insert(built.end(), dc->sections.begin(), dc->sections.end());
    hashes.push_back(dc->sha256);
  }
  if (built.empty()) {
    c.state = ArchCheck::State::Differs;
    c.detail = "the build has no " + s.section + " SASS (is " + s.section + " in its architectures?)";
    return c;
  }
  auto locked = lockedSectionLines(s, s.section);
  if (!locked.empty()) {
    std::string diff = deviceCodeSectionDifferences(locked, built);
    c.state = diff.empty() ? ArchCheck::State::Matches : ArchCheck::State::Differs;
    c.detail = diff;
    return c;
  }
  if (identityIsOwnArchitecture(s)) {
    bool same = combineDeviceCodeHashes(hashes) == s.deviceCodeSha256;
    c.state = same ? ArchCheck::State::Matches : ArchCheck::State::Differs;
    c.detail = same ? "" : "its device code is not the section's " + s.deviceCodeSha256.substr(0, 16) + "...";
    return c;
  }
  c.detail = "the section records no device code of " + s.section +
             " alone (device_code_sections); tune again to record it";
  return c;
}

} // namespace

std::optional<std::vector<ArchCheck>> checkSections(const LockSet &set, const std::vector<std::string> &objects,
                                                    std::string &error) {
  std::vector<ArchCheck> out;
  for (const auto &s : set.sections) {
    auto c = checkOne(s, objects, error);
    if (!c)
      return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

} // namespace ciq
