// SuperNIC: segmentation at the path MTU with 24-bit PSNs that wrap, and byte-exact direct data placement
// under random arrival orders and odd message sizes, with the RTL and the reference reorder tracker.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/nic_bench.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace {

using core::bth_opcode;
using nlohmann::json;

json run(const nic_bench_config& cfg) {
  const child_result c = run_in_child([&] {
    const nic_bench_result r = run_nic_bench(cfg);
    json j;
    j["seen"] = json::array();
    for (const seen_packet& s : r.seen)
      j["seen"].push_back({{"opcode", int(s.opcode)}, {"psn", s.psn}, {"payload", s.payload_bytes},
                           {"reth", s.has_reth}, {"dma_length", s.dma_length}, {"ack_req", s.ack_req},
                           {"pad", s.pad_count}, {"src_port", s.src_port}});
    j["completions"] = r.completions.size();
    j["placed"] = r.placed.size();
    j["mismatched_bytes"] = r.mismatched_bytes;
    j["rx_out_of_order"] = r.rx_out_of_order;
    j["rx_out_of_window"] = r.rx_out_of_window;
    j["rx_deferred"] = r.rx_deferred;
    j["packets_in_use"] = r.packets_in_use;
    return j.dump();
  });
  if (!c.ok) ADD_FAILURE() << "bench child failed: " << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

nic_bench_config fixed_psn(uint32_t psn, uint64_t mtu = 4096) {
  nic_bench_config cfg;
  for (nic::supernic_params* p : {&cfg.a, &cfg.b}) {
    p->random_initial_psn = false;
    p->initial_psn = psn;
    p->mtu_bytes = mtu;
  }
  return cfg;
}

TEST(supernic, segments_at_mtu_with_psns_wrapping_at_2_pow_24) {
  // 5 full packets and 100 bytes: FIRST, 4 x MIDDLE, LAST; PSNs 0xfffffd .. 0x000002.
  nic_bench_config cfg = fixed_psn(0xfffffd);
  cfg.message_bytes = {5 * 4096 + 100};
  const json r = run(cfg);
  ASSERT_EQ(r["seen"].size(), 6u + 1u - 1u);  // six data packets (the ACK goes B -> A, not through the box)
  const uint32_t psns[] = {0xfffffd, 0xfffffe, 0xffffff, 0, 1, 2};
  const int ops[] = {0x06, 0x07, 0x07, 0x07, 0x07, 0x08};
  for (size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r["seen"][i]["psn"], psns[i]);
    EXPECT_EQ(r["seen"][i]["opcode"], ops[i]);
    EXPECT_EQ(r["seen"][i]["payload"], i < 5 ? 4096u : 100u);
    EXPECT_EQ(r["seen"][i]["reth"], i == 0);
    EXPECT_EQ(r["seen"][i]["ack_req"], i == 5);
  }
  EXPECT_EQ(r["seen"][0]["dma_length"], 5 * 4096 + 100);
  EXPECT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["packets_in_use"], 0u);
}

TEST(supernic, message_of_exact_mtu_multiple_and_single_packet_messages) {
  // 3 x 256 at MTU 256: FIRST, MIDDLE, LAST of 256 each; then 10 bytes: ONLY with 2 pad bytes; then 0 bytes.
  nic_bench_config cfg = fixed_psn(100, 256);
  cfg.message_bytes = {768, 10, 0};
  const json r = run(cfg);
  ASSERT_EQ(r["seen"].size(), 5u);
  EXPECT_EQ(r["seen"][0]["opcode"], 0x06);
  EXPECT_EQ(r["seen"][2]["opcode"], 0x08);
  EXPECT_EQ(r["seen"][2]["payload"], 256u);
  EXPECT_EQ(r["seen"][3]["opcode"], 0x0a);
  EXPECT_EQ(r["seen"][3]["payload"], 10u);
  EXPECT_EQ(r["seen"][3]["pad"], 2);
  EXPECT_EQ(r["seen"][3]["psn"], 103u);
  EXPECT_EQ(r["seen"][4]["opcode"], 0x0a);
  EXPECT_EQ(r["seen"][4]["payload"], 0u);
  EXPECT_EQ(r["seen"][4]["dma_length"], 0u);
  EXPECT_EQ(r["completions"], 3u);
  EXPECT_EQ(r["placed"], 3u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
}

TEST(supernic, fixed_entropy_keeps_one_source_port_and_per_packet_varies_it) {
  nic_bench_config cfg = fixed_psn(0);
  cfg.message_bytes = {64 * 4096};
  const json fixed = run(cfg);
  std::set<int> ports;
  for (const auto& s : fixed["seen"]) ports.insert(s["src_port"].get<int>());
  EXPECT_EQ(ports.size(), 1u);
  cfg.a.path_entropy = "per_packet";
  const json sprayed = run(cfg);
  ports.clear();
  for (const auto& s : sprayed["seen"]) {
    ports.insert(s["src_port"].get<int>());
    EXPECT_GE(s["src_port"].get<int>(), 0xc000);
  }
  // 64 draws from 16384 ports: collisions are possible but more than 48 distinct is all but certain.
  EXPECT_GT(ports.size(), 48u);
}

struct order_case {
  const char* kind;
  reorder_box::order order;
  size_t batch;
  uint64_t seed;
  std::vector<uint64_t> sizes;
  uint32_t initial_psn;
};

class placement : public ::testing::TestWithParam<order_case> {};

TEST_P(placement, every_byte_lands_at_its_offset_in_any_arrival_order) {
  const order_case& c = GetParam();
  nic_bench_config cfg = fixed_psn(c.initial_psn);
  cfg.b.reorder = c.kind;
  cfg.order = c.order;
  cfg.batch = c.batch;
  cfg.seed = c.seed;
  cfg.message_bytes = c.sizes;
  const json r = run(cfg);
  EXPECT_EQ(r["completions"], c.sizes.size());
  EXPECT_EQ(r["placed"], c.sizes.size());
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["rx_out_of_window"], 0u);
  EXPECT_EQ(r["packets_in_use"], 0u);
  uint64_t packets = 0;
  for (uint64_t s : c.sizes) packets += std::max<uint64_t>(1, (s + 4095) / 4096);
  if (c.order != reorder_box::order::keep && packets > 1) {
    EXPECT_GT(r["rx_out_of_order"].get<uint64_t>(), 0u);
  }
  if (c.order == reorder_box::order::reverse && packets > 1) {
    // Reversed batches deliver every FIRST after later packets of its message.
    EXPECT_GT(r["rx_deferred"].get<uint64_t>(), 0u);
  }
}

