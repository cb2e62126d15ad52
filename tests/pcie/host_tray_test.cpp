// The SuperNIC's placement through its PCIe tray (nic.placement pcie, sc_models/pcie/host_tray.h) in small
// runs of testbench/scenarios/gpudirect_800g.yaml: 800 Gb/s of RDMA WRITEs from h0 placed into h1's GPU
// memory, GPUDirect or through a bounce buffer, with the bytes checked where they landed. Bounds by hand.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace {

using nlohmann::json;

std::string stream(const std::string& data_path, uint64_t bytes, uint64_t messages) {
  return R"(topology: {kind: single_switch, hosts: 2, link_gbps: 800, host_cable_m: 2}
switch: {port_config: 64x800}
nic: {mtu_bytes: 4096, placement: pcie, rx_buffer_bytes: 1048576}
pcie: {data_path: )" + data_path + R"(, mps_bytes: 256}
workload: {kind: incast, incast_senders: 1, incast_target: h1, message_bytes: )" +
         std::to_string(bytes) + ", messages: " + std::to_string(messages) + "}\n";
}

const json& tray_of(const json& r, const std::string& host) {
  for (const json& t : r["pcie"])
    if (t["host"] == host) return t;
  static const json none;
  ADD_FAILURE() << "no pcie entry for " << host;
  return none;
}

// The 800G wire's payload bound for full-MTU packets: each 4096-byte packet carries 82 bytes besides its payload
// (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble 8, gap 12).
constexpr double payload_bound_gbps = 800.0 * 4096.0 / (4096.0 + 82.0);  // 784.3

TEST(host_tray, gpudirect_large_writes_reach_the_800g_payload_bound_byte_exact) {
  const json r = test::run_scenario_yaml(stream("gpudirect", 1u << 20, 6));
  ASSERT_TRUE(r.contains("pcie"));
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["completed"], 6u);
  const json& t = tray_of(r, "h1");
  EXPECT_EQ(t["messages_landed"], 6u);
  EXPECT_EQ(t["bytes_landed"], 6u << 20);
  // The GPU's Gen6 x16 link takes MPS-256 writes at 128 GB/s x 236/256 x 256/272 = 888 Gb/s, above the wire:
  // the wire is the bound.
  const double sustained = t["gpu_sustained_gbps"].get<double>();
  EXPECT_GE(sustained, 0.95 * payload_bound_gbps);
  EXPECT_LE(sustained, payload_bound_gbps * 1.01);
  EXPECT_EQ(t["rx_buffer_drops"], 0u);
  // Peer to peer: nothing crosses the root port.
  EXPECT_EQ(t["cpu_link_down_payload_bytes"], 0u);
  EXPECT_EQ(t["host_memory_bytes"], 0u);
}

TEST(host_tray, bounce_buffer_is_held_to_the_gen5_root_port_byte_exact) {
  const json r = test::run_scenario_yaml(stream("bounce", 4u << 20, 4));
  ASSERT_TRUE(r.contains("pcie"));
  EXPECT_TRUE(r["verified"].get<bool>());
  const json& t = tray_of(r, "h1");
  EXPECT_EQ(t["messages_landed"], 4u);
  // Every byte crosses the Gen5 x16 cpu link twice: down as a posted write, up as a read completion of the
  // GPU's copy. The down direction carries per 256 payload bytes the write (256 + 16 header + 4 STP + 4 LCRC =
  // 280); the copy engine's 4 KiB reads are cut at MRRS 512: one 16-byte request (+8 framing = 24) per 512
  // bytes, 12 per 256; and an Ack DLLP (8) per 4 completions coming up, 2 per 256: 294 bytes per 256. Gen5 x16: 32 GT/s x 16 x 128/130 x 370/371 = 62.845 GB/s.
  const double bound = 62.845 * 8.0 * 256.0 / 294.0;  // 437.8 Gb/s
  const double sustained = t["gpu_sustained_gbps"].get<double>();
  EXPECT_LE(sustained, bound * 1.02);
  EXPECT_GE(sustained, bound * 0.90);
  // Host memory moved every byte twice (written by the NIC, read by the copy).
  EXPECT_EQ(t["host_memory_bytes"], 2u * (4u << 22));
  // The wire offers 784 Gb/s, the drain takes 438: the NIC's receive buffer fills and PFC holds the switch
  // port (and the switch, lossless, holds h0): nothing is dropped, and at most the buffer is in flight.
  EXPECT_EQ(t["rx_buffer_drops"], 0u);
  EXPECT_GT(t["peak_in_flight_bytes"].get<uint64_t>(), 786432u - 4096u);
  EXPECT_LE(t["peak_in_flight_bytes"].get<uint64_t>(), 1048576u);
  EXPECT_GT(r["stats"]["h1_nic"]["tx_pause_frames"]["value"].get<uint64_t>(), 0u);
}

