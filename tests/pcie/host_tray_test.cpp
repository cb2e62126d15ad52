// The SuperNIC's placement through its PCIe tray (nic.placement pcie, sc_models/pcie/host_tray.h) in small
// runs of testbench/scenarios/gpudirect_800g.yaml: 800 Gb/s of RDMA WRITEs from h0 placed into h1's GPU
// memory, GPUDirect or through a bounce buffer, with the bytes checked where they landed. Bounds by hand.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace host_tray_test {

using nlohmann::json;

// h0 streams `messages` RDMA WRITEs of `bytes` to h1, both through their trays (h0 reads GPU memory to send,
// h1 writes it), unless `nic_extra`/`extra` say otherwise (e.g. h0 sending from DMI).
std::string stream(const std::string& data_path, uint64_t bytes, uint64_t messages, const std::string& nic_extra = "",
                   const std::string& extra = "") {
  return R"(topology: {kind: single_switch, hosts: 2, link_gbps: 800, host_cable_m: 2}
switch: {port_config: 64x800}
nic: {mtu_bytes: 4096, placement: pcie, rx_buffer_bytes: 1048576)" +
         nic_extra + R"(}
pcie: {data_path: )" + data_path + R"(, mps_bytes: 256}
workload: {kind: incast, incast_senders: 1, incast_target: h1, message_bytes: )" +
         std::to_string(bytes) + ", messages: " + std::to_string(messages) + "}\n" + extra;
}

// h0 sends from DMI (by pointer, at line rate): the wire offers 784 Gb/s to h1's placement path.
const std::string dmi_sender = "nic_overrides: {h0: {placement: dmi}}\n";

