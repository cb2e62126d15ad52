// The switch factory (testbench/switch_factory): `switch.model: oq` builds the plain output-queued switch,
// and a WRITE through it completes when a hand calculation of store-and-forward timing says.
#include "testbench/switch_factory.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sc_models/core/packet.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

// Two hosts on one oq switch, 400 Gb/s, 2 m cables at 5 ns/m plus 100 ns FEC; one WRITE of 9 full MTUs
// and 1000 bytes, acknowledged once at its end.
const char* const k_oq_write = R"(topology: {kind: single_switch, hosts: 2, link_gbps: 400, host_cable_m: 2}
link: {ns_per_metre: 5, fec_latency_ns: 100}
switch: {model: oq}
oq: {latency_ns: 400}
nic: {mtu_bytes: 4096, wqe_latency_ns: 200, rx_latency_ns: 150, ack_every_packets: 1000}
writes: [{src: h0, dst: h1, bytes: 37864}]
)";

TEST(switch_factory, oq_model_carries_a_write_in_the_hand_computed_time) {
  const json r = test::run_scenario_yaml(k_oq_write);
  ASSERT_TRUE(r.contains("flows")) << r.dump();
  ASSERT_EQ(r["flows"].size(), 1u);
  const json& f = r["flows"][0];
  EXPECT_TRUE(f["completed"].get<bool>());
  EXPECT_TRUE(f["verified"].get<bool>());
  // The fabric's switch is the output-queued one: its counters, not Spectrum's.
  ASSERT_TRUE(r["stats"].contains("sw0")) << r["stats"].dump();
  EXPECT_TRUE(r["stats"]["sw0"].contains("no_route"));
  EXPECT_FALSE(r["stats"]["sw0"].contains("pause_frames_sent"));

  namespace h = core::header_bytes;
  // Wire bytes per frame: preamble, Ethernet, IPv4, UDP, BTH, payload, ICRC, FCS, inter-frame gap; the
  // FIRST packet carries a RETH, the ACK an AETH and no payload.
  const uint64_t overhead =
      h::preamble_sfd + h::ethernet + h::ipv4 + h::udp + h::bth + h::icrc + h::fcs + h::inter_frame_gap;
  const uint64_t ps_per_byte = 20;  // 8 bits at 400 Gb/s
  const uint64_t first = (overhead + h::reth + 4096) * ps_per_byte;
  const uint64_t middle = (overhead + 4096) * ps_per_byte;
  const uint64_t last = (overhead + 1000) * ps_per_byte;
  const uint64_t ack = (overhead + h::aeth) * ps_per_byte;
  const uint64_t link = 2 * 5000 + 100000;  // propagation + FEC, ps
  const uint64_t sw = 400000, wqe = 200000, rx = 150000;
  // The last bit reaches h1 after every frame on h0's wire, the largest (first) frame once more on the
  // switch's egress (store-and-forward at equal rates), two cables and the switch latency.
  const uint64_t data_at_h1 = wqe + first + 8 * middle + last + first + 2 * link + sw;
  // h1's reorder block (nic.clock_mhz 1000) processes the packet one cycle after the first ns edge at or after
  // its arrival; the ACK is ready its receive latency later, serialized on h1's wire and the switch's port.
  const uint64_t processed_at_h1 = (data_at_h1 + 999) / 1000 * 1000 + 1000;
  const uint64_t ack_at_h0 = processed_at_h1 + rx + 2 * ack + 2 * link + sw;
  EXPECT_DOUBLE_EQ(f["completed_ns"].get<double>(), double(ack_at_h0) / 1000.0);
}

}  // namespace
}  // namespace fabricsim::testbench
