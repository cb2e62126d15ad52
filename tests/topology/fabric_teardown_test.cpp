// The fabric's teardown (sc_models/topology/fabric.cpp): every device is destroyed, each switch while it is the
// first of the fabric's objects among SystemC's top-level objects (where SystemC's search for it starts), and a
// fabric built inside a module, whose devices are no top-level objects, is destroyed all the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "sc_models/topology/fabric.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace fabric_teardown_test {

// Where each probe switch stood among the top-level objects when its destructor ran (-1: not among them).
std::vector<long> g_positions;

// A switch that is a SystemC module, as the real models are, and records where it stood when destroyed.
class probe_switch : public sc_core::sc_module, public sw::switch_device {
 public:
  probe_switch(const sc_core::sc_module_name& name, unsigned ports) : sc_core::sc_module(name), m_ports(ports) {}
  ~probe_switch() override {
    const std::vector<sc_core::sc_object*>& top = sc_core::sc_get_top_level_objects();
    const auto it = std::find(top.begin(), top.end(), static_cast<sc_core::sc_object*>(this));
    g_positions.push_back(it == top.end() ? -1 : long(it - top.begin()));
  }
  void connect_port(unsigned, core::link&) override {}
  void add_route(const core::ip_address&, std::vector<unsigned>) override {}
  unsigned ports() const override { return m_ports; }
  const char* device_name() const override { return name(); }
  void receive(core::packet*, unsigned) override {}

 private:
  unsigned m_ports;
};

// 3 leaves of 2 hosts under 2 spines: 6 hosts, 5 switches, 2 x (6 + 6) links.
topology::topology_params small_leaf_spine() {
  topology::topology_params t;
  t.kind = "leaf_spine";
  t.leaves = 3;
  t.hosts_per_leaf = 2;
  t.spines = 2;
  return t;
}

std::unique_ptr<sw::switch_device> make_probe(const std::string& name, unsigned ports) {
  return std::make_unique<probe_switch>(name.c_str(), ports);
}

// The fabric's devices SystemC still knows by name, and the modules among the top-level objects that were not
// there before the fabric was built.
std::string leftovers(const std::vector<sc_core::sc_object*>& before) {
  std::string out;
  for (const char* n : {"h0_mem", "h0_nic", "h5_nic", "leaf0", "spine1", "leaf0_to_h0", "spine1_to_leaf2"})
    if (sc_core::sc_find_object(n) != nullptr) out += std::string(" ") + n;
  for (sc_core::sc_object* o : sc_core::sc_get_top_level_objects())
    if (dynamic_cast<sc_core::sc_module*>(o) != nullptr && std::find(before.begin(), before.end(), o) == before.end())
      out += std::string(" module ") + o->name();
  return out;
}

TEST(fabric_teardown, each_switch_goes_while_first_of_the_fabric_among_the_top_level_objects) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;  // its calendars are top-level objects built before the fabric
    const std::vector<sc_core::sc_object*> before = sc_core::sc_get_top_level_objects();
    const topology::topology_params t = small_leaf_spine();
    std::optional<topology::fabric> fab;
    fab.emplace(t, topology::cable_params{}, make_probe, nic::supernic_params{},
                std::map<std::string, nic::supernic_params>{}, std::vector<uint64_t>(t.host_count(), 4096), ctx);
    fab.reset();
    std::string out = "destroyed " + std::to_string(g_positions.size()) + " at";
    for (long p : g_positions) out += " " + std::to_string(p - long(before.size()));
    return out + ";" + leftovers(before);
  });
  ASSERT_TRUE(c.ok) << c.output;
  // All 5 switches, each at the first place after the objects built before the fabric (offset 0): member by member
  // (links, then switches, then hosts) each would have stood behind the 12 host modules.
  EXPECT_EQ(c.output, "destroyed 5 at 0 0 0 0 0;");
}

// A module's constructor that builds the fabric: its devices are the module's children, not top-level objects.
struct holder : sc_core::sc_module {
  holder(const sc_core::sc_module_name& name, core::sim_context& ctx) : sc_core::sc_module(name) {
    const topology::topology_params t = small_leaf_spine();
    fab.emplace(t, topology::cable_params{}, make_probe, nic::supernic_params{},
                std::map<std::string, nic::supernic_params>{}, std::vector<uint64_t>(t.host_count(), 4096), ctx);
  }
  std::optional<topology::fabric> fab;
};

TEST(fabric_teardown, a_fabric_inside_a_module_is_destroyed_whole) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    holder h("top", ctx);
    const size_t children = h.get_child_objects().size();
    h.fab.reset();
    std::string out = std::to_string(children) + " children; destroyed " + std::to_string(g_positions.size()) + " at";
    for (long p : g_positions) out += " " + std::to_string(p);
    size_t modules_left = 0;
    for (sc_core::sc_object* o : h.get_child_objects()) modules_left += dynamic_cast<sc_core::sc_module*>(o) != nullptr;
    return out + "; modules left " + std::to_string(modules_left);
  });
  ASSERT_TRUE(c.ok) << c.output;
  // 6 x (memory + NIC) + 5 switches + 24 links = 41 children; every switch destroyed, none a top-level object.
  EXPECT_EQ(c.output, "41 children; destroyed 5 at -1 -1 -1 -1 -1; modules left 0");
}

}  // namespace fabric_teardown_test
}  // namespace fabricsim::test