uint64_t nic_stat(const json& r, const std::string& nic, const std::string& counter) {
  return r["stats"][nic][counter]["value"].get<uint64_t>();
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
  const json r = test::run_scenario_yaml(stream("bounce", 4u << 20, 4, "", dmi_sender));
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
  const json g = test::run_scenario_yaml(stream("gpudirect", 64, 1, "", dmi_sender));
  const json b = test::run_scenario_yaml(stream("bounce", 64, 1, "", dmi_sender));
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
nic_overrides: {h0: {placement: dmi}}
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

// ---- the send side: the NIC reads its payloads over PCIe ----

// GPUDirect on both ends: h0's NIC reads every payload byte from its GPU memory (one read per packet, each cut
// at MRRS 512 into 8 requests, answered by 16 completions of 256 bytes at MPS 256 / RCB 64), and h1's GPU
// memory ends up holding exactly the bytes h0's GPU memory held ("verified" compares them byte for byte). The
// packets carry what the reads brought into the NIC's transmit buffers, nothing else: a read at the wrong
// address, or a packet sent before its completions, would put other bytes (zeros) into h1's memory.
TEST(host_tray, gpudirect_write_payload_is_read_from_gpu_memory_and_arrives_intact) {
  const json r = test::run_scenario_yaml(stream("gpudirect", 262144 + 1000, 3));
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(tray_of(r, "h1")["bytes_landed"], 3u * 263144u);
  const json& t0 = tray_of(r, "h0");
  EXPECT_EQ(t0["nic_read_bytes"], 3u * 263144u);
  // 263144 bytes = 64 full MTUs + 1000: 65 packets, one read each.
  EXPECT_EQ(nic_stat(r, "h0_nic", "tx_pcie_reads"), 3u * 65u);
  // Peer to peer: neither side touches the root port.
  EXPECT_EQ(t0["cpu_link_down_tlps"], 0u);
  EXPECT_EQ(t0["cpu_link_up_tlps"], 0u);
  EXPECT_EQ(t0["send_copy_bytes"], 0u);
  // The switch counts the NIC's read requests cut at MRRS 512: per full packet 8, per 1000-byte tail 2.
  EXPECT_EQ(r["stats"]["h0_pcie.cx8.gpu.down"]["tlps"]["value"].get<uint64_t>(), 3u * (64u * 8u + 2u));
}

// READ responses are read from the responder's GPU memory the same way: h1 READs 3 x 100 KiB from h0, whose
// NIC reads each response packet's payload (25 per READ) over PCIe; h1 places them into its GPU memory.
TEST(host_tray, read_responses_are_read_from_gpu_memory) {
  const json r = test::run_scenario_yaml(R"(topology: {kind: single_switch, hosts: 2, link_gbps: 800, host_cable_m: 2}
switch: {port_config: 64x800}
nic: {placement: pcie}
pcie: {data_path: gpudirect}
writes:
  - {src: h1, dst: h0, bytes: 102400, op: read}
  - {src: h1, dst: h0, bytes: 102400, op: read}
  - {src: h1, dst: h0, bytes: 102400, op: read}
)");
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(r["completed"], 3u);
  EXPECT_EQ(tray_of(r, "h0")["nic_read_bytes"], 3u * 102400u);
  EXPECT_EQ(nic_stat(r, "h0_nic", "tx_pcie_reads"), 3u * 25u);
  EXPECT_EQ(tray_of(r, "h1")["nic_read_bytes"], 0u);  // the requester sends READ requests only: no payload
  // Bounce: the responder's data is copied to host memory first (each READ's 102400 bytes, once), then read
  // from there: still byte-exact.
  const json b = test::run_scenario_yaml(R"(topology: {kind: single_switch, hosts: 2, link_gbps: 800, host_cable_m: 2}
switch: {port_config: 64x800}
nic: {placement: pcie}
pcie: {data_path: bounce}
writes:
  - {src: h1, dst: h0, bytes: 102400, op: read}
  - {src: h1, dst: h0, bytes: 102400, op: read}
)");
  EXPECT_TRUE(b["verified"].get<bool>());
  EXPECT_EQ(tray_of(b, "h0")["send_copy_bytes"], 2u * 102400u);
  EXPECT_EQ(tray_of(b, "h0")["nic_read_bytes"], 2u * 102400u);
  EXPECT_EQ(tray_of(b, "h0")["cpu_link_up_payload_bytes"], 2u * 102400u);
}

// The read-ahead bounds the reads: with nic.tx_read_ahead_packets 4 the NIC never has more than 4 payload
// reads in flight (nor 4 buffers in use), and a 1 MiB WRITE keeps all 4 busy (reads are slower than the wire
// at 4 deep: 4 x 4096 B per ~0.6 us read round trip is 218 Gb/s). With 32 (the default) the buffers fill up to
// 32 too: a packet's buffer waits for the wire while the reads run ahead.
TEST(host_tray, read_ahead_limit_bounds_outstanding_reads) {
  const json r4 = test::run_scenario_yaml(stream("gpudirect", 1u << 20, 2, ", tx_read_ahead_packets: 4"));
  EXPECT_TRUE(r4["verified"].get<bool>());
  EXPECT_EQ(nic_stat(r4, "h0_nic", "tx_pcie_peak_read_ahead"), 4u);
  EXPECT_EQ(nic_stat(r4, "h0_nic", "tx_pcie_peak_reads"), 4u);
  EXPECT_EQ(nic_stat(r4, "h0_nic", "tx_pcie_reads"), 512u);
  const json r32 = test::run_scenario_yaml(stream("gpudirect", 1u << 20, 2));
  EXPECT_EQ(nic_stat(r32, "h0_nic", "tx_pcie_peak_read_ahead"), 32u);
  EXPECT_LE(nic_stat(r32, "h0_nic", "tx_pcie_peak_reads"), 32u);
}

// With one packet of read-ahead every 64-byte WRITE waits for its own read: the read request's flit on the
// NIC's Gen6 link (0..2 ns, +2 propagation +2 decode), 100 ns cut-through, the GPU link's flit (106..112),
// HBM 300.064 ns, the completion's flit back (414..420), 100 ns cut-through, the NIC link's flit (520..526):
// 526 ns, then the 162-byte packet's 1.62 ns on the 800G wire before its buffer is free for the next read
// (docs/pcie.md, the bench's send_latency_gpudirect_matches_the_hand_figure: 527.62 ns). So at most
// 512 bits / 527.62 ns = 0.9704 Gb/s. Each read starts at an arbitrary point of a 2 ns flit on the four flit
// links it crosses, so a round trip may take up to 4 x 2 ns longer: at least 512 / 535.62 = 0.9559 Gb/s.
TEST(host_tray, read_ahead_one_runs_at_the_read_round_trip) {
  const json r = test::run_scenario_yaml(stream("gpudirect", 64, 200, ", tx_read_ahead_packets: 1"));
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(nic_stat(r, "h0_nic", "tx_pcie_peak_reads"), 1u);
  const double sustained = tray_of(r, "h1")["gpu_sustained_gbps"].get<double>();
  EXPECT_LE(sustained, 512.0 / 527.62 * 1.001);
  EXPECT_GE(sustained, 512.0 / 535.62);
}

// Bounce on the send side: h0's GPU copy engine first writes each message to host memory (posted writes down
// the cpu link into the root complex), then h0's NIC reads host memory (read requests down, completions up):
// every payload byte crosses the root port twice and host memory twice. 2 messages of 64 KiB = 131072 bytes:
// down 131072 / 256 = 512 write TLPs (MPS 256) + 131072 / 512 = 256 read requests (MRRS 512); up 512
// completions (each 512-byte request answered by 2 of 256: MPS 256, RCB 64, aligned).
TEST(host_tray, bounce_send_side_crosses_the_root_complex) {
  const json r = test::run_scenario_yaml(stream("bounce", 65536, 2));
  EXPECT_TRUE(r["verified"].get<bool>());
  const json& t0 = tray_of(r, "h0");
  EXPECT_EQ(t0["send_copy_bytes"], 131072u);
  EXPECT_EQ(t0["nic_read_bytes"], 131072u);
  EXPECT_EQ(t0["cpu_link_down_payload_bytes"], 131072u);
  EXPECT_EQ(t0["cpu_link_up_payload_bytes"], 131072u);
  EXPECT_EQ(t0["cpu_link_down_tlps"], 512u + 256u);
  EXPECT_EQ(t0["cpu_link_up_tlps"], 512u);
  EXPECT_EQ(t0["host_memory_bytes"], 2u * 131072u);
  // GPUDirect sends never touch it.
  const json g = test::run_scenario_yaml(stream("gpudirect", 65536, 2));
  EXPECT_EQ(tray_of(g, "h0")["cpu_link_down_tlps"], 0u);
  EXPECT_EQ(tray_of(g, "h0")["host_memory_bytes"], 0u);
}

}  // namespace host_tray_test
}  // namespace fabricsim::testbench
