// Recording adapters of the SuperNIC's RTL blocks: each wraps a block (RTL or reference model, whichever the
// NIC runs), forwards every call unchanged and writes the transaction to the run's core::transaction_log, so
// `fabricsim verify-rtl --replay` can drive both implementations with what the block saw in the system.
// Line formats (docs/verification.md), after "new <id> <instance> <params as key=value>":
//   reorder_tracker   reset <id> <expected_psn>        arrive <id> <psn>
//   dcqcn_rp          reset <id> <now> <params>        cnp <id> <now>    sent <id> <bytes> <now>
//                     advance <id> <now>               (times in cycles of the block's clock)
//   cnp_gen           reset <id> <params>              mark <id> <flow> <now>
#pragma once

#include <memory>
#include <string>

#include "sc_models/core/transaction_log.h"
#include "sc_models/nic/cnp_gen.h"
#include "sc_models/nic/dcqcn_rp.h"
#include "sc_models/nic/reorder_tracker.h"

namespace fabricsim::nic {

// The reorder tracker's recorded parameters: the Window it was built with.
struct reorder_tracker_params {
  uint64_t window = 256;  // PSNs tracked beyond the in-order head
  void visit(core::param_visitor& v);
};

// Each returns `block` wrapped so that it records to `log` as `instance` (the instance's `new` line is
// written here, with the parameters the block was built with).
std::unique_ptr<reorder_tracker> record_reorder_tracker(std::unique_ptr<reorder_tracker> block,
                                                        core::transaction_log& log, const std::string& instance);
std::unique_ptr<dcqcn_rate_engine> record_dcqcn_rate_engine(std::unique_ptr<dcqcn_rate_engine> block,
                                                            const dcqcn_params& built_with, core::transaction_log& log,
                                                            const std::string& instance);
std::unique_ptr<cnp_gen> record_cnp_gen(std::unique_ptr<cnp_gen> block, const cnp_gen_params& built_with,
                                        core::transaction_log& log, const std::string& instance);

}  // namespace fabricsim::nic
