// The tokens of a SystemVerilog source for the mutant generator: the lexer, literals and operator tables.
#include "testbench/rtl_mutate_lex.h"

#include <cctype>
#include <cstring>
#include <set>

#include "sc_models/core/params.h"

namespace fabricsim::testbench::rtl_lex {
namespace {

// Longest first, so the first match is the token.
const char* const operators[] = {
    "<<<=", ">>>=", "===", "!==", "==?", "!=?", "<<<", ">>>", "<<=", ">>=", "|->", "|=>", "&&", "||",
    "==",   "!=",   "<=",  ">=",  "<<",  ">>",  "**",  "->",  "+:",  "-:",  "::",  "++",  "--", "+=",
    "-=",   "*=",   "/=",  "&=",  "|=",  "^=",  "~&",  "~|",  "~^",  "^~",  "##",  ".*"};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

class lexer {
 public:
  lexer(const std::string& s, const std::string& file) : m_s(s), m_file(file) {}

  std::vector<token> run() {
    std::vector<token> out;
    int conditional_depth = 0;
    while (skip_space(), m_at < m_s.size()) {
      const size_t begin = m_at;
      const uint32_t line = m_line, column = static_cast<uint32_t>(m_at - m_line_start + 1);
      const tk kind = next();
      token t{kind, begin, m_at, line, column, conditional_depth > 0};
      if (kind == tk::directive) {
        const std::string name = m_s.substr(begin + 1, m_at - begin - 1);
        if (name == "ifdef" || name == "ifndef") ++conditional_depth;
        if (name == "endif" && conditional_depth > 0) --conditional_depth;
        if (name == "define" || name == "include" || name == "timescale" || name == "default_nettype") skip_line();
        continue;  // directives are not part of the code the parser sees
      }
      out.push_back(t);
    }
    out.push_back(token{tk::eof, m_s.size(), m_s.size(), m_line, 1, false});
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw core::config_error("verify-rtl --mutate: " + m_file + ":" + std::to_string(m_line) + ": " + what);
  }
  void advance() {
    if (m_s[m_at] == '\n') {
      ++m_line;
      m_line_start = m_at + 1;
    }
    ++m_at;
  }
  void skip_line() {
    while (m_at < m_s.size() && m_s[m_at] != '\n') {
      if (m_s[m_at] == '\\' && m_at + 1 < m_s.size() && m_s[m_at + 1] == '\n') advance();
      advance();
    }
  }
  void skip_space() {
    for (;;) {
      while (m_at < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_at]))) advance();
      if (m_s.compare(m_at, 2, "//") == 0) {
        skip_line();
      } else if (m_s.compare(m_at, 2, "/*") == 0) {
        const size_t end = m_s.find("*/", m_at + 2);
        if (end == std::string::npos) fail("unterminated /* comment");
        while (m_at < end + 2) advance();
      } else {
        return;
      }
    }
  }
  bool based_literal_follows(size_t at) const {  // after a ': [sS]?[bodhBODH] or a fill digit
    if (at < m_s.size() && (m_s[at] == 's' || m_s[at] == 'S')) ++at;
    return at < m_s.size() && std::strchr("bodhBODH01xzXZ", m_s[at]) != nullptr && m_s[at] != '\0';
  }
  void based_digits() {  // the base letter (or fill digit) and the digits after a '
    if (m_s[m_at] == 's' || m_s[m_at] == 'S') advance();
    const char base = static_cast<char>(std::tolower(static_cast<unsigned char>(m_s[m_at])));
    advance();
    if (base == '0' || base == '1' || base == 'x' || base == 'z') return;
    while (m_at < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_at]))) advance();
    while (m_at < m_s.size() && (std::isxdigit(static_cast<unsigned char>(m_s[m_at])) || m_s[m_at] == '_' ||
                                 std::strchr("xXzZ?", m_s[m_at]) != nullptr))
      advance();
  }
  tk next() {
    const char c = m_s[m_at];
    if (c == '`') {
      advance();
      while (m_at < m_s.size() && ident_char(m_s[m_at])) advance();
      return tk::directive;
    }
    if (c == '"') {
      advance();
      while (m_at < m_s.size() && m_s[m_at] != '"') {
        if (m_s[m_at] == '\\') advance();
        if (m_at < m_s.size()) advance();
      }
      if (m_at >= m_s.size()) fail("unterminated string");
      advance();
      return tk::string;
    }
    if (ident_start(c)) {
      while (m_at < m_s.size() && ident_char(m_s[m_at])) advance();
      return tk::ident;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      while (m_at < m_s.size() && (std::isdigit(static_cast<unsigned char>(m_s[m_at])) || m_s[m_at] == '_')) advance();
      if (m_at < m_s.size() && m_s[m_at] == '\'' && based_literal_follows(m_at + 1)) {
        advance();
        based_digits();
      } else if (m_at + 1 < m_s.size() && m_s[m_at] == '.' && std::isdigit(static_cast<unsigned char>(m_s[m_at + 1]))) {
        advance();
        while (m_at < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_at]))) advance();
      }
      return tk::number;
    }
    if (c == '\'') {
      if (based_literal_follows(m_at + 1)) {
        advance();
        based_digits();
        return tk::number;
      }
      advance();
      return tk::tick;
    }
    for (const char* op : operators)
      if (m_s.compare(m_at, std::strlen(op), op) == 0) {
        for (size_t n = std::strlen(op); n > 0; --n) advance();
        return tk::op;
      }
    advance();
    return tk::op;
  }

  const std::string& m_s;
  const std::string& m_file;
  size_t m_at = 0;
  uint32_t m_line = 1;
  size_t m_line_start = 0;
};

