// Flow lists: a CSV file of transfers, one per row, `src,dst,bytes,start_ns` with hosts by index (the format
// of testbench/scenarios/data/peer_permutation_256.csv), or `src,dst,bytes,start_ns,op` with an operation per row. A
// scenario names one with `workload.kind: flows`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/params.h"

namespace fabricsim::traces {

// One row of a flow list.
struct flow_entry {
  size_t src = 0;         // requester host index, 0 .. hosts-1
  size_t dst = 0;         // responder host index, never src
  uint64_t bytes = 0;     // message size, at least 1
  double start_ns = 0.0;  // when the transfer is posted
  std::string op = "write";  // write, write_imm, read, send or send_imm (the optional 5th column)
};

// The operations the `op` column accepts.
extern const char* const k_flow_ops[5];

// The largest message a row may ask for: 2^40 bytes, as workload.message_bytes.
constexpr uint64_t k_max_flow_bytes = uint64_t(1) << 40;
// The latest start a row may ask for: 1000 s of simulated time, as the scenario's times.
constexpr double k_max_flow_start_ns = 1e12;

// Parses flow-list text. The first non-blank line must be the header `src,dst,bytes,start_ns` (or
// `src,dst,bytes,start_ns,op`, and then every row has the op column); blank lines
// are skipped anywhere; fields may be padded with spaces and lines may end in CRLF. Throws
// core::config_error "source:line: column: what was expected" for the first bad row: a missing or extra
// column, a value that is not a number, a negative or fractional host or size, a host outside 0 ..
// hosts-1, src equal to dst, zero bytes, a start time out of range, an unknown op; a missing header says so
// on line 1.
std::vector<flow_entry> parse_flow_list(const std::string& text, const std::string& source, size_t hosts);
// The same from a file; a file that cannot be read is a config_error naming it.
std::vector<flow_entry> load_flow_list(const std::string& path, size_t hosts);

}  // namespace fabricsim::traces