TEST(host_tray, small_write_latency_gpudirect_and_bounce) {
  const json g = test::run_scenario_yaml(stream("gpudirect", 64, 1));
  const json b = test::run_scenario_yaml(stream("bounce", 64, 1));
  EXPECT_TRUE(g["verified"].get<bool>());
  EXPECT_TRUE(b["verified"].get<bool>());
  // GPUDirect: the 80-byte write's flit on the NIC's internal Gen6 link (2 ns propagation + 2 ns decode +
  // 2 ns flit), 100 ns cut-through, the GPU link's flit (2 + 2 + 2), HBM 300 ns: about 412 ns (docs/pcie.md:
  // 412.064 ns for the same write from the bench's DMA engine).
  const double gd = tray_of(g, "h1")["first_message_latency_ns"].get<double>();
  EXPECT_NEAR(gd, 412.0, 5.0);
  // Bounce: the write to host memory (Gen5 cpu link down, root complex 150 ns, host memory 120 ns: ~380 ns),
  // the copy launch (2000 ns), then a 64-byte read round trip from the GPU to host memory and back (~638 ns):
  // about 3018 ns (the bench's hand figure 3018.38 counts the same path).
  const double bb = tray_of(b, "h1")["first_message_latency_ns"].get<double>();
  EXPECT_NEAR(bb, 3018.0, 30.0);
}

TEST(host_tray, without_pfc_a_full_receive_buffer_drops_and_the_requester_recovers) {
  // Bounce at 784 Gb/s offered into a ~438 Gb/s drain with a 64 KiB receive buffer and nic.rx_overflow drop:
  // packets are dropped and counted, the requester resends, and every byte still lands.
  const json r2 = test::run_scenario_yaml(
      R"(topology: {kind: single_switch, hosts: 2, link_gbps: 800, host_cable_m: 2}
switch: {port_config: 64x800}
nic: {placement: pcie, rx_buffer_bytes: 65536, rx_overflow: drop}
pcie: {data_path: bounce}
workload: {kind: incast, incast_senders: 1, incast_target: h1, message_bytes: 1048576, messages: 2}
)");
  EXPECT_TRUE(r2["verified"].get<bool>());
  EXPECT_GT(tray_of(r2, "h1")["rx_buffer_drops"].get<uint64_t>(), 0u);
  EXPECT_LE(tray_of(r2, "h1")["peak_in_flight_bytes"].get<uint64_t>(), 65536u);
}

TEST(host_tray, dmi_placement_is_the_default_and_builds_no_tray) {
  const json r = test::run_scenario_yaml(R"(topology: {kind: single_switch, hosts: 2, link_gbps: 800}
switch: {port_config: 64x800}
workload: {kind: incast, incast_senders: 1, incast_target: h1, message_bytes: 65536, messages: 2}
)");
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_FALSE(r.contains("pcie"));
}

}  // namespace
}  // namespace fabricsim::testbench
