#include "common/JournalLines.h"
#include "common/JsonRead.h"
#include "common/Sha256.h"

#include <filesystem>
#include <fstream>
#include <optional>

namespace ciq {
using nlohmann::json;

namespace {

// Every line is {"line_sha256":"<16 hex>",<the object's other members>}: the
// hash covers the object's own text, so a line damaged anywhere (NULs, a
// flipped byte, a cut) is detected without trusting how JSON round-trips.
const char kSumKey[] = "{\"line_sha256\":\"";
constexpr size_t kSumHex = 16;

std::string withChecksum(const std::string &object) {
  if (object.size() < 3)
    return object;
  return kSumKey + sha256Hex(object).substr(0, kSumHex) + "\"," + object.substr(1);
}

// The object's text when the checksum holds; nullopt when the line is damaged.
// A line without the checksum (journals of earlier ciq versions) is taken as is.
std::optional<std::string> verifiedObject(const std::string &line) {
  size_t head = sizeof kSumKey - 1;
  if (line.compare(0, head, kSumKey) != 0)
    return line.find("line_sha256") == std::string::npos ? std::optional<std::string>(line) : std::nullopt;
  if (line.size() < head + kSumHex + 3 || line.compare(head + kSumHex, 2, "\",") != 0)
    return std::nullopt;
  std::string object = "{" + line.substr(head + kSumHex + 2);
  if (sha256Hex(object).substr(0, kSumHex) != line.substr(head, kSumHex))
    return std::nullopt;
  return object;
}

} // namespace

std::string journalLineText(const json &object) {
  return withChecksum(object.dump(-1, ' ', false, json::error_handler_t::replace));
}

bool readJournalLines(const std::string &path, std::vector<JournalLine> &lines, std::vector<std::string> &damaged,
                      std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return error = path + ": is a directory, not a journal", false;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return true; // no journal yet
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  for (int lineNo = 1; pos < text.size(); ++lineNo) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) // cut short by a kill mid-write, never fsync'd: not a record
      break;
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty())
      continue;
    std::string where = path + ":" + std::to_string(lineNo);
    auto object = verifiedObject(line);
    json j;
    std::string why;
    if (!object) {
      damaged.push_back(where + ": damaged (its line_sha256 does not match its text)");
      continue;
    }
    if (!parseJson(*object, where, j, why) || !j.is_object()) {
      damaged.push_back(why.empty() ? where + ": not a JSON object" : why);
      continue;
    }
    std::string op;
    JsonFields f(j, where);
    f.need("op", op);
    if (!f.ok()) {
      damaged.push_back(f.error());
      continue;
    }
    lines.push_back({lineNo, op, std::move(j)});
  }
  return true;
}

} // namespace ciq
