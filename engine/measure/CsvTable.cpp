#include "engine/measure/CsvTable.h"

#include <csv.h>

namespace ciq {

int CsvTable::column(const std::string &name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name)
      return int(i);
  return -1;
}

const std::string &CsvTable::cell(size_t r, const std::string &name) const {
  static const std::string empty;
  int c = column(name);
  if (c < 0 || r >= rows.size() || size_t(c) >= rows[r].size())
    return empty;
  return rows[r][size_t(c)];
}

namespace {
struct Collector {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> current;
};
void onField(void *data, size_t len, void *user) {
  auto *c = static_cast<Collector *>(user);
  c->current.emplace_back(static_cast<const char *>(data), len);
}
void onRecord(int, void *user) {
  auto *c = static_cast<Collector *>(user);
  c->records.push_back(std::move(c->current));
  c->current.clear();
}
} // namespace

std::optional<CsvTable> parseCsv(const std::string &text, std::string &error) {
  struct csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
    error = "cannot initialise the CSV parser (libcsv)";
    return std::nullopt;
  }
  Collector col;
  size_t done = csv_parse(&parser, text.data(), text.size(), onField, onRecord, &col);
  bool ok = done == text.size() && csv_fini(&parser, onField, onRecord, &col) == 0;
  if (!ok) {
    error = std::string("malformed CSV (") + csv_strerror(csv_error(&parser)) +
            ") near byte " + std::to_string(done);
    csv_free(&parser);
    return std::nullopt;
  }
  csv_free(&parser);
  CsvTable table;
  if (col.records.empty())
    return table;
  table.header = std::move(col.records.front());
  for (size_t i = 1; i < col.records.size(); ++i) {
    auto &r = col.records[i];
    if (r.size() < table.header.size())
      r.resize(table.header.size());
    table.rows.push_back(std::move(r));
  }
  return table;
}

} // namespace ciq
