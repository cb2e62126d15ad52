// Faults `{kind: links_down, fraction: F, tier: T}` (docs/faults.md): a seeded share of a tier's cables that
// failed before the run. They are left out of the fabric (topology_params::absent_cables, which plan_fabric
// honours), so every switch's routes are computed without them, as a fabric whose routing has converged
// around the failures; what stays in the fabric must still connect every switch that has hosts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sc_models/topology/fabric.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// Draws entry `index`'s cables: round(fraction x the tier's cables still in the fabric), without replacement,
// from the stream of (seed, "faults.<index>", "links_down"). Adds them to topo.absent_cables and sets the
// entry's target ("4 of 16 leaf_spine cables") and absent_links. `where` ("file:12: faults.0") starts every
// error: a fraction that rounds to no cable, a tier the fabric has none of, a choice that cuts a switch with
// hosts off from the others (naming the two switches), and the topology's own errors.
void fail_cables(fault_entry& f, uint64_t seed, size_t index, const std::string& where, topology::topology_params& topo,
                 const topology::cable_params& cable);

}  // namespace fabricsim::testbench
