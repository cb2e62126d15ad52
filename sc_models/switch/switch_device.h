// What a fabric builder needs from any switch model: ports wired to links, host routes with their
// equal-cost egress ports, and packets in. The plain output-queued switch and the Spectrum-4 pipeline both
// provide it, so topologies are built once for every switch model.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/packet.h"

namespace fabricsim::sw {

class reachability_user;
class quantum_switch;

class switch_device : public core::packet_sink {
 public:
  // Elaboration: the egress link of each port, and the routes (equal-cost egress ports per destination).
  virtual void connect_port(unsigned port, core::link& out) = 0;
  virtual void add_route(const core::ip_address& dst, std::vector<unsigned> egress_ports) = 0;
  virtual unsigned ports() const = 0;
  virtual const char* device_name() const = 0;
  // Capabilities beyond forwarding, null for a model without them: the run set-up asks for these instead of
  // casting to a model's class. InfiniBand routing that reads the fabric's reachability table (faults):
  virtual reachability_user* reachability() { return nullptr; }
  // SHARP in-network reduction: the switch its aggregation units attach to (sharp_aggregator.h).
  virtual quantum_switch* sharp_switch() { return nullptr; }
};

// Builds one switch named `name` with `ports` ports; the fabric builder calls it once per switch.
using switch_factory = std::function<std::unique_ptr<switch_device>(const std::string& name, unsigned ports)>;

}  // namespace fabricsim::sw
