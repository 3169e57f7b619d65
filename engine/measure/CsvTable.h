// RFC 4180 CSV read with libcsv (quoted fields, embedded commas, quotes and
// newlines): results.csv and NVBench's --csv output.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;   // each padded to header.size()

  // Index of the first column named `name`, or -1.
  int column(const std::string &name) const;
  // The cell of row `r` in column `name`; "" when the column is absent.
  const std::string &cell(size_t r, const std::string &name) const;
};

// Parses CSV text whose first record is the header. nullopt with a one-line
// error (libcsv's reason and the byte offset) on malformed input.
std::optional<CsvTable> parseCsv(const std::string &text, std::string &error);

} // namespace ciq
