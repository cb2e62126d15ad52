// Mutants of a SystemVerilog block: a parser of the statements and expressions of the top
// module's synthesizable code (on testbench/rtl_mutate_lex.h's tokens), the mutants of each site and the mutant
// schema.
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
#include "testbench/rtl_mutate_lex.h"

namespace fabricsim::testbench {

using rtl_lex::binary_mutations;
using rtl_lex::constant_replacements;
using rtl_lex::precedence;
using rtl_lex::tk;
using rtl_lex::token;

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
    p.tokens = rtl_lex::tokenize(m_source, m_file);
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

std::string rtl_mutation_source::patch(uint32_t id, const std::string& path, const std::string& block) const {
  const rtl_mutant& m = m_parsed->mutants.at(id - 1);
  auto split = [](const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  };
  const std::vector<std::string> before = split(m_source), after = split(apply(id));
  // The changed lines: from the mutant's first line to its last, in each version.
  const size_t first = m.line - 1;
  const size_t last = first + static_cast<size_t>(std::count(m.original.begin(), m.original.end(), '\n'));
  const size_t last_after = first + static_cast<size_t>(std::count(m.replacement.begin(), m.replacement.end(), '\n'));
  constexpr size_t context = 3;
  const size_t from = first >= context ? first - context : 0;
  const size_t tail = std::min(context, before.size() - 1 - last);
  std::ostringstream s;
  std::string site = m.original.substr(0, m.original.find('\n'));
  if (site.size() > 60) site = site.substr(0, 57) + "...";
  s << "Mutant " << id << " of " << path << " (generated: mutant " << id << " of verify-rtl --block " << block
    << " --mutate; a planted bug, never in production):\n"
    << m.op << " mutant at line " << m.line << ", column " << m.column << ": " << m.description << " in `" << site
    << "`.\n"
    << "Regenerate: fabricsim verify-rtl --block " << block << " --mutant-patch " << id << "\n"
    << "Applied by rtl/CMakeLists.txt with patch --fuzz=0; `fabricsim verify-rtl --block " << block << " --mutant "
    << id << "` runs it.\n\n"
    << "--- a/" << path << "\n+++ b/" << path << "\n"
    << "@@ -" << from + 1 << ',' << last + tail + 1 - from << " +" << from + 1 << ',' << last_after + tail + 1 - from
    << " @@\n";
  for (size_t l = from; l < first; ++l) s << ' ' << before[l] << '\n';
  for (size_t l = first; l <= last; ++l) s << '-' << before[l] << '\n';
  for (size_t l = first; l <= last_after; ++l) s << '+' << after[l] << '\n';
  for (size_t l = last + 1; l <= last + tail; ++l) s << ' ' << before[l] << '\n';
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
