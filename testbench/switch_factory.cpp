// Switch models by name (scenario key switch.model).
#include "testbench/switch_factory.h"

#include <stdexcept>
#include <string>

#include "sc_models/core/params.h"
#include "sc_models/switch/oq_switch.h"
#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"
#include "sc_models/topology/multi_site.h"

namespace fabricsim::testbench {

sw::spectrum_params site_edge_params(const scenario& s) {
  const topology::topology_params& t = s.topology;
  sw::spectrum_params edge = s.switch_;
  edge.buffer_bytes = t.edge_buffer_bytes;
  if (t.site_edge_xoff_bytes > 0) {
    edge.pfc_xoff_bytes = t.site_edge_xoff_bytes;
    edge.pfc_xon_bytes = t.site_edge_xoff_bytes / 4 * 3;
  }
  if (t.site_edge_xon_bytes > 0) edge.pfc_xon_bytes = t.site_edge_xon_bytes;
  if (t.site_edge_ecn_kmin_bytes > 0) edge.ecn_kmin_bytes = t.site_edge_ecn_kmin_bytes;
  if (t.site_edge_ecn_kmax_bytes > 0) edge.ecn_kmax_bytes = t.site_edge_ecn_kmax_bytes;
  if (edge.pfc_xon_bytes > edge.pfc_xoff_bytes)
    throw core::config_error("topology.site_edge_xon_bytes: a site edge's XON " + std::to_string(edge.pfc_xon_bytes) +
                             " is above its XOFF " + std::to_string(edge.pfc_xoff_bytes) +
                             " (topology.site_edge_xoff_bytes, 0: switch.pfc_xoff_bytes)");
  if (edge.ecn_kmin_bytes > edge.ecn_kmax_bytes)
    throw core::config_error("topology.site_edge_ecn_kmin_bytes: a site edge's Kmin " +
                             std::to_string(edge.ecn_kmin_bytes) + " is above its Kmax " +
                             std::to_string(edge.ecn_kmax_bytes) +
                             " (topology.site_edge_ecn_kmax_bytes, 0: switch.ecn_kmax_bytes)");
  return edge;
}

sw::switch_factory make_switch_factory(const scenario& s, core::sim_context& ctx) {
  const std::string& model = s.switch_model.name;
  if (model == "spectrum4")
    return [&s, &ctx](const std::string& name, unsigned ports) -> std::unique_ptr<sw::switch_device> {
      if (s.topology.kind == "multi_site" && topology::is_site_edge(name))  // deep-buffered site edge
        return std::make_unique<sw::spectrum_switch>(name.c_str(), site_edge_params(s), ports, ctx);
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
