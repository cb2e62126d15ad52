// Mutants of a SystemVerilog block: a tokenizer, a parser of the statements and expressions of the top
// module's synthesizable code, the mutants of each site and the mutant schema.
#include "testbench/rtl_mutate_gen.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {
namespace {

enum class tk { ident, number, string, op, directive, tick, eof };

struct token {
  tk kind;
  size_t begin, end;
  uint32_t line, column;
  bool excluded;  // inside an `ifdef/`ifndef region
};

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

// The replacements of a literal: 0, value + 1 and value - 1 (wrapping at a sized literal's width), each once
// and never the value itself; '0 <-> '1.
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

}  // namespace

// A node of the parse: a token range whose sub-ranges are its children, with the mutants placed on it.
struct rtl_mutation_source::parsed {
  struct node {
    size_t first = 0, last = 0;  // token range, inclusive
    std::vector<size_t> children;
    std::vector<size_t> mutants;  // indexes into `found` (then into `mutants` after numbering)
    bool statement = false;       // an assignment: its mutant wraps it in `if (selector != K)`
  };
  struct found_mutant {
    rtl_mutant m;
    size_t node;
    std::string alt;  // the node's text with this mutant alone
  };

  std::string module;
  std::vector<token> tokens;
  std::vector<node> nodes;
  std::vector<found_mutant> found;  // ordered by id after the parse
  std::vector<rtl_mutant> mutants;
  size_t insert_at = 0;  // after the module header's ';': the selector's declaration goes there
};

namespace {

using parsed_t = std::vector<token>;

class parser {
 public:
  parser(const std::string& s, const std::string& file, std::vector<token>& t,
         std::vector<rtl_mutation_source::parsed::node>& nodes,
         std::vector<rtl_mutation_source::parsed::found_mutant>& found)
      : m_s(s), m_file(file), m_t(t), m_nodes(nodes), m_found(found) {}

  // Finds the top module, parses its body; returns the byte offset after its header.
  size_t run(const std::string& top, std::string& module) {
    size_t i = 0;
    for (; m_t[i].kind != tk::eof; ++i)
      if (text(i) == "module" && m_t[i + 1].kind == tk::ident && (top.empty() || text(i + 1) == top)) break;
    if (m_t[i].kind == tk::eof)
      throw core::config_error("verify-rtl --mutate: " + m_file + ": no module " + (top.empty() ? "" : top + " ") +
                               "in the file");
    module = text(i + 1);
    m_at = i + 2;
    for (int depth = 0; !(depth == 0 && is(";")); ++m_at) {
      if (m_t[m_at].kind == tk::eof) fail("the module header of " + module + " does not end with ';'");
      if (is("(") || is("[") || is("{")) ++depth;
      if (is(")") || is("]") || is("}")) --depth;
    }
    const size_t header_end = m_t[m_at].end;
    ++m_at;
    while (!is("endmodule")) {
      if (m_t[m_at].kind == tk::eof) fail("module " + module + " has no endmodule");
      module_item();
    }
    return header_end;
  }

 private:
  using node_t = rtl_mutation_source::parsed::node;

  std::string text(size_t i) const { return m_s.substr(m_t[i].begin, m_t[i].end - m_t[i].begin); }
  bool is(const char* s) const { return m_t[m_at].kind != tk::string && text(m_at) == s; }
  [[noreturn]] void fail(const std::string& what) const {
    const token& t = m_t[m_at];
    throw core::config_error("verify-rtl --mutate: " + m_file + ":" + std::to_string(t.line) + ":" +
                             std::to_string(t.column) + ": " + what +
                             " (the mutation generator reads assign, always_comb/always_ff/always with begin/end, "
                             "if/else, case, for and assignments)");
  }
  void expect(const char* s) {
    if (!is(s)) fail(std::string("expected '") + s + "', found '" + text(m_at) + "'");
    ++m_at;
  }
  // Past the bracket at m_at and its match.
  void skip_balanced() {
    int depth = 0;
    do {
      if (m_t[m_at].kind == tk::eof) fail("unbalanced brackets");
      if (is("(") || is("[") || is("{")) ++depth;
      if (is(")") || is("]") || is("}")) --depth;
      ++m_at;
    } while (depth > 0);
  }
  void skip_to_semicolon() {
    while (!is(";")) {
      if (is("(") || is("[") || is("{")) {
        skip_balanced();
      } else {
        if (m_t[m_at].kind == tk::eof) fail("expected ';'");
        ++m_at;
      }
    }
    ++m_at;
  }

