// Lockstep checking of the SuperNIC's RTL blocks (kind "lockstep" of nic.reorder, nic.cnp_model and
// nic.dcqcn_model): each instance runs the Verilated block, whose results the NIC uses, and the block's C++
// reference model side by side on every transaction, compares every result field and, after each
// transaction, every output port of the idle block, and at the first divergence stops the run with
// rtl_divergence naming the NIC, the QP (or port), the transaction and both results. With a waveform
// directory it also writes an FST of the block's last transactions (docs/verification.md, "RTL in the loop").
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/reorder_tracker.h"

namespace fabricsim::nic {

// nic.rtl_mutant (fabricsim run --rtl-mutant): "BLOCK:N" makes the RTL side of BLOCK mutant N
// (rtl/mutants/BLOCK/N.patch, built at configure time) in every NIC that runs that block as rtl or lockstep.
struct rtl_mutant_choice {
  std::string block;    // reorder_tracker, cnp_gen or dcqcn_rp; empty: none
  uint32_t number = 0;  // 0: none

  // The mutant number for `name`'s RTL, 0 for the clean block.
  uint32_t of(const char* name) const { return block == name ? number : 0; }
};

// The blocks a mutant can be chosen for, in the order errors list them.
const std::vector<std::string>& rtl_mutant_blocks();
// The mutants this build has of `block` (one of rtl_mutant_blocks()), ascending.
const std::vector<uint32_t>& rtl_mutants_built(const std::string& block);
// Parses "" (none) or "BLOCK:N"; core::config_error naming `origin` (the key or the flag), the value and the
// choices (the blocks, or the mutants this build has of the block) otherwise.
rtl_mutant_choice parse_rtl_mutant(const std::string& value, const std::string& origin);

// A pair's place in the fabric, given once when it is built (no per-transaction allocation).
struct lockstep_context {
  std::string nic;                      // the NIC's name
  std::string context;                  // "qp 17"; empty for a block of the whole NIC (the notification point)
  core::lockstep_sink* sink = nullptr;  // the run's (sim_context::lockstep); null: divergences are thrown only
};

// Thrown (from inside the kernel, so outside of it the type is lost: see rethrow_rtl_divergence) when the RTL
// and the reference model of a lockstep pair disagree.
class rtl_divergence : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// After sc_start ended in an exception: throws rtl_divergence with the sink's message when a pair diverged
// (the kernel reports the original exception as its own), else returns so that the caller rethrows.
void rethrow_rtl_divergence(const core::lockstep_sink& sink);

// Transactions a waveform covers at most: the pair keeps this many inputs and a shadow RTL instance that
// lags them, so a divergence replays exactly the state the block had before the oldest one.
inline constexpr size_t lockstep_wave_transactions = 1024;

// The NIC's factories. kind: "rtl" (Verilated, mutant `mutant` when not 0), "ref" (C++ reference model; a
// mutant is ignored: it has no RTL) or "lockstep" (both, the RTL side mutant `mutant` when not 0). Errors as
// make_reorder_tracker, make_cnp_gen and make_dcqcn_rate_engine, naming the mutant when it is not built for
// the parameters.
std::unique_ptr<reorder_tracker> make_nic_reorder_tracker(const std::string& kind, uint32_t window, uint32_t mutant,
                                                          const lockstep_context& ctx);
std::unique_ptr<cnp_gen> make_nic_cnp_gen(const std::string& kind, const cnp_gen_params& params, uint32_t mutant,
                                          const lockstep_context& ctx);
std::unique_ptr<dcqcn_rate_engine> make_nic_dcqcn_rate_engine(const std::string& kind, const dcqcn_params& params,
                                                              uint32_t mutant, const lockstep_context& ctx);

}  // namespace fabricsim::nic
