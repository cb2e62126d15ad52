// VL arbitration of the Quantum-X800 egress port (IBTA 7.6.9): two sources on two service levels share
// one 800G egress; the shares follow the table weights (in 64-byte units) and the high limit, computed by
// hand below from the packet size (4122 bytes on the wire = 65 credits of 64 bytes).
#include <gtest/gtest.h>

#include <sstream>

#include "tests/support/sc_fork.h"
#include "tests/switch/quantum_bench.h"

namespace fabricsim::test {
namespace quantum_arbitration_test {

struct share {
  double vl0 = 0, vl1 = 0;
};

// Sources on ports 0 (SL0 -> VL0) and 1 (SL1 -> VL1), destination on port 2; both sources offer 800G.
share run(const std::string& high, const std::string& low, uint64_t high_limit) {
  const child_result c = run_in_child([&] {
    ib_net net;
    sw::quantum_params qp;
    qp.data_vls = 2;
    qp.vl_high_table = high;
    qp.vl_low_table = low;
    qp.high_limit = high_limit;
    sw::quantum_switch& s = net.make_switch("sw", qp, 3);
    sw::ib_endpoint_params ep;
    ep.data_vls = 2;
    ep.lid = 1;
    sw::ib_endpoint& a = net.host("a", ep);
    ep.lid = 2;
    sw::ib_endpoint& b = net.host("b", ep);
    ep.lid = 3;
    sw::ib_endpoint& d = net.host("d", ep);
    net.attach(a, s, 0, ib_link(50));
    net.attach(b, s, 1, ib_link(50));
    net.attach(d, s, 2, ib_link(50));
    s.add_lid_route(3, {2});
    a.send(3, 4000 * 4096, 0);
    b.send(3, 4000 * 4096, 1);
    // 40 us: both sources stay backlogged (each alone could fill the egress for 200 us).
    sc_core::sc_start(5, sc_core::SC_US);
    const uint64_t p0 = s.port(2).counters(0).tx_packets, p1 = s.port(2).counters(1).tx_packets;
    sc_core::sc_start(40, sc_core::SC_US);
    std::ostringstream o;
    o << s.port(2).counters(0).tx_packets - p0 << ' ' << s.port(2).counters(1).tx_packets - p1;
    return o.str();
  });
  EXPECT_TRUE(c.ok) << c.output;
  std::stringstream ss(c.output);
  share r;
  ss >> r.vl0 >> r.vl1;
  return r;
}

TEST(quantum_arbitration, low_table_weights_give_their_share) {
  // VL0 weight 65 = one 65-credit packet per turn, VL1 weight 195 = three: VL1 gets 3/4.
  const share s = run("", "0:65,1:195", 255);
  const double total = s.vl0 + s.vl1;
  // 40 us at 800G / 41.22 ns per packet = 970 packets.
  EXPECT_NEAR(total, 40000 / 41.22, 3);
  EXPECT_NEAR(s.vl1 / total, 0.75, 0.01);
}

TEST(quantum_arbitration, equal_weights_share_equally) {
  const share s = run("", "0:64,1:64", 255);
  // Weight 64 < 65 credits: still one whole packet per turn each, so 1:1.
  EXPECT_NEAR(s.vl1 / (s.vl0 + s.vl1), 0.5, 0.01);
}

TEST(quantum_arbitration, high_limit_bounds_the_high_priority_table) {
  // VL1 high priority; the high limit (4 KiB units) lets it send until its bytes reach limit x 4096 while
  // VL0 waits: limit 1 -> one 4122-byte packet, then VL0 once (1:1); limit 2 -> two (8244 >= 8192), then
  // VL0 (2:1); limit 255 -> unlimited, VL0 starves while VL1 has traffic.
  const share one = run("1:255", "0:255", 1);
  EXPECT_NEAR(one.vl1 / (one.vl0 + one.vl1), 0.5, 0.01);
  const share two = run("1:255", "0:255", 2);
  EXPECT_NEAR(two.vl1 / (two.vl0 + two.vl1), 2.0 / 3.0, 0.01);
  const share unlimited = run("1:255", "0:255", 255);
  EXPECT_EQ(unlimited.vl0, 0);
  EXPECT_GT(unlimited.vl1, 900);
}

TEST(quantum_arbitration, bad_tables_are_config_errors) {
  const child_result c = run_in_child([] {
    core::sim_context ctx;
    sw::quantum_params qp;
    qp.data_vls = 2;
    qp.vl_low_table = "0:64,5:10";
    try {
      sw::quantum_switch s("sw", qp, 2, ctx);
    } catch (const core::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_NE(c.output.find("quantum.vl_low_table"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("5:10"), std::string::npos) << c.output;
}

}  // namespace quantum_arbitration_test
}  // namespace fabricsim::test