  size_t new_node(size_t first) {
    m_nodes.push_back(node_t{first, first, {}, {}, false});
    return m_nodes.size() - 1;
  }
  // A mutant replacing tokens [first, last] of node `n` with `replacement`.
  void add(size_t n, const char* op, size_t first, size_t last, const std::string& replacement,
           const std::string& description) {
    const node_t& nd = m_nodes[n];
    rtl_mutant m;
    m.op = op;
    m.line = m_t[first].line;
    m.column = m_t[first].column;
    m.offset = m_t[first].begin;
    m.length = m_t[last].end - m_t[first].begin;
    m.original = m_s.substr(m.offset, m.length);
    m.replacement = replacement;
    m.description = description;
    const size_t nb = m_t[nd.first].begin, ne = m_t[nd.last].end;
    std::string alt = m_s.substr(nb, ne - nb);
    alt.replace(m.offset - nb, m.length, replacement);
    m_found.push_back({m, n, alt});
  }

  void module_item() {
    const bool mut = !m_t[m_at].excluded;
    if (is("assign")) {
      ++m_at;
      for (;;) {
        skip_lvalue();
        expect("=");
        expression(mut);
        if (!is(",")) break;
        ++m_at;
      }
      expect(";");
    } else if (is("always_comb") || is("always_latch")) {
      ++m_at;
      statement(mut);
    } else if (is("always_ff") || is("always")) {
      ++m_at;
      expect("@");
      if (is("*")) {
        ++m_at;
      } else {
        skip_balanced();
      }
      statement(mut);
    } else if (is("initial") || is("final")) {
      ++m_at;
      statement(false);
    } else if (is("function") || is("task")) {
      const std::string end = is("function") ? "endfunction" : "endtask";
      while (text(m_at) != end) {
        if (m_t[m_at].kind == tk::eof) fail("no " + end);
        ++m_at;
      }
      ++m_at;
    } else {
      ++m_at;
    }
  }

  // An assignment target: up to the '=' or '<=' (or compound operator) at bracket depth 0.
  void skip_lvalue() {
    while (!(is("=") || is("<=") || is("+=") || is("-=") || is("*=") || is("/=") || is("&=") || is("|=") || is("^=") ||
             is("<<=") || is(">>=") || is(";"))) {
      if (is("(") || is("[") || is("{")) {
        skip_balanced();
      } else {
        if (m_t[m_at].kind == tk::eof) fail("expected an assignment");
        ++m_at;
      }
    }
  }

  void optional_label() {
    if (is(":")) {
      ++m_at;
      ++m_at;  // the label
    }
  }

  void statement(bool mut) {
    if (is("unique") || is("unique0") || is("priority")) ++m_at;
    if (is("begin")) {
      ++m_at;
      optional_label();
      while (!is("end")) {
        if (m_t[m_at].kind == tk::eof) fail("begin without end");
        statement(mut);
      }
      ++m_at;
      optional_label();
    } else if (is("if")) {
      ++m_at;
      expect("(");
      condition(mut);
      expect(")");
      statement(mut);
      if (is("else")) {
        ++m_at;
        statement(mut);
      }
    } else if (is("case") || is("casez") || is("casex")) {
      ++m_at;
      expect("(");
      expression(mut);
      expect(")");
      case_items(mut);
    } else if (is("for")) {
      ++m_at;
      skip_balanced();
      statement(mut);
    } else if (is(";")) {
      ++m_at;
    } else if (m_t[m_at].kind == tk::ident && text(m_at)[0] == '$') {
      skip_to_semicolon();
    } else if (is("return") || is("break") || is("continue") || is("disable")) {
      skip_to_semicolon();
    } else if (m_t[m_at].kind == tk::ident || is("{")) {
      assignment(mut);
    } else {
      fail("cannot read a statement starting with '" + text(m_at) + "'");
    }
  }

