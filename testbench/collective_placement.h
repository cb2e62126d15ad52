// Where a collective's ranks sit: rank i -> host index from collective.ranks and collective.placement, after
// refusing the configurations a collective cannot run.
#pragma once

#include <cstddef>
#include <vector>

namespace fabricsim::testbench {

struct scenario;

// Rank i -> host index, from collective.ranks and collective.placement. Throws core::config_error naming
// the key for a configuration that cannot run (too many ranks, sizes out of order, an algorithm the op does
// not have, SHARP without a SHARP switch, run keys a collective does not use).
std::vector<size_t> place_ranks(const scenario& s);

}  // namespace fabricsim::testbench
