// The one switch factory of a run: builds every switch of the fabric as the model `switch.model` names,
// from that model's params section. Flows, collectives and replays all build their fabric through it.
#pragma once

#include "sc_models/core/sim_context.h"
#include "sc_models/switch/switch_device.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

// A multi_site site-edge switch's parameters: switch.* with topology.edge_buffer_bytes and the site_edge_*
// thresholds that are set (docs/topology.md, "multi_site"). Throws core::config_error naming the topology key
// when the edge's XON would be above its XOFF or its Kmin above its Kmax.
sw::spectrum_params site_edge_params(const scenario& s);

// The factory the fabric builder calls once per switch; `s` and `ctx` must outlive the fabric.
sw::switch_factory make_switch_factory(const scenario& s, core::sim_context& ctx);

}  // namespace fabricsim::testbench