using O = reorder_box::order;
INSTANTIATE_TEST_SUITE_P(
    orders, placement,
    ::testing::Values(
        order_case{"ref", O::keep, 1, 1, {1000003}, 7},
        order_case{"rtl", O::keep, 1, 1, {1000003}, 7},
        order_case{"ref", O::reverse, 64, 1, {1, 4095, 4096, 4097, 65539}, 11},
        order_case{"rtl", O::reverse, 64, 1, {1, 4095, 4096, 4097, 65539}, 11},
        order_case{"ref", O::reverse, 200, 2, {1000003}, 0xffff80},
        order_case{"rtl", O::reverse, 200, 2, {1000003}, 0xffff80},
        order_case{"ref", O::shuffle, 128, 3, {300000, 7, 123457, 4096 * 33}, 0xffffc0},
        order_case{"rtl", O::shuffle, 128, 3, {300000, 7, 123457, 4096 * 33}, 0xffffc0},
        order_case{"ref", O::shuffle, 256, 4, {2 * 1048576 + 5}, 0xfffff0},
        order_case{"rtl", O::shuffle, 256, 4, {2 * 1048576 + 5}, 0xfffff0},
        order_case{"rtl", O::shuffle, 17, 5, {99999, 99999, 99999}, 3},
        order_case{"rtl", O::shuffle, 250, 6, {12345, 1, 0, 54321, 4096, 777777}, 0xfffffa}),
    [](const ::testing::TestParamInfo<order_case>& i) {
      const char* o = i.param.order == O::keep ? "inorder" : i.param.order == O::reverse ? "reversed" : "shuffled";
      return std::string(i.param.kind) + "_" + o + "_" + std::to_string(i.index);
    });

TEST(supernic, timing_only_mode_completes_without_touching_memory) {
  nic_bench_config cfg = fixed_psn(9);
  cfg.b.place_data = false;
  cfg.order = O::shuffle;
  cfg.batch = 32;
  cfg.message_bytes = {100000};
  const json r = run(cfg);
  EXPECT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["placed"], 1u);
  // Nothing was copied: every byte of the destination is still zero, so (almost) all differ from the source.
  EXPECT_GT(r["mismatched_bytes"].get<uint64_t>(), 99000u);
}

TEST(supernic, packets_beyond_the_window_are_dropped_and_counted) {
  // Reversing 300 packets with a 64-PSN window: the first ones to arrive are far beyond the head.
  nic_bench_config cfg = fixed_psn(5);
  cfg.b.reorder = "ref";
  cfg.b.reorder_window = 64;
  cfg.order = O::reverse;
  cfg.batch = 300;
  cfg.message_bytes = {300 * 4096};
  const json r = run(cfg);
  // PSNs 5..304 arrive 304 first: distances 299 .. 64 are outside the window: 236 packets dropped.
  EXPECT_EQ(r["rx_out_of_window"], 236u);
  EXPECT_EQ(r["completions"], 0u);  // without retransmission (the transport issue) the WRITE cannot finish
  EXPECT_GT(r["mismatched_bytes"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace fabricsim::test
