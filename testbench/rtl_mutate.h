// `fabricsim verify-rtl --block B [--rtl FILE.sv] --mutate` (docs/verification.md, mutation testing): the
// block's generated mutants (testbench/rtl_mutate_gen.h) compiled once as a mutant schema through the
// user-RTL path (testbench/user_rtl.h), the differential bench run on each mutant in a child process (a
// mutant that crashes the model or outlives the timeout is killed, never a hang), and for each survivor a
// yosys equivalence check (equiv_make, equiv_simple, equiv_induct, equiv_status -assert) against the
// original, so a mutant is reported equivalent only when yosys proves it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "testbench/rtl_mutate_gen.h"
#include "testbench/user_rtl.h"
#include "testbench/verify_rtl.h"

namespace fabricsim::testbench {

struct rtl_mutate_options {
  uint64_t sample = 0;         // --mutate-sample N: a seeded sample of N mutants (--seed); 0: every mutant
  std::vector<uint32_t> ids;   // --mutate-ids: run only these mutants (e.g. the survivors of an earlier run)
  double timeout_seconds = 0;  // --mutate-timeout: per mutant; 0: 10 s + 20 x the unmutated bench's time
  bool equivalence = true;     // false (--no-equiv): survivors are not checked with yosys
  std::string json;            // --mutate-json FILE: the result as JSON
};

struct rtl_mutant_outcome {
  rtl_mutant mutant;
  std::string status;  // killed, timeout, crashed (all three kill it), survived, equivalent
  uint64_t cycle = 0;  // killed: the cycle of the bench's first mismatch
  std::string detail;  // killed: the mismatch's first line; crashed: how; survived/equivalent: yosys' verdict
  double seconds = 0;  // the bench's wall time on this mutant
  std::string diff;    // the changed source line(s), rtl_mutation_source::diff()
};

struct rtl_mutate_result {
  std::string file;                          // the mutated source (as given, or rtl/<block>.sv for the shipped block)
  std::string module;                        // its top module
  size_t generated = 0;                      // mutants generated, before sampling
  bool chosen = false;                       // the mutants run are those of --mutate-ids
  std::vector<rtl_mutant_outcome> outcomes;  // the mutants run, in id order
  user_rtl_build build;                      // the schema's compile (or cache hit)
  uint32_t size = 0;                         // the Window or Flows the schema was elaborated with
  bool yosys = false;                        // survivors were checked with yosys
  double timeout_seconds = 0;
  double original_seconds = 0;  // the bench on the unmutated block
  double bench_seconds = 0;     // the bench on every mutant
  double equivalence_seconds = 0;
  double wall_seconds = 0;  // everything, the compile included

  size_t count(const std::string& status) const;
  size_t killed() const;  // killed + timeout + crashed
  // killed / (run - equivalent); 1 when every mutant is equivalent.
  double score() const;
};

// Throws core::config_error for a block without a run-time RTL path (rtl_contract_blocks()), --mutate with
// --mutant or --wave, a source the generator cannot read (naming file:line:column), a build failure, an
// unmutated block that already fails the bench, and a JSON file that cannot be written.
rtl_mutate_result run_rtl_mutation(const verify_rtl_options& options, const rtl_mutate_options& mutate);

// `verify-rtl --block B [--rtl FILE] --mutant-patch ID`: generated mutant ID of the block's source (the shipped
// rtl/<block>.sv, or --rtl) as a patch file, what rtl/mutants/<block>/<ID>.patch holds for a shipped block.
// Throws core::config_error for an id the source has no mutant of (naming how many it has).
std::string rtl_mutant_patch(const verify_rtl_options& options, uint32_t id);

// The per-operator table (generated, run, killed, survived, equivalent), the score and every survivor and
// equivalent mutant as a diff of its source line.
std::string format_rtl_mutation(const verify_rtl_options& options, const rtl_mutate_result& result);

// The same content as JSON.
std::string rtl_mutation_json(const verify_rtl_options& options, const rtl_mutate_result& result);

}  // namespace fabricsim::testbench
