#include "engine/winner/LockUnits.h"

#include <filesystem>

namespace ciq {
namespace {

std::string relativeTo(const std::string &source, const std::string &dir) {
  std::filesystem::path rel = std::filesystem::path(source).lexically_normal().lexically_relative(
      std::filesystem::path(dir).lexically_normal());
  return rel.empty() ? source : rel.generic_string();
}

} // namespace

std::string lockRelative(const std::string &source, const std::string &lockDir) { return relativeTo(source, lockDir); }

std::string kernelUnitsPhrase(const Lockfile &l, const std::string &kernel) {
  auto it = l.kernelUnits.find(kernel);
  if (it == l.kernelUnits.end())
    return "";
  std::string out;
  for (const auto &[unit, archs] : it->second) {
    std::string list;
    for (const auto &a : archs)
      list += (list.empty() ? "" : ", ") + a;
    out += (out.empty() ? "" : "; ") + unit + (list.empty() ? "" : " (" + list + ")");
  }
  return out;
}

nlohmann::json lockUnitsOf(const Evaluation &win, const std::string &lockDir) {
  nlohmann::json units = nlohmann::json::object();
  for (const auto &o : win.objects)
    if (!o.source.empty() && !o.deviceCodeSha256.empty())
      units[relativeTo(o.source, lockDir)] = o.deviceCodeSha256;
  return units;
}

KernelUnits kernelUnitsOf(const Evaluation &win, const std::string &lockDir) {
  KernelUnits units;
  for (const auto &d : win.rendered.kernels)
    for (const auto &o : win.objects) {
      auto it = o.directiveKernels.find(d.kernel);
      if (it != o.directiveKernels.end() && !o.source.empty())
        units[d.kernel][relativeTo(o.source, lockDir)] = it->second;
    }
  return units;
}

std::string unitDifferences(const Lockfile &l, const std::string &lockDir,
                            const std::vector<std::pair<std::string, std::string>> &built) {
  auto it = l.extra.find("device_code_units");
  if (it == l.extra.end() || !it->is_object() || it->empty() || built.empty())
    return "";
  std::string differ, match, unknown;
  auto add = [](std::string &list, const std::string &item) { list += (list.empty() ? "" : ", ") + item; };
  for (const auto &[source, sha] : built) {
    std::string rel = relativeTo(source, lockDir);
    auto want = it->find(rel);
    if (want == it->end() || !want->is_string())
      add(unknown, rel);
    else if (want->get<std::string>() != sha)
      add(differ, rel + " (" + sha.substr(0, 12) + "... against the winner's " + want->get<std::string>().substr(0, 12) +
                      "...)");
    else
      add(match, rel);
  }
  std::string out;
  if (!differ.empty())
    out = "its device code differs in " + differ;
  if (!unknown.empty())
    out += (out.empty() ? "" : "; ") + std::string("the lock has no record of ") + unknown;
  if (!match.empty())
    out += (out.empty() ? "" : "; ") + match + " match" + (match.find(", ") == std::string::npos ? "es" : "");
  return out;
}

} // namespace ciq
