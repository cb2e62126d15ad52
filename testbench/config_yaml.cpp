// Scenario-file mapping: YAML onto params structs, `--set` overrides, key listings for the documentation.
#include "testbench/config_yaml.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <system_error>

namespace fabricsim::testbench {

namespace {

using core::config_error;
using core::field_info;

// 2^64 as a double: any bound at or above it leaves a uint64_t field unbounded.
constexpr double k_two_to_64 = 18446744073709551616.0;

// Shortest text that reads back as the same double, as YAML would accept it: 100000 rather than 1e+05, but
// 1e9 rather than 1000000000 (round powers of ten are easier to read as exponents).
std::string format_number(double x) {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  if (x == std::floor(x) && std::fabs(x) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", x == 0.0 ? 0.0 : x);  // no "-0"
    std::string plain = buf;
    if (std::fabs(x) < 1e6) return plain;
    const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
    std::string sci(buf, r.ptr);  // "1e+09" -> "1e9"
    const auto e = sci.find('e');
    if (e != std::string::npos) {
      size_t digits = e + 1;
      if (digits < sci.size() && sci[digits] == '+') sci.erase(digits, 1);
      while (digits + 1 < sci.size() && sci[digits] == '0') sci.erase(digits, 1);
    }
    return sci.size() < plain.size() ? sci : plain;
  }
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

std::string with_unit(const std::string& text, const char* unit) {
  return (unit == nullptr || *unit == '\0') ? text : text + " " + unit;
}

// "a number in Gb/s": what a message expects.
std::string in_unit(const std::string& kind, const char* unit) {
  return (unit == nullptr || *unit == '\0') ? kind : kind + " in " + unit;
}

// The effective bounds of an integer field: the declared range clipped to what uint64_t holds.
struct uint_bounds {
  uint64_t lo = 0;
  uint64_t hi = UINT64_MAX;
};

uint_bounds integer_bounds(const field_info& f) {
  uint_bounds b;
  if (f.min > 0) b.lo = f.min >= k_two_to_64 ? UINT64_MAX : uint64_t(std::ceil(f.min));
  if (f.max < 0) b.hi = 0;  // a declaration bug; every value is then out of range
  else if (f.max < k_two_to_64) b.hi = uint64_t(std::floor(f.max));
  return b;
}

// "[1, 3200]", ">= 0", "<= 7", or "" when the type's own limits are the only ones.
std::string range_text(double lo, double hi, bool lo_limited, bool hi_limited) {
  if (lo_limited && hi_limited) return "[" + format_number(lo) + ", " + format_number(hi) + "]";
  if (lo_limited) return ">= " + format_number(lo);
  if (hi_limited) return "<= " + format_number(hi);
  return "";
}

std::string integer_range_text(const field_info& f) {
  const uint_bounds b = integer_bounds(f);
  const bool lo_limited = b.lo > 0;
  const bool hi_limited = b.hi < UINT64_MAX;
  if (lo_limited && hi_limited) return "[" + std::to_string(b.lo) + ", " + std::to_string(b.hi) + "]";
  if (lo_limited) return ">= " + std::to_string(b.lo);
  if (hi_limited) return "[0, " + std::to_string(b.hi) + "]";
  return "";
}

std::string number_range_text(const field_info& f) {
  return range_text(f.min, f.max, std::isfinite(f.min), std::isfinite(f.max));
}

// "is out of range [1, 3200] Gb/s", or "is out of range (must be >= 0 ns)" for a one-sided bound.
std::string out_of_range(const std::string& range, const char* unit) {
  if (!range.empty() && range.front() == '[') return "is out of range " + with_unit(range, unit);
  return "is out of range (must be " + with_unit(range, unit) + ")";
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The known name `given` most likely meant: a few typos away, or the name without its unit suffix
// ("rate" for "rate_gbps"). Empty when nothing is close.
std::string nearest(const std::string& given, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  const size_t allowed = std::max<size_t>(1, std::min<size_t>(3, given.size() / 3));
  for (const auto& k : known) {
    size_t d = edit_distance(given, k);
    if (k.size() > given.size() && k.compare(0, given.size() + 1, given + "_") == 0) d = std::min<size_t>(d, 1);
    if (d <= allowed && d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The names of the fields a visit walks, in order.
class name_lister : public core::param_visitor {
 public:
  std::vector<std::string> names;
  void field(const field_info& f, uint64_t&) override { names.emplace_back(f.name); }
  void field(const field_info& f, double&) override { names.emplace_back(f.name); }
  void field(const field_info& f, bool&) override { names.emplace_back(f.name); }
  void field(const field_info& f, std::string&) override { names.emplace_back(f.name); }
};

class doc_lister : public core::param_visitor {
 public:
  std::vector<key_doc> docs;
  void field(const field_info& f, uint64_t& v) override {
    add(f, "integer", std::to_string(v), integer_range_text(f));
  }
  void field(const field_info& f, double& v) override { add(f, "number", format_number(v), number_range_text(f)); }
  void field(const field_info& f, bool& v) override { add(f, "bool", v ? "true" : "false", ""); }
  void field(const field_info& f, std::string& v) override {
    add(f, "string", v, fmt::format("{}", fmt::join(f.choices, ", ")));
  }

 private:
  void add(const field_info& f, const char* type, std::string value, std::string range) {
    docs.push_back({f.name, type, f.unit, std::move(value), std::move(range), f.description});
  }
};

// One key: value pair of the mapping being applied.
struct entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// Sets each visited field from its entry in the mapping, if there is one; fields without one keep their value.
class yaml_reader : public core::param_visitor {
 public:
  yaml_reader(const std::vector<entry>& entries, const yaml_source& source, const std::string& section)
      : m_entries(entries), m_source(source), m_section(section) {}

  void field(const field_info& f, uint64_t& value) override {
    if (const entry* e = find(f.name)) value = parse_integer(*e, f);
  }
  void field(const field_info& f, double& value) override {
    if (const entry* e = find(f.name)) value = parse_number(*e, f);
  }
  void field(const field_info& f, bool& value) override {
    if (const entry* e = find(f.name)) value = parse_bool(*e, f);
  }
  void field(const field_info& f, std::string& value) override {
    if (const entry* e = find(f.name)) value = parse_string(*e, f);
  }

 private:
  const entry* find(const char* name) const {
    for (const auto& e : m_entries)
      if (e.key == name) {
        if (m_source.provenance) {
          const YAML::Mark mark = e.value.IsNull() || e.value.Mark().is_null() ? e.key_node.Mark() : e.value.Mark();
          const std::string path = join_key(m_section, e.key);
          (*m_source.provenance)[path] = m_source.where(path, mark);
        }
        return &e;
      }
    return nullptr;
  }

  [[noreturn]] void fail(const entry& e, const std::string& what) const {
    // The value's own position when it has one (a null value has none worth showing), else the key's.
    const YAML::Mark mark = e.value.IsNull() || e.value.Mark().is_null() ? e.key_node.Mark() : e.value.Mark();
    throw config_error(m_source.message(join_key(m_section, e.key), mark, what));
  }

  // The scalar text of an entry, or an error saying what kind of value was expected.
  const std::string& scalar(const entry& e, const std::string& expected) const {
    if (!e.value.IsScalar()) fail(e, "expected " + expected + ", got " + yaml_kind(e.value));
    return e.value.Scalar();
  }

  uint64_t parse_integer(const entry& e, const field_info& f) const {
    const std::string expected = in_unit("a non-negative integer", f.unit);
    const std::string& text = scalar(e, expected);
    const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char* first = text.data() + (hex ? 2 : 0);
    const char* last = text.data() + text.size();
    uint64_t value = 0;
    const auto r = std::from_chars(first, last, value, hex ? 16 : 10);
    const bool digits_only = first != last && std::all_of(first, last, [hex](char c) {
      return hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0 : (c >= '0' && c <= '9');
    });
    if (digits_only && r.ec == std::errc::result_out_of_range)
      fail(e, text + " does not fit in 64 bits (the largest integer is " + std::to_string(UINT64_MAX) + ")");
    if (!digits_only || r.ec != std::errc() || r.ptr != last) {
      double as_number = 0.0;
      const auto n = std::from_chars(text.data(), last, as_number);
      std::string why;
      if (n.ec == std::errc() && n.ptr == last && !text.empty()) {
        if (as_number < 0) why = " (negative)";
        else if (as_number != std::floor(as_number)) why = " (not a whole number)";
        else why = " (write integers in plain decimal or 0x hex)";
      }
      fail(e, "expected " + expected + ", got \"" + text + "\"" + why);
    }
    const uint_bounds b = integer_bounds(f);
    if (value < b.lo || value > b.hi) fail(e, text + " " + out_of_range(integer_range_text(f), f.unit));
    return value;
  }

  double parse_number(const entry& e, const field_info& f) const {
    const std::string expected = in_unit("a number", f.unit);
    const std::string& text = scalar(e, expected);
    double value = 0.0;
    // A leading '+' is valid YAML; from_chars does not take it.
    const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
    const char* last = text.data() + text.size();
    const auto r = std::from_chars(first, last, value);
    if (first == last || r.ec != std::errc() || r.ptr != last || !std::isfinite(value))
      fail(e, "expected " + expected + ", got \"" + text + "\"");
    if (value < f.min || value > f.max) fail(e, text + " " + out_of_range(number_range_text(f), f.unit));
    return value;
  }

  bool parse_bool(const entry& e, const field_info&) const {
    const std::string& text = scalar(e, "true or false");
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    fail(e, "expected true or false, got \"" + text + "\"");
  }

  std::string parse_string(const entry& e, const field_info& f) const {
    const std::string expected =
        f.choices.empty() ? "a string" : "one of: " + fmt::format("{}", fmt::join(f.choices, ", "));
    const std::string& text = scalar(e, expected);
    if (f.choices.empty() || std::find(f.choices.begin(), f.choices.end(), text) != f.choices.end()) return text;
    const std::string guess = nearest(text, f.choices);
    fail(e, "\"" + text + "\" is not one of: " + fmt::format("{}", fmt::join(f.choices, ", ")) +
                (guess.empty() ? "" : " (did you mean " + guess + "?)"));
  }

  const std::vector<entry>& m_entries;
  const yaml_source& m_source;
  const std::string& m_section;
};

}  // namespace

std::string join_key(const std::string& section_path, const std::string& key) {
  return section_path.empty() ? key : section_path + "." + key;
}

std::string yaml_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Sequence: return "a sequence";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "\"" + node.Scalar() + "\"";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

const std::string* yaml_source::override_for(const std::string& key_path) const {
  std::string path = key_path;
  while (!path.empty()) {
    const auto it = overrides.find(path);
    if (it != overrides.end()) return &it->second;
    const auto dot = path.rfind('.');
    if (dot == std::string::npos) break;
    path.erase(dot);
  }
  return nullptr;
}

std::string yaml_source::where(const std::string& key_path, const YAML::Mark& mark) const {
  if (const std::string* o = override_for(key_path)) return *o;
  if (mark.is_null()) {
    // Not parsed from the file: a parent an override created on its way ("lnk" for --set lnk.fec_latency_ns=1).
    const std::string prefix = key_path + ".";
    for (const auto& [path, assignment] : overrides)
      if (key_path.empty() || path.compare(0, prefix.size(), prefix) == 0) return assignment;
    return file;
  }
  return file + ":" + std::to_string(mark.line + 1);
}

std::string yaml_source::message(const std::string& key_path, const YAML::Mark& mark, const std::string& what) const {
  const bool exact_override = overrides.count(key_path) != 0;
  const bool name_key = !key_path.empty() && !exact_override;
  return where(key_path, mark) + ": " + (name_key ? key_path + ": " : "") + what;
}

void apply_yaml(const YAML::Node& node, const visit_fn& visit, const std::string& source_file,
                const std::string& section_path) {
  apply_yaml(node, visit, yaml_source{source_file, {}}, section_path);
}

void apply_yaml(const YAML::Node& node, const visit_fn& visit, const yaml_source& source,
                const std::string& section_path, const std::vector<std::string>& subsections) {
  if (!node.IsDefined() || node.IsNull()) return;  // an empty section keeps every default

  name_lister lister;
  visit(lister);
  std::vector<std::string> known = lister.names;
  known.insert(known.end(), subsections.begin(), subsections.end());
  const std::string section_name = section_path.empty() ? "top-level" : section_path;

  if (!node.IsMap()) {
    throw config_error(source.message(section_path, node.Mark(),
                                      "expected a mapping of " + section_name + " keys (" +
                                          fmt::format("{}", fmt::join(known, ", ")) + "), got " + yaml_kind(node)));
  }

  // Index the mapping first: unknown and duplicate keys are reported before any value is read, in file order.
  std::vector<entry> entries;
  std::set<std::string> seen;
  for (const auto& pair : node) {
    const YAML::Node key = pair.first;
    if (!key.IsScalar()) {
      throw config_error(source.message(section_path, key.Mark(),
                                        "keys must be plain names, got " + yaml_kind(key) + " as a key"));
    }
    const std::string& name = key.Scalar();
    const std::string path = join_key(section_path, name);
    if (!seen.insert(name).second) {
      throw config_error(source.message(path, key.Mark(), "duplicate key (each key may appear once)"));
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      const std::string guess = nearest(name, known);
      throw config_error(source.message(path, key.Mark(),
                                        "unknown key" + (guess.empty() ? "" : "; did you mean " + guess + "?") +
                                            " Known keys of " + section_name + ": " +
                                            fmt::format("{}", fmt::join(known, ", "))));
    }
    if (std::find(subsections.begin(), subsections.end(), name) != subsections.end()) continue;
    entries.push_back({name, key, pair.second});
  }

  yaml_reader reader(entries, source, section_path);
  visit(reader);
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  yaml_source unused;
  apply_override(root, assignment, unused);
}

void apply_override(YAML::Node& root, const std::string& assignment, yaml_source& source) {
  const std::string origin = "--set " + assignment;
  // Syntax errors show the expected form; a well-formed path that does not fit the tree says why.
  auto malformed = [&](const std::string& why) -> config_error {
    return config_error(origin + ": " + why + " (expected path.to.key=value, e.g. topology.link_gbps=800)");
  };
  auto misfit = [&](const std::string& why) -> config_error { return config_error(origin + ": " + why); };

  const auto eq = assignment.find('=');
  if (eq == std::string::npos) throw malformed("no '='");
  const std::string path = trim(assignment.substr(0, eq));
  const std::string text = trim(assignment.substr(eq + 1));
  if (path.empty()) throw malformed("empty key path");

  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty()) throw malformed("empty component in key path \"" + path + "\"");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }

  YAML::Node value;
  if (!text.empty() && (text.front() == '[' || text.front() == '{')) {
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& ex) {
      throw config_error(origin + ": the value is not valid YAML flow syntax: " + ex.msg);
    }
  } else {
    value = YAML::Node(text);
  }

  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  // Walk with reset(): assigning one yaml-cpp Node to another would overwrite the node it refers to.
  YAML::Node cur;
  cur.reset(root);
  std::string walked;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    YAML::Node next;
    if (cur.IsSequence()) {
      const bool numeric =
          std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!numeric) {
        throw misfit(walked + " is a sequence; \"" + part + "\" is not an index");
      }
      size_t index = SIZE_MAX;
      std::from_chars(part.data(), part.data() + part.size(), index);  // overflow leaves SIZE_MAX: past the end
      if (index >= cur.size()) {
        const size_t n = cur.size();
        throw misfit("index " + part + " is beyond the end of " + walked + " (it has " + std::to_string(n) +
                     (n == 1 ? " entry)" : " entries)"));
      }
      next.reset(cur[index]);
    } else if (cur.IsMap() || cur.IsNull()) {
      next.reset(cur[part]);  // a missing entry is created when assigned below
    } else {
      throw misfit(walked + " is a single value, it has no key \"" + part + "\"");
    }
    walked = join_key(walked, part);
    if (last) {
      next = value;
    } else if (!next.IsDefined() || next.IsNull()) {
      next = YAML::Node(YAML::NodeType::Map);
    }
    cur.reset(next);
  }
  source.overrides[path] = origin;
}

std::vector<key_doc> describe(const visit_fn& visit) {
  doc_lister lister;
  visit(lister);
  return std::move(lister.docs);
}

}  // namespace fabricsim::testbench