  void case_items(bool mut) {
    while (!is("endcase")) {
      if (m_t[m_at].kind == tk::eof) fail("case without endcase");
      if (is("default")) {
        ++m_at;
        if (is(":")) ++m_at;
      } else {
        for (;;) {  // labels: left alone
          expression(false);
          if (!is(",")) break;
          ++m_at;
        }
        expect(":");
      }
      statement(mut);
    }
    ++m_at;
  }

  void assignment(bool mut) {
    const size_t first = m_at;
    skip_lvalue();
    if (is(";")) {  // a task or function call, or x++
      ++m_at;
      return;
    }
    ++m_at;  // the assignment operator
    const size_t stmt = new_node(first);
    const size_t rhs = expression(mut);
    m_nodes[stmt].children.push_back(rhs);
    m_nodes[stmt].statement = true;
    m_nodes[stmt].last = m_at;
    expect(";");
    if (mut) add(stmt, "assignment", first, m_nodes[stmt].last, ";", "assignment deleted");
  }

  // An if or ?: condition: negated, stuck at true, stuck at false.
  size_t condition(bool mut) {
    const size_t n = expression(mut);
    if (mut) condition_mutants(n);
    return n;
  }
  void condition_mutants(size_t n) {
    const size_t first = m_nodes[n].first, last = m_nodes[n].last;
    add(n, "condition", first, last, "!(" + node_text(n) + ")", "condition negated");
    add(n, "condition", first, last, "1'b1", "condition stuck at true");
    add(n, "condition", first, last, "1'b0", "condition stuck at false");
  }
  std::string node_text(size_t n) const {
    const size_t b = m_t[m_nodes[n].first].begin;
    return m_s.substr(b, m_t[m_nodes[n].last].end - b);
  }

  size_t expression(bool mut) {
    const size_t cond = binary(mut, 1);
    if (!is("?")) return cond;
    // Re-parse the condition part as a condition: its mutants belong to the ternary's first operand.
    const size_t n = new_node(m_nodes[cond].first);
    if (mut) condition_mutants(cond);
    ++m_at;
    const size_t then_n = expression(mut);
    expect(":");
    const size_t else_n = expression(mut);
    m_nodes[n].children = {cond, then_n, else_n};
    m_nodes[n].last = m_nodes[else_n].last;
    return n;
  }

  size_t binary(bool mut, int min_prec) {
    size_t lhs = unary(mut);
    for (;;) {
      if (m_t[m_at].kind != tk::op) return lhs;
      const std::string op = text(m_at);
      const int p = precedence(op);
      if (p == 0 || p < min_prec) return lhs;
      const size_t op_at = m_at++;
      const size_t rhs = binary(mut, p + 1);
      const size_t n = new_node(m_nodes[lhs].first);
      m_nodes[n].children = {lhs, rhs};
      m_nodes[n].last = m_nodes[rhs].last;
      // The whole operation is replaced, in parentheses: the new operator must not bind differently.
      const auto it = binary_mutations().find(op);
      if (mut && it != binary_mutations().end())
        for (const char* to : it->second.second) {
          std::string alt = node_text(n);
          alt.replace(m_t[op_at].begin - m_t[m_nodes[n].first].begin, op.size(), to);
          add(n, it->second.first, m_nodes[n].first, m_nodes[n].last, "(" + alt + ")", op + " -> " + to);
        }
      lhs = n;
    }
  }

