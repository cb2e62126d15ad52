// `fabricsim verify-rtl --block NAME --replay FILE`: a transaction stream recorded in a full-system run
// (run.record_rtl_dir, sc_models/nic/block_recording.h) fed into the Verilated block and the reference
// model, every output compared after every transaction.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sc_models/nic/user_rtl_block.h"

namespace fabricsim::testbench {

struct rtl_replay_result {
  bool matched = true;
  std::string rtl;  // what was replayed against the reference model: "RTL", "RTL mutant N" or "user RTL"
  uint64_t instances = 0;
  uint64_t transactions = 0;                  // replayed, the mismatching one included
  std::map<std::string, uint64_t> by_kind;    // transactions per line kind (reset, arrive, cnp, ...)
  double wall_seconds = 0;
  // Set when !matched: where and what disagreed (expected: reference model, got: RTL).
  uint64_t mismatch_line = 0;
  std::string mismatch_instance;
  uint64_t mismatch_index = 0;  // the instance's transaction number, from 0 (its `new` line not counted)
  std::string mismatch_transaction;  // the line as recorded
  std::string mismatch_signal, expected, got;
};

// Replays `path`, a recording of block `block` (reorder_tracker, dcqcn_rp, cnp_gen), until its end or the
// first mismatch. `mutant`: replay against RTL mutant N instead of the real RTL. `user` not empty: against a
// user's block instead (`verify-rtl --replay FILE --rtl USER.sv`; reorder_tracker and cnp_gen), compiled for
// each instance's window or flows (testbench/user_rtl.h, user_rtl_provider_for). Throws core::config_error
// naming the file and line for an unreadable file, a malformed line, a recording of another block, or a
// transaction a model rejects.
rtl_replay_result replay_rtl_recording(const std::string& block, const std::string& path, uint32_t mutant = 0,
                                       const nic::user_rtl_provider& user = {});

// The success summary or the mismatch report, for the terminal.
std::string format_rtl_replay(const std::string& block, const std::string& path, const rtl_replay_result& r);

}  // namespace fabricsim::testbench
