// The switch factory (testbench/switch_factory): `switch.model: oq` builds the plain output-queued switch,
// and a WRITE through it completes when a hand calculation of store-and-forward timing says; a multi_site
// edge gets the topology.site_edge_* thresholds, and only the edges do.
#include "testbench/switch_factory.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"
#include "testbench/scenario.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace switch_factory_test {

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

// Two sites at 10 km whose one inter-site cable runs at 100 Gb/s: h0..h3 each WRITE 2 MiB to h4..h7 (8 MiB
// in all, no congestion control), so site 0's edge takes up to 2 x 400 Gb/s from its spines and drains at
// 100 Gb/s: its queue onto the long cable passes 1.5 MB (Kmax) and 256 KiB per ingress port (XOFF).
std::string edge_run(const std::string& topology_extra) {
  return "topology: {kind: multi_site, leaves: 2, hosts_per_leaf: 2, spines: 2, inter_site_km: 10, "
         "inter_site_gbps: 100" +
         topology_extra + R"(}
nic: {cc: none, place_data: false, rto_us: 4194.304}
writes: [{src: h0, dst: h4, bytes: 2097152}, {src: h1, dst: h5, bytes: 2097152},
         {src: h2, dst: h6, bytes: 2097152}, {src: h3, dst: h7, bytes: 2097152}]
)";
}

// Sums a counter over the ports of switch `sw` (instances "<sw>.port<N>"; ports [first, last)).
uint64_t port_sum(const json& r, const std::string& sw, unsigned first, unsigned last, const std::string& key) {
  uint64_t n = 0;
  for (unsigned p = first; p < last; ++p) {
    const std::string inst = sw + ".port" + std::to_string(p);
    EXPECT_TRUE(r["stats"].contains(inst)) << inst;
    if (r["stats"].contains(inst)) n += r["stats"][inst][key]["value"].get<uint64_t>();
  }
  return n;
}

TEST(switch_factory, site_edge_thresholds_map_onto_the_edge_and_bad_pairs_name_the_key) {
  const scenario plain = load_scenario_text(edge_run(""), "t.yaml");
  const sw::spectrum_params same = site_edge_params(plain);  // nothing set: the switch's own
  EXPECT_EQ(same.pfc_xoff_bytes, plain.switch_.pfc_xoff_bytes);
  EXPECT_EQ(same.pfc_xon_bytes, plain.switch_.pfc_xon_bytes);
  EXPECT_EQ(same.ecn_kmin_bytes, plain.switch_.ecn_kmin_bytes);
  EXPECT_EQ(same.ecn_kmax_bytes, plain.switch_.ecn_kmax_bytes);
  EXPECT_EQ(same.buffer_bytes, plain.topology.edge_buffer_bytes);
  const scenario deep = load_scenario_text(
      edge_run(", site_edge_xoff_bytes: 16777216, site_edge_ecn_kmin_bytes: 1000000, site_edge_ecn_kmax_bytes: "
               "5000000"),
      "t.yaml");
  const sw::spectrum_params e = site_edge_params(deep);
  EXPECT_EQ(e.pfc_xoff_bytes, 16777216u);
  EXPECT_EQ(e.pfc_xon_bytes, 12582912u);  // 3/4 of XOFF, the ratio of the switch's 196608 / 262144
  EXPECT_EQ(e.ecn_kmin_bytes, 1000000u);
  EXPECT_EQ(e.ecn_kmax_bytes, 5000000u);
  const scenario xon =
      load_scenario_text(edge_run(", site_edge_xoff_bytes: 1000000, site_edge_xon_bytes: 500000"), "t.yaml");
  EXPECT_EQ(site_edge_params(xon).pfc_xon_bytes, 500000u);
  const auto refused = [](const std::string& extra) -> std::string {
    try {
      site_edge_params(load_scenario_text(edge_run(extra), "t.yaml"));
    } catch (const core::config_error& err) {
      return err.what();
    }
    return "accepted";
  };
  EXPECT_NE(refused(", site_edge_xon_bytes: 300000").find("topology.site_edge_xon_bytes"), std::string::npos);
  EXPECT_NE(refused(", site_edge_ecn_kmin_bytes: 2000000").find("topology.site_edge_ecn_kmin_bytes"),
            std::string::npos);
}

TEST(switch_factory, a_site_edge_sized_past_the_data_neither_pauses_nor_marks) {
  // Edge ports: 0 and 1 to the spines, 2 onto the long cable. With the switch's thresholds the edge must
  // pause its spines and mark (its queue passes 256 KiB per ingress and 1.5 MB); with XOFF and Kmin above
  // the 8 MiB the run sends at all, no ingress port and no queue can reach them: no PFC frame, no mark.
  const json shallow = test::run_scenario_yaml(edge_run(""));
  ASSERT_TRUE(shallow.contains("stats")) << shallow.dump();
  EXPECT_GT(port_sum(shallow, "s0_edge0", 0, 2, "pause_frames_sent"), 0u);
  EXPECT_GT(port_sum(shallow, "s0_edge0", 2, 3, "ecn_marked"), 0u);
  const json deep = test::run_scenario_yaml(
      edge_run(", site_edge_xoff_bytes: 16777216, site_edge_ecn_kmin_bytes: 16777216, site_edge_ecn_kmax_bytes: "
               "33554432"));
  ASSERT_TRUE(deep.contains("flows")) << deep.dump();
  for (const json& f : deep["flows"]) EXPECT_TRUE(f["completed"].get<bool>()) << f.dump();
  EXPECT_EQ(port_sum(deep, "s0_edge0", 0, 2, "pause_frames_sent"), 0u);
  EXPECT_EQ(port_sum(deep, "s0_edge0", 2, 3, "ecn_marked"), 0u);
}

}  // namespace switch_factory_test
}  // namespace fabricsim::testbench