  size_t unary(bool mut) {
    static const std::set<std::string> prefix{"!", "~", "-", "+", "&", "|", "^", "~&", "~|", "~^", "^~"};
    if (m_t[m_at].kind == tk::op && prefix.count(text(m_at)) != 0) {
      const size_t op_at = m_at++;
      const size_t operand = unary(mut);
      const size_t n = new_node(op_at);
      m_nodes[n].children = {operand};
      m_nodes[n].last = m_nodes[operand].last;
      if (mut && (text(op_at) == "!" || text(op_at) == "~"))
        add(n, text(op_at) == "!" ? "logical" : "bitwise", op_at, op_at, "", text(op_at) + " deleted");
      return n;
    }
    return postfix(mut, primary(mut));
  }

  // True when the bracket at m_at holds a range (a ':', '+:' or '-:' at its depth): bounds stay constant.
  bool bracket_is_range() const {
    int depth = 0;
    for (size_t i = m_at;; ++i) {
      if (m_t[i].kind == tk::eof) return false;
      const std::string t = m_t[i].kind == tk::op ? text(i) : "";
      if (t == "(" || t == "[" || t == "{") ++depth;
      if (t == ")" || t == "]" || t == "}") {
        if (--depth == 0) return false;
      }
      if (depth == 1 && (t == ":" || t == "+:" || t == "-:")) return true;
    }
  }

  size_t postfix(bool mut, size_t n) {
    for (;;) {
      if (is("[")) {
        const bool range = bracket_is_range();
        ++m_at;
        const size_t index = expression(mut && !range);
        m_nodes[n].children.push_back(index);
        if (range) {
          ++m_at;  // ':', '+:' or '-:'
          expression(false);
        }
        m_nodes[n].last = m_at;
        expect("]");
      } else if (is(".") && m_t[m_at + 1].kind == tk::ident) {
        m_at += 2;
        m_nodes[n].last = m_at - 1;
      } else if (m_t[m_at].kind == tk::tick && text(m_at + 1) == "(") {  // a cast: the size stays
        m_at += 2;
        const size_t child = expression(mut);  // first: it may grow m_nodes
        m_nodes[n].children.push_back(child);
        m_nodes[n].last = m_at;
        expect(")");
      } else {
        return n;
      }
    }
  }

  size_t primary(bool mut) {
    const size_t first = m_at;
    const size_t n = new_node(first);
    if (m_t[m_at].kind == tk::number) {
      ++m_at;
      const bool cast_size = m_t[m_at].kind == tk::tick && text(m_at + 1) == "(";
      if (mut && !cast_size)
        for (const std::string& r : constant_replacements(text(first)))
          add(n, "constant", first, first, r, text(first) + " -> " + r);
    } else if (m_t[m_at].kind == tk::ident || m_t[m_at].kind == tk::string) {
      ++m_at;
      while (is("::") && m_t[m_at + 1].kind == tk::ident) m_at += 2;
      if (is("(")) skip_balanced();  // a function call: its arguments are left alone
    } else if (is("(")) {
      skip_balanced();  // (W)'(x): the parenthesized W is a cast size and stays
      const bool cast_size = m_t[m_at].kind == tk::tick && text(m_at + 1) == "(";
      m_at = first + 1;
      const size_t child = expression(mut && !cast_size);  // first: it may grow m_nodes
      m_nodes[n].children.push_back(child);
      expect(")");
    } else if (is("{")) {
      concatenation(mut, n);
    } else if (m_t[m_at].kind == tk::tick && text(m_at + 1) == "{") {  // an assignment pattern
      ++m_at;
      skip_balanced();
    } else {
      fail("cannot read an expression at '" + text(m_at) + "'");
    }
    m_nodes[n].last = m_at - 1;
    return n;
  }

  void concatenation(bool mut, size_t n) {
    ++m_at;  // {
    const size_t save = m_at, save_nodes = m_nodes.size(), save_found = m_found.size();
    expression(false);
    if (is("{")) {  // a replication {N{...}}: N stays
      concatenation(mut, n);
      expect("}");
      return;
    }
    m_at = save;  // a plain concatenation: parse its first element again, mutable
    m_nodes.resize(save_nodes);
    m_found.resize(save_found);
    for (;;) {
      const size_t child = expression(mut);  // first: it may grow m_nodes
      m_nodes[n].children.push_back(child);
      if (!is(",")) break;
      ++m_at;
    }
    expect("}");
  }

