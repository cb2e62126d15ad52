// Mutants of a SystemVerilog block for `fabricsim verify-rtl --mutate` (docs/verification.md): the top
// module's synthesizable code (continuous assignments and always blocks, outside `ifdef/`ifndef regions) is
// tokenized (comments and strings skipped) and its statements and expressions parsed, and every site gets
// the mutants of its operator class: relational, arithmetic, logical and bitwise operator replacement
// (unary ! and ~ deleted), constants to 0 and +-1, if and ?: conditions negated and stuck at true and false,
// procedural assignments deleted (the variable keeps its old value). Part-select bounds, replication
// counts, cast sizes, case labels, function arguments and for-loop headers are left alone: they must stay
// constant or the block no longer elaborates.
//
// The schema is the block with every chosen mutant in it at once, each behind a run-time selector
// (`(fabricsim_mutant_q == K) ? mutated : original`), so one Verilator compile serves every mutant; the
// selector is read once per model instance from the C function the schema itself defines
// (fabricsim_mutant_select(K), exported from the compiled object; 0 is the original block).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::testbench {

struct rtl_mutant {
  uint32_t id = 0;                // 1-based, in source order: the selector value in the schema
  std::string op;                 // relational, arithmetic, logical, bitwise, constant, condition, assignment
  uint32_t line = 0, column = 0;  // 1-based position of the replaced text
  size_t offset = 0, length = 0;  // the replaced byte range of the source
  std::string original;           // the replaced text
  std::string replacement;        // what replaces it
  std::string description;        // "& -> |", "'0 -> '1", "condition negated", "assignment deleted", ...
};

// The mutation operator classes in table order.
const std::vector<std::string>& rtl_mutant_ops();

// A parsed top module: its mutants (source order) and the schema of any subset of them.
class rtl_mutation_source {
 public:
  // Throws core::config_error naming `file`:line:column for what the parser does not understand, and for a
  // missing top module (`top` empty: the first module in the file).
  rtl_mutation_source(std::string source, std::string file, const std::string& top);
  ~rtl_mutation_source();
  rtl_mutation_source(const rtl_mutation_source&) = delete;
  rtl_mutation_source& operator=(const rtl_mutation_source&) = delete;

  const std::vector<rtl_mutant>& mutants() const;
  const std::string& module() const;
  const std::string& source() const { return m_source; }
  const std::string& file() const { return m_file; }

  // The source with mutant `id` applied alone.
  std::string apply(uint32_t id) const;
  // The source with the mutants `ids` behind the selector (and `define SYNTHESIS first, so assertions are
  // left out: the bench must find the difference).
  std::string schema(const std::vector<uint32_t>& ids) const;
  // file:line, then the changed lines, original (-) and mutated (+).
  std::string diff(uint32_t id) const;
  // Mutant `id` as a patch file of rtl/mutants/<block>/<id>.patch: a header naming it, then a unified diff
  // against `path` (a/path, b/path) with three lines of context, which `patch --fuzz=0` applies.
  // `block` names the verify-rtl --block that regenerates it.
  std::string patch(uint32_t id, const std::string& path, const std::string& block) const;

  struct parsed;  // the tokens and the parse (rtl_mutate_gen.cpp)

 private:
  std::string m_source, m_file;
  parsed* m_parsed;
};

// `count` of `total` mutant ids (1-based), drawn with a seeded Fisher-Yates shuffle, ascending; all of them
// when count is 0 or at least total.
std::vector<uint32_t> sample_rtl_mutants(size_t total, size_t count, uint64_t seed);

}  // namespace fabricsim::testbench
