// Which switch model every switch of a run is built as: the scenario key `switch.model`, kept apart from
// any one model's params (Spectrum's are the rest of section `switch`) so that adding a model touches only
// this list, the factory (testbench/switch_factory.h) and the model's own params section.
#pragma once

#include <string>

#include "sc_models/core/params.h"

namespace fabricsim::testbench {

struct switch_selection {
  std::string name = "spectrum4";  // spectrum4, quantum_x800 or oq
  // An InfiniBand switch: every NIC of the fabric is then an HCA (nic.link_layer infiniband).
  bool infiniband() const { return name == "quantum_x800"; }
  void visit(core::param_visitor& v);
};

}  // namespace fabricsim::testbench
