// The scenario key `switch.model`.
#include "testbench/switch_selection.h"

namespace fabricsim::testbench {

void switch_selection::visit(core::param_visitor& v) {
  v.field({"model",
           "",
           "switch model of every switch: the Spectrum-4 Ethernet pipeline (the keys below), the "
           "Quantum-X800 InfiniBand switch (section quantum; the NICs then use nic.link_layer "
           "infiniband), or oq, a plain output-queued Ethernet switch (section oq)",
           0,
           0,
           {"spectrum4", "quantum_x800", "oq"}},
          name);
}

}  // namespace fabricsim::testbench
