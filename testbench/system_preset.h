// System presets (`system.preset: gb200_nvl72 | gb300_nvl72 | hgx_b200 | hgx_b300`, docs/systems.md): one key
// that sets the NVLink domain, the scale-out NIC's speed, the tray's PCIe generations and the rail-optimized
// scale-out fabric (Quantum-X800 InfiniBand or Spectrum-X Ethernet) of a cluster of `racks` NVL72 racks or
// `nodes` HGX nodes. The preset's values come first; every key the file or `--set` gives overrides them, and
// `fabricsim explain` shows "system.preset <name>" as the origin of each key the preset set. Every figure has
// a row in docs/calibration.md.
#pragma once

#include <cstdint>
#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

struct scenario;

struct system_params {
  std::string preset = "none";             // none, gb200_nvl72, gb300_nvl72, hgx_b200, hgx_b300
  uint64_t racks = 0;                      // NVL72 presets: racks (NVLink domains of 72 GPUs)
  uint64_t nodes = 0;                      // HGX presets: nodes (NVLink domains of 8 GPUs)
  std::string scale_out = "quantum_x800";  // quantum_x800 (InfiniBand) or spectrum_x (Ethernet)
  void visit(core::param_visitor& v);
};

// The keys `p` sets, as YAML sections (topology, switch, nic, pcie, nvlink). Throws core::config_error
// naming `source` and the key for racks / nodes of 0, or the one a preset does not take.
std::string system_preset_yaml(const system_params& p, const std::string& source);

// After the whole scenario is loaded: a key that contradicts the preset in a way that cannot be built
// (another topology.kind, rails that are not one per GPU of a domain, servers that are not the domains, a
// NIC without its PCIe tray, a switch.model that is not system.scale_out's) is refused naming both keys and
// where each came from. Nothing when no preset is set.
void check_system(const scenario& s);

}  // namespace fabricsim::testbench
