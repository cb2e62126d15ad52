// Switch models by name (scenario key switch.model).
#include "testbench/switch_factory.h"

#include <stdexcept>

#include "sc_models/switch/oq_switch.h"
#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"
#include "sc_models/topology/multi_site.h"

namespace fabricsim::testbench {

sw::switch_factory make_switch_factory(const scenario& s, core::sim_context& ctx) {
  const std::string& model = s.switch_model.name;
  if (model == "spectrum4")
    return [&s, &ctx](const std::string& name, unsigned ports) -> std::unique_ptr<sw::switch_device> {
      if (s.topology.kind == "multi_site" && topology::is_site_edge(name)) {  // deep-buffered site edge
        sw::spectrum_params edge = s.switch_;
        edge.buffer_bytes = s.topology.edge_buffer_bytes;
        return std::make_unique<sw::spectrum_switch>(name.c_str(), edge, ports, ctx);
      }
      return std::make_unique<sw::spectrum_switch>(name.c_str(), s.switch_, ports, ctx);
    };
  if (model == "quantum_x800")
    return [&s, &ctx](const std::string& name, unsigned ports) -> std::unique_ptr<sw::switch_device> {
      return std::make_unique<sw::quantum_switch>(name.c_str(), s.quantum, ports, ctx);
    };
  if (model == "oq")
    return [&s, &ctx](const std::string& name, unsigned ports) -> std::unique_ptr<sw::switch_device> {
      return std::make_unique<sw::oq_switch>(name.c_str(), s.oq, ports, ctx);
    };
  // The loader accepts only the choices switch_selection lists: a model named there but not built here.
  throw std::logic_error("switch.model " + model + ": no factory entry (testbench/switch_factory.cpp)");
}

}  // namespace fabricsim::testbench