// A literal's value and form, for the constant mutants; ok false for x/z digits, reals and > 64 bits.
struct literal {
  bool ok = false, fill = false, sized = false, based = false, is_signed = false;
  uint32_t size = 0;
  char base = 'd';
  uint64_t value = 0;
};

literal read_literal(const std::string& text) {
  literal l;
  std::string t;
  for (char c : text)
    if (c != '_' && !std::isspace(static_cast<unsigned char>(c))) t += c;
  const size_t tick = t.find('\'');
  if (t.find('.') != std::string::npos) return l;
  if (tick == std::string::npos) {
    if (t.size() > 19) return l;
    l.value = std::stoull(t);
    l.ok = true;
    return l;
  }
  size_t at = tick + 1;
  l.sized = tick > 0;
  if (l.sized) {
    if (tick > 4) return l;
    l.size = static_cast<uint32_t>(std::stoul(t.substr(0, tick)));
    if (l.size == 0 || l.size > 64) return l;
  }
  if (at < t.size() && (t[at] == 's' || t[at] == 'S')) {
    l.is_signed = true;
    ++at;
  }
  if (at >= t.size()) return l;
  l.base = static_cast<char>(std::tolower(static_cast<unsigned char>(t[at])));
  if (l.base == '0' || l.base == '1') {
    l.fill = true;
    l.value = l.base == '1';
    l.ok = !l.sized;
    return l;
  }
  l.based = true;
  const int radix = l.base == 'b' ? 2 : l.base == 'o' ? 8 : l.base == 'd' ? 10 : l.base == 'h' ? 16 : 0;
  const std::string digits = t.substr(at + 1);
  if (radix == 0 || digits.empty() || digits.size() > 64) return l;
  for (char c : digits) {
    const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                  : std::isxdigit(static_cast<unsigned char>(c))
                      ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                      : 99;
    if (d >= radix) return l;  // x, z or ?
    l.value = l.value * static_cast<uint64_t>(radix) + static_cast<uint64_t>(d);
  }
  l.ok = true;
  return l;
}

std::string write_literal(const literal& l, uint64_t value) {
  std::string s = l.sized ? std::to_string(l.size) : "";
  if (!l.based) return s + std::to_string(value);
  s += "'";
  if (l.is_signed) s += "s";
  s += l.base;
  if (l.base == 'd') return s + std::to_string(value);
  const int shift = l.base == 'b' ? 1 : l.base == 'o' ? 3 : 4;
  std::string digits;
  do {
    digits.insert(digits.begin(), "0123456789abcdef"[value & ((1u << shift) - 1)]);
    value >>= shift;
  } while (value != 0);
  return s + digits;
}

}  // namespace

std::vector<token> tokenize(const std::string& source, const std::string& file) { return lexer(source, file).run(); }

std::vector<std::string> constant_replacements(const std::string& text) {
  const literal l = read_literal(text);
  if (!l.ok) return {};
  if (l.fill) return {l.value != 0 ? "'0" : "'1"};
  const uint64_t mask = l.sized && l.size < 64 ? (uint64_t{1} << l.size) - 1 : ~uint64_t{0};
  std::vector<uint64_t> values{0, (l.value + 1) & mask};
  if (l.value > 0 || l.sized) values.push_back((l.value - 1) & mask);
  std::vector<std::string> out;
  std::set<uint64_t> seen{l.value};
  for (uint64_t v : values)
    if (seen.insert(v).second) out.push_back(write_literal(l, v));
  return out;
}

const std::map<std::string, std::pair<const char*, std::vector<const char*>>>& binary_mutations() {
  static const std::map<std::string, std::pair<const char*, std::vector<const char*>>> table{
      {"<", {"relational", {"<=", ">", ">=", "==", "!="}}},
      {"<=", {"relational", {"<", ">", ">=", "==", "!="}}},
      {">", {"relational", {"<", "<=", ">=", "==", "!="}}},
      {">=", {"relational", {"<", "<=", ">", "==", "!="}}},
      {"==", {"relational", {"<", "<=", ">", ">=", "!="}}},
      {"!=", {"relational", {"<", "<=", ">", ">=", "=="}}},
      {"+", {"arithmetic", {"-"}}},
      {"-", {"arithmetic", {"+"}}},
      {"*", {"arithmetic", {"+"}}},
      {"/", {"arithmetic", {"*"}}},
      {"%", {"arithmetic", {"/"}}},
      {"**", {"arithmetic", {"*"}}},
      {"<<", {"arithmetic", {">>"}}},
      {">>", {"arithmetic", {"<<"}}},
      {"<<<", {"arithmetic", {">>>"}}},
      {">>>", {"arithmetic", {"<<<"}}},
      {"&&", {"logical", {"||"}}},
      {"||", {"logical", {"&&"}}},
      {"&", {"bitwise", {"|", "^"}}},
      {"|", {"bitwise", {"&", "^"}}},
      {"^", {"bitwise", {"&", "|"}}},
      {"~^", {"bitwise", {"^"}}},
      {"^~", {"bitwise", {"^"}}},
  };
  return table;
}

int precedence(const std::string& op) {
  static const std::map<std::string, int> p{
      {"||", 1},  {"&&", 2},  {"|", 3},   {"^", 4},   {"~^", 4}, {"^~", 4}, {"&", 5},  {"==", 6}, {"!=", 6},
      {"===", 6}, {"!==", 6}, {"==?", 6}, {"!=?", 6}, {"<", 7},  {"<=", 7}, {">", 7},  {">=", 7}, {"<<", 8},
      {">>", 8},  {"<<<", 8}, {">>>", 8}, {"+", 9},   {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10}, {"**", 11}};
  const auto it = p.find(op);
  return it == p.end() ? 0 : it->second;
}

}  // namespace fabricsim::testbench::rtl_lex