  const std::string& m_s;
  const std::string& m_file;
  std::vector<token>& m_t;
  std::vector<node_t>& m_nodes;
  std::vector<rtl_mutation_source::parsed::found_mutant>& m_found;
  size_t m_at = 0;
};

}  // namespace

const std::vector<std::string>& rtl_mutant_ops() {
  static const std::vector<std::string> ops{"relational", "arithmetic", "logical",   "bitwise",
                                            "constant",   "condition",  "assignment"};
  return ops;
}

rtl_mutation_source::rtl_mutation_source(std::string source, std::string file, const std::string& top)
    : m_source(std::move(source)), m_file(std::move(file)), m_parsed(new parsed) {
  try {
    parsed& p = *m_parsed;
    p.tokens = lexer(m_source, m_file).run();
    parser ps(m_source, m_file, p.tokens, p.nodes, p.found);
    p.insert_at = ps.run(top, p.module);
    // Source order; at one place, the order of the parse (operators, then constants, then conditions).
    std::stable_sort(p.found.begin(), p.found.end(), [](const parsed::found_mutant& a, const parsed::found_mutant& b) {
      return a.m.offset < b.m.offset;
    });
    for (size_t i = 0; i < p.found.size(); ++i) {
      p.found[i].m.id = static_cast<uint32_t>(i + 1);
      p.nodes[p.found[i].node].mutants.push_back(i);
      p.mutants.push_back(p.found[i].m);
    }
  } catch (...) {
    delete m_parsed;
    throw;
  }
}

rtl_mutation_source::~rtl_mutation_source() { delete m_parsed; }

const std::vector<rtl_mutant>& rtl_mutation_source::mutants() const { return m_parsed->mutants; }
const std::string& rtl_mutation_source::module() const { return m_parsed->module; }

std::string rtl_mutation_source::apply(uint32_t id) const {
  const rtl_mutant& m = m_parsed->mutants.at(id - 1);
  std::string s = m_source;
  s.replace(m.offset, m.length, m.replacement);
  return s;
}

