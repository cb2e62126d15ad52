// Flow lists: CSV rows `src,dst,bytes,start_ns` -> flow entries, every fault named by file, line and column.
#include "traces/flow_list.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace fabricsim::traces {

const char* const k_flow_ops[5] = {"write", "write_imm", "read", "send", "send_imm"};

namespace {

using core::config_error;

constexpr const char* k_columns[] = {"src", "dst", "bytes", "start_ns", "op"};
const std::string k_header = "src,dst,bytes,start_ns";
const std::string k_header_with_op = "src,dst,bytes,start_ns,op";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

class row_reader {
 public:
  row_reader(const std::string& source, size_t line) : m_where(source + ":" + std::to_string(line) + ": ") {}

  [[noreturn]] void fail(const std::string& column, const std::string& what) const {
    throw config_error(m_where + column + ": " + what);
  }

  // A non-negative decimal integer, with the reason when it is not one.
  uint64_t integer(const std::string& column, const std::string& text) const {
    if (text.empty()) fail(column, "expected a non-negative integer, got an empty field");
    uint64_t value = 0;
    const char* last = text.data() + text.size();
    const auto r = std::from_chars(text.data(), last, value);
    if (r.ec == std::errc::result_out_of_range) fail(column, text + " does not fit in 64 bits");
    if (r.ec != std::errc() || r.ptr != last) {
      double as_number = 0.0;
      const auto n = std::from_chars(text.data(), last, as_number);
      std::string why;
      if (n.ec == std::errc() && n.ptr == last) {
        if (as_number < 0) why = " (negative)";
        else if (as_number != std::floor(as_number)) why = " (not a whole number)";
        else why = " (write integers in plain decimal)";
      }
      fail(column, "expected a non-negative integer, got \"" + text + "\"" + why);
    }
    return value;
  }

  size_t host(const std::string& column, const std::string& text, size_t hosts) const {
    const uint64_t v = integer(column, text);
    if (v >= hosts)
      fail(column, "host " + text + " is out of range (hosts are 0 .. " + std::to_string(hosts - 1) + ")");
    return size_t(v);
  }

  double time_ns(const std::string& column, const std::string& text) const {
    if (text.empty()) fail(column, "expected a number of ns, got an empty field");
    double value = 0.0;
    const char* first = text.data() + (text[0] == '+' ? 1 : 0);
    const char* last = text.data() + text.size();
    const auto r = std::from_chars(first, last, value);
    if (first == last || r.ec != std::errc() || r.ptr != last || !std::isfinite(value))
      fail(column, "expected a number of ns, got \"" + text + "\"");
    if (value < 0) fail(column, text + " is negative (expected a start time >= 0 ns)");
    if (value > k_max_flow_start_ns) fail(column, text + " is out of range [0, 1e12] ns");
    return value;
  }

 private:
  std::string m_where;
};

}  // namespace

std::vector<flow_entry> parse_flow_list(const std::string& text, const std::string& source, size_t hosts) {
  std::vector<flow_entry> flows;
  std::istringstream in(text);
  std::string raw;
  size_t line = 0;
  bool header_seen = false;
  size_t columns = 4;
  std::string header = k_header;
  while (std::getline(in, raw)) {
    ++line;
    const std::string content = trim(raw);
    if (content.empty()) continue;
    row_reader row(source, line);
    if (!header_seen) {
      std::vector<std::string> names = split(content);
      std::string normalized;
      for (size_t i = 0; i < names.size(); ++i) normalized += (i ? "," : "") + names[i];
      if (normalized == k_header_with_op) {
        columns = 5;
        header = k_header_with_op;
      } else if (normalized != k_header) {
        row.fail("header", "expected \"" + k_header + "\" (or \"" + k_header_with_op +
                               "\") as the first line, got \"" + content + "\"");
      }
      header_seen = true;
      continue;
    }
    const std::vector<std::string> fields = split(content);
    if (fields.size() < columns)
      row.fail(k_columns[fields.size()], "missing (expected " + std::to_string(columns) + " columns " +
                                             header + ", got " + std::to_string(fields.size()) + ")");
    if (fields.size() > columns)
      row.fail("column " + std::to_string(columns + 1),
               "unexpected extra column (expected " + std::to_string(columns) + " columns " + header +
                   ", got " + std::to_string(fields.size()) + ")");
    flow_entry f;
    f.src = row.host("src", fields[0], hosts);
    f.dst = row.host("dst", fields[1], hosts);
    if (f.dst == f.src) row.fail("dst", "host " + fields[1] + " is also the src (a flow joins two different hosts)");
    f.bytes = row.integer("bytes", fields[2]);
    if (f.bytes == 0) row.fail("bytes", "0 (expected at least 1 byte)");
    if (f.bytes > k_max_flow_bytes)
      row.fail("bytes", fields[2] + " is out of range [1, " + std::to_string(k_max_flow_bytes) + "]");
    f.start_ns = row.time_ns("start_ns", fields[3]);
    if (columns == 5) {
      bool known = false;
      for (const char* op : k_flow_ops) known = known || fields[4] == op;
      if (!known)
        row.fail("op", "unknown operation \"" + fields[4] + "\" (expected write, write_imm, read, send or send_imm)");
      f.op = fields[4];
    }
    flows.push_back(f);
  }
  if (!header_seen)
    throw config_error(source + ":1: header: expected \"" + k_header + "\" as the first line, the file is empty");
  return flows;
}

std::vector<flow_entry> load_flow_list(const std::string& path, size_t hosts) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open the flow list (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw config_error(path + ": cannot read the flow list (" + std::strerror(errno) + ")");
  return parse_flow_list(text.str(), path, hosts);
}

}  // namespace fabricsim::traces
