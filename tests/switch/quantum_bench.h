// Benches for the Quantum-X800 switch tests: InfiniBand endpoints (credit-honouring sources and sinks)
// wired to quantum switches by plain links, and a two-level fat tree built by hand (so the tests do not
// depend on the Ethernet SuperNIC, which does not yet speak InfiniBand).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/ib/ib_endpoint.h"
#include "sc_models/switch/quantum/quantum_switch.h"

namespace fabricsim::test {

// XDR link with a given one-way latency (propagation + FEC).
inline core::link_params ib_link(double latency_ns, double gbps = 800.0) {
  core::link_params lp;
  lp.rate_gbps = gbps;
  lp.propagation_ns = latency_ns;
  lp.fec_latency_ns = 0.0;
  return lp;
}

struct ib_net {
  core::sim_context ctx;
  std::vector<std::unique_ptr<core::link>> links;
  std::vector<std::unique_ptr<sw::quantum_switch>> switches;
  std::vector<std::unique_ptr<sw::ib_endpoint>> hosts;

  std::string next_link() { return "l" + std::to_string(links.size()); }
  // Endpoint `e` to switch `s` port `port`.
  void attach(sw::ib_endpoint& e, sw::quantum_switch& s, unsigned port, const core::link_params& lp) {
    links.push_back(std::make_unique<core::link>(next_link().c_str(), lp, ctx));
    core::link& up = *links.back();
    links.push_back(std::make_unique<core::link>(next_link().c_str(), lp, ctx));
    core::link& down = *links.back();
    e.connect(up);
    up.bind(s, port);
    s.connect_port(port, down);
    down.bind(e, 0);
  }
  void cable(sw::quantum_switch& a, unsigned ap, sw::quantum_switch& b, unsigned bp, const core::link_params& lp) {
    links.push_back(std::make_unique<core::link>(next_link().c_str(), lp, ctx));
    core::link& ab = *links.back();
    links.push_back(std::make_unique<core::link>(next_link().c_str(), lp, ctx));
    core::link& ba = *links.back();
    a.connect_port(ap, ab);
    ab.bind(b, bp);
    b.connect_port(bp, ba);
    ba.bind(a, ap);
  }
  // Two endpoints on one link (no switch).
  void direct(sw::ib_endpoint& a, sw::ib_endpoint& b, const core::link_params& lp) {
    links.push_back(std::make_unique<core::link>(next_link().c_str(), lp, ctx));
    core::link& ab = *links.back();
    links.push_back(std::make_unique<core::link>(next_link().c_str(), lp, ctx));
    core::link& ba = *links.back();
    a.connect(ab);
    ab.bind(b, 0);
    b.connect(ba);
    ba.bind(a, 0);
  }
  sw::ib_endpoint& host(const std::string& name, sw::ib_endpoint_params p) {
    hosts.push_back(std::make_unique<sw::ib_endpoint>(name.c_str(), p, ctx));
    return *hosts.back();
  }
  sw::quantum_switch& make_switch(const std::string& name, const sw::quantum_params& p, unsigned ports) {
    switches.push_back(std::make_unique<sw::quantum_switch>(name.c_str(), p, ports, ctx));
    return *switches.back();
  }
};

// A two-level fat tree: `leaves` leaves with `hpl` hosts each (host i: LID i + 1, leaf i / hpl, port
// i % hpl), leaf port hpl + s to spine s port l. Up/down routes written by hand: a leaf sends to its own
// hosts down, to every other host up through every spine; a spine sends down to the host's leaf.
struct ib_tree {
  std::vector<sw::quantum_switch*> leaves, spines;
};
inline ib_tree build_tree(ib_net& net, unsigned leaves, unsigned spines, unsigned hpl, const sw::quantum_params& qp,
                          sw::ib_endpoint_params ep, const core::link_params& lp) {
  ib_tree t;
  for (unsigned l = 0; l < leaves; ++l) t.leaves.push_back(&net.make_switch("leaf" + std::to_string(l), qp, hpl + spines));
  for (unsigned s = 0; s < spines; ++s) t.spines.push_back(&net.make_switch("spine" + std::to_string(s), qp, leaves));
  for (unsigned h = 0; h < leaves * hpl; ++h) {
    ep.lid = h + 1;
    sw::ib_endpoint& e = net.host("h" + std::to_string(h), ep);
    net.attach(e, *t.leaves[h / hpl], h % hpl, lp);
  }
  for (unsigned l = 0; l < leaves; ++l)
    for (unsigned s = 0; s < spines; ++s) net.cable(*t.leaves[l], hpl + s, *t.spines[s], l, lp);
  std::vector<unsigned> up;
  for (unsigned s = 0; s < spines; ++s) up.push_back(hpl + s);
  for (unsigned h = 0; h < leaves * hpl; ++h) {
    const uint16_t lid = uint16_t(h + 1);
    for (unsigned l = 0; l < leaves; ++l)
      t.leaves[l]->add_lid_route(lid, h / hpl == l ? std::vector<unsigned>{h % hpl} : up);
    for (unsigned s = 0; s < spines; ++s) t.spines[s]->add_lid_route(lid, {h / hpl});
  }
  return t;
}

// Wire size of an IB SEND packet with `payload` bytes, LRH + BTH, no GRH (IBTA: LRH 8, BTH 12, ICRC 4,
// VCRC 2, payload padded to 4 bytes), written out here independently of packet::wire_size().
constexpr uint64_t ib_send_wire(uint64_t payload) { return 8 + 12 + (payload + 3) / 4 * 4 + 4 + 2; }

}  // namespace fabricsim::test