namespace {

// The text of node `n` with the enabled mutants of it and its children behind the selector.
std::string emit(const rtl_mutation_source::parsed& p, const std::string& s, const std::vector<bool>& enabled,
                 size_t n) {
  const auto& nd = p.nodes[n];
  const size_t begin = p.tokens[nd.first].begin, end = p.tokens[nd.last].end;
  std::string out;
  size_t at = begin;
  std::vector<size_t> children = nd.children;
  std::sort(children.begin(), children.end(), [&](size_t a, size_t b) { return p.nodes[a].first < p.nodes[b].first; });
  for (size_t c : children) {
    const size_t cb = p.tokens[p.nodes[c].first].begin;
    out += s.substr(at, cb - at) + emit(p, s, enabled, c);
    at = p.tokens[p.nodes[c].last].end;
  }
  out += s.substr(at, end - at);
  std::vector<size_t> own;
  for (size_t m : nd.mutants)
    if (enabled[m]) own.push_back(m);
  if (own.empty()) return out;
  if (nd.statement) {
    std::string cond;
    for (size_t m : own)
      cond += (cond.empty() ? "" : " && ") + std::string("fabricsim_mutant_q != 32'd") + std::to_string(m + 1);
    return "begin if (" + cond + ") " + out + " end";
  }
  std::string chain = "(";
  for (size_t m : own)
    chain += "(fabricsim_mutant_q == 32'd" + std::to_string(m + 1) + ") ? (" + p.found[m].alt + ") : ";
  return chain + "(" + out + "))";
}

// The first line of the module body gets the selector: a C function the object exports and a register
// set from it when the model is created.
const char* const selector_declaration = R"sv(
`systemc_header
extern "C" unsigned fabricsim_mutant_selected();
`systemc_implementation
namespace { unsigned fabricsim_mutant_value = 0; }
extern "C" unsigned fabricsim_mutant_selected() { return fabricsim_mutant_value; }
extern "C" __attribute__((visibility("default"))) void fabricsim_mutant_select(unsigned k) { fabricsim_mutant_value = k; }
`verilog
  logic [31:0] fabricsim_mutant_q;
  initial fabricsim_mutant_q = $c32("fabricsim_mutant_selected()");
)sv";

}  // namespace

std::string rtl_mutation_source::schema(const std::vector<uint32_t>& ids) const {
  const parsed& p = *m_parsed;
  std::vector<bool> enabled(p.found.size(), false);
  for (uint32_t id : ids) enabled.at(id - 1) = true;
  // Top-level nodes (no parent) in source order, each emitted over its range.
  std::vector<bool> is_child(p.nodes.size(), false);
  for (const auto& nd : p.nodes)
    for (size_t c : nd.children) is_child[c] = true;
  std::vector<size_t> roots;
  for (size_t n = 0; n < p.nodes.size(); ++n)
    if (!is_child[n]) roots.push_back(n);
  std::sort(roots.begin(), roots.end(), [&](size_t a, size_t b) { return p.nodes[a].first < p.nodes[b].first; });
  std::string out = "`define SYNTHESIS\n";
  size_t at = 0;
  auto copy_to = [&](size_t to) {
    if (at < p.insert_at && to >= p.insert_at) {
      out += m_source.substr(at, p.insert_at - at) + selector_declaration;
      at = p.insert_at;
    }
    out += m_source.substr(at, to - at);
    at = to;
  };
  for (size_t r : roots) {
    const size_t begin = p.tokens[p.nodes[r].first].begin;
    if (begin < at) continue;  // inside a root already emitted (a discarded re-parse)
    copy_to(begin);
    out += emit(p, m_source, enabled, r);
    at = p.tokens[p.nodes[r].last].end;
  }
  copy_to(m_source.size());
  for (uint32_t id : ids)  // every mutant asked for is behind the selector, or the run would be a lie
    if (out.find("fabricsim_mutant_q == 32'd" + std::to_string(id) + ")") == std::string::npos &&
        out.find("fabricsim_mutant_q != 32'd" + std::to_string(id) + ")") == std::string::npos &&
        out.find("fabricsim_mutant_q != 32'd" + std::to_string(id) + " &&") == std::string::npos)
      throw std::logic_error("rtl_mutation_source::schema: mutant " + std::to_string(id) + " of " + m_file +
                             " is not in the schema");
  return out;
}

std::string rtl_mutation_source::diff(uint32_t id) const {
  const rtl_mutant& m = m_parsed->mutants.at(id - 1);
  const size_t line_begin = m_source.rfind('\n', m.offset == 0 ? 0 : m.offset - 1);
  const size_t from = line_begin == std::string::npos || m.offset == 0 ? 0 : line_begin + 1;
  size_t to = m_source.find('\n', m.offset + m.length);
  if (to == std::string::npos) to = m_source.size();
  std::string original = m_source.substr(from, to - from);
  std::string mutated = original;
  mutated.replace(m.offset - from, m.length, m.replacement);
  std::ostringstream s;
  s << "--- " << m_file << ":" << m.line << "\n+++ mutant " << m.id << " (" << m.op << ")\n";
  auto lines = [&](const std::string& text, char mark) {
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) s << mark << l << '\n';
  };
  lines(original, '-');
  lines(mutated, '+');
  return s.str();
}

std::vector<uint32_t> sample_rtl_mutants(size_t total, size_t count, uint64_t seed) {
  std::vector<uint32_t> ids(total);
  for (size_t i = 0; i < total; ++i) ids[i] = static_cast<uint32_t>(i + 1);
  if (count == 0 || count >= total) return ids;
  std::mt19937_64 rng(seed);
  for (size_t i = total - 1; i > 0; --i) std::swap(ids[i], ids[rng() % (i + 1)]);
  ids.resize(count);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace fabricsim::testbench
