// The tokens of a SystemVerilog source for the mutant generator (testbench/rtl_mutate_gen.h): a comment-aware
// lexer that marks `ifdef/`ifndef regions, the constant mutants of a literal, and the operator tables the
// expression parser places its mutants with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace fabricsim::testbench::rtl_lex {

enum class tk { ident, number, string, op, directive, tick, eof };

struct token {
  tk kind;
  size_t begin, end;
  uint32_t line, column;
  bool excluded;  // inside an `ifdef/`ifndef region
};

// The tokens of `source` (comments and directives dropped), ending with one tk::eof. Throws
// core::config_error naming `file`:line for an unterminated comment or string.
std::vector<token> tokenize(const std::string& source, const std::string& file);

// The replacements of a literal: 0, value + 1 and value - 1 (wrapping at a sized literal's width), each once
// and never the value itself; '0 <-> '1. Empty for what it cannot read (x/z digits, reals, > 64 bits).
std::vector<std::string> constant_replacements(const std::string& text);

// Binary operator -> (its mutation class, its replacements).
const std::map<std::string, std::pair<const char*, std::vector<const char*>>>& binary_mutations();

// Binding strength of a binary operator (higher binds tighter); 0 for a token that is not one.
int precedence(const std::string& op);

}  // namespace fabricsim::testbench::rtl_lex
