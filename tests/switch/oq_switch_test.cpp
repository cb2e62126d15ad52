// The output-queued switch in a fabric: store-and-forward timing of a WRITE and its ACK through one switch
// against a hand calculation, and ECMP spreading by the UDP source port on a leaf-spine fabric.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sc_models/switch/oq_switch.h"
#include "sc_models/topology/fabric.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace oq_switch_test {

using nlohmann::json;

struct write_spec {
  size_t src, dst;
  uint64_t bytes;
};

// Builds a fabric, posts the writes at t = 0, runs to idle; returns completion times and link counters.
json run_fabric(const topology::topology_params& topo, const topology::cable_params& cp,
                const sw::oq_switch_params& sp, const nic::supernic_params& np, const std::vector<write_spec>& writes) {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    std::vector<uint64_t> mem(topo.host_count(), 0);
    for (const auto& w : writes) {
      mem[w.src] += (w.bytes + 4095) / 4096 * 4096;
      mem[w.dst] += (w.bytes + 4095) / 4096 * 4096;
    }
    const sw::switch_factory make_switch = [&](const std::string& name, unsigned ports) {
      return std::make_unique<sw::oq_switch>(name.c_str(), sp, ports, ctx);
    };
    topology::fabric fab(topo, cp, make_switch, np, {}, mem, ctx);
    for (size_t i = 0; i < writes.size(); ++i) {
      auto& a = fab.hosts()[writes[i].src];
      auto& b = fab.hosts()[writes[i].dst];
      const uint64_t src = a.mem->allocate(writes[i].bytes), dst = b.mem->allocate(writes[i].bytes);
      const uint32_t rkey = b.nic->register_region(dst, writes[i].bytes);
      const uint32_t qa = a.nic->create_qp(), qb = b.nic->create_qp();
      a.nic->connect_qp(qa, b.ip, qb, 0, 0);
      b.nic->connect_qp(qb, a.ip, qa, 0, 0);
      a.nic->post_write(qa, i, src, dst, rkey, writes[i].bytes, core::picoseconds{});
    }
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC), sc_core::SC_EXIT_ON_STARVATION);
    json out;
    out["completed_ps"] = json::array();
    for (auto& h : fab.hosts())
      for (const auto& comp : h.nic->completions()) out["completed_ps"].push_back(comp.completed_at.value);
    for (auto& l : fab.links()) out["links"][l->name()] = l->packets();
    out["dropped"] = ctx.stats.counter_total("dropped");
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

class store_and_forward : public ::testing::TestWithParam<uint64_t> {};

// The hand formula holds whatever the depth of the NIC's MAC FIFO (the scheduler only commits ahead).
TEST_P(store_and_forward, write_and_ack_through_one_switch_match_the_arithmetic) {
  topology::topology_params topo;  // single switch, two hosts
  topo.link_gbps = 400;
  topo.host_cable_m = 2;
  topology::cable_params cp;
  cp.ns_per_metre = 5;  // 2 m: 10 ns of propagation
  cp.fec_latency_ns = 100;
  sw::oq_switch_params sp;
  sp.latency_ns = 400;
  nic::supernic_params np;
  np.wqe_latency_ns = 200;
  np.rx_latency_ns = 150;
  np.ack_every_packets = 1000;  // one ACK, at the end of the message
  np.tx_fifo_frames = GetParam();
  // 10 packets: FIRST (4096 + RETH), 8 MIDDLE, LAST of 1000 bytes.
  const json r = run_fabric(topo, cp, sp, np, {{0, 1, 9 * 4096 + 1000}});
  ASSERT_EQ(r["completed_ps"].size(), 1u);
  // At 400 Gb/s a byte takes 20 ps on the wire.
  const uint64_t first = 4194 * 20, middle = 4178 * 20, last = (82 + 1000) * 20, ack = 86 * 20;
  const uint64_t total = first + 8 * middle + last;
  const uint64_t L = 110000, S = 400000, wqe = 200000, rx = 150000;
  // Store-and-forward through one switch whose egress runs at the ingress rate: the last bit reaches B at
  // t0 + (all frames) + (the largest frame, serialized twice) + 2 link latencies + the switch latency.
  const uint64_t data_at_b = wqe + total + first + 2 * L + S;
  // B's reorder block (nic.clock_mhz 1000) processes the last packet one cycle after the first ns edge at or
  // after its arrival; the ACK is ready rx latency later, serialized twice (B's port, the switch's port
  // towards A), two links.
  const uint64_t processed_at_b = (data_at_b + 999) / 1000 * 1000 + 1000;
  const uint64_t ack_at_a = processed_at_b + rx + 2 * ack + 2 * L + S;
  EXPECT_EQ(r["completed_ps"][0].get<uint64_t>(), ack_at_a);
  EXPECT_EQ(r["dropped"], 0u);
}

INSTANTIATE_TEST_SUITE_P(tx_fifo_frames, store_and_forward, ::testing::Values(1, 2, 4, 16));

TEST(oq_switch, ecmp_pins_a_fixed_entropy_flow_to_one_uplink_and_spreads_sprayed_packets) {
  topology::topology_params topo;
  topo.kind = "leaf_spine";
  topo.leaves = 2;
  topo.hosts_per_leaf = 1;
  topo.spines = 4;
  topology::cable_params cp;
  sw::oq_switch_params sp;
  nic::supernic_params np;
  const std::vector<write_spec> w = {{0, 1, 256 * 4096}};
  auto uplink_counts = [](const json& r) {
    std::vector<uint64_t> c;
    for (int s = 0; s < 4; ++s) c.push_back(r["links"]["leaf0_to_spine" + std::to_string(s)].get<uint64_t>());
    return c;
  };
  np.path_entropy = "fixed";
  const std::vector<uint64_t> fixed = uplink_counts(run_fabric(topo, cp, sp, np, w));
  int used = 0;
  for (uint64_t c : fixed) used += c > 0;
  EXPECT_EQ(used, 1);
  EXPECT_EQ(fixed[0] + fixed[1] + fixed[2] + fixed[3], 256u);
  np.path_entropy = "per_packet";
  const std::vector<uint64_t> sprayed = uplink_counts(run_fabric(topo, cp, sp, np, w));
  EXPECT_EQ(sprayed[0] + sprayed[1] + sprayed[2] + sprayed[3], 256u);
  // 256 packets hashed uniformly over 4 uplinks: each gets 64 +- 3 sigma (sigma = sqrt(256 * 3/16) = 6.9).
  for (uint64_t c : sprayed) {
    EXPECT_GT(c, 64u - 21u);
    EXPECT_LT(c, 64u + 21u);
  }
}

}  // namespace oq_switch_test
}  // namespace fabricsim::test
