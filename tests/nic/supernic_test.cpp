// SuperNIC: segmentation at the path MTU with 24-bit PSNs that wrap, byte-exact direct data placement
// under random arrival orders and odd message sizes, with the RTL and the reference reorder tracker; and
// loss recovery (NAK, timeout, go-back-N and selective resend, retry exhaustion) under injected loss.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_models/core/link.h"
#include "sc_models/memory/host_memory.h"
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
    j["status"] = json::array();
    j["retransmitted"] = json::array();
    for (const nic::completion& c : r.completions) {
      j["status"].push_back(nic::to_string(c.status));
      j["retransmitted"].push_back(c.retransmitted_packets);
    }
    j["end_ns"] = r.end_ns;
    for (const auto& [key, value] :
         {std::pair<const char*, uint64_t>{"box_dropped", r.box_dropped}, {"box_duplicated", r.box_duplicated},
          {"reverse_dropped", r.reverse_dropped}, {"tx_data_packets", r.tx_data_packets},
          {"tx_retransmitted", r.tx_retransmitted}, {"rx_nak", r.rx_nak}, {"tx_nak", r.tx_nak},
          {"timeouts", r.timeouts}, {"qp_errors", r.qp_errors}, {"rx_duplicate", r.rx_duplicate}})
      j[key] = value;
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
  // PSNs 5..304 arrive 304 first: distances 299 .. 64 are outside the window: 236 packets dropped. The
  // first of them is answered with a NAK; the resends then arrive in order and the WRITE completes.
  EXPECT_EQ(r["rx_out_of_window"], 236u);
  EXPECT_GE(r["tx_nak"].get<uint64_t>(), 1u);
  EXPECT_GE(r["tx_retransmitted"].get<uint64_t>(), 236u);
  EXPECT_EQ(r["completions"], 1u);
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["packets_in_use"], 0u);
}

// ---- loss recovery ---------------------------------------------------------------------------------------

nic_bench_config lossy(const char* mode, uint32_t psn = 0xfff000, uint64_t mtu = 1024) {
  nic_bench_config cfg = fixed_psn(psn, mtu);
  cfg.a.retransmission = mode;
  cfg.b.reorder = "ref";
  cfg.b.nak_threshold_packets = 16;  // this bench reorders only where a test asks it to
  return cfg;
}

void expect_all_succeeded(const json& r, size_t writes) {
  EXPECT_EQ(r["completions"], writes);
  EXPECT_EQ(r["placed"], writes);
  for (const auto& s : r["status"]) EXPECT_EQ(s, "success");
  EXPECT_EQ(r["mismatched_bytes"], 0u);
  EXPECT_EQ(r["qp_errors"], 0u);
  EXPECT_EQ(r["packets_in_use"], 0u);
}

struct loss_case {
  const char* mode;
  double drop;
};

class random_loss : public ::testing::TestWithParam<loss_case> {};

// Random loss of data packets (middlebox) and of ACKs/NAKs (reverse link) alike; odd sizes, one MTU and one
// MTU + 1, a zero-length WRITE, and PSNs that wrap on the way.
TEST_P(random_loss, every_write_completes_byte_exact) {
  nic_bench_config cfg = lossy(GetParam().mode);
  cfg.faults.drop_probability = GetParam().drop;
  cfg.reverse_drop_probability = GetParam().drop;
  cfg.message_bytes = {3 * 1048576 + 5, 300001, 7, 0, 1024, 1025, 65536};
  const json r = run(cfg);
  expect_all_succeeded(r, cfg.message_bytes.size());
  // ~3500 data packets: at 0.1 % a few are lost, at 1 % a few dozen; each loss costs at least one resend.
  EXPECT_GT(r["box_dropped"].get<uint64_t>(), 0u);
  EXPECT_GE(r["tx_retransmitted"].get<uint64_t>(), r["box_dropped"].get<uint64_t>());
  uint64_t per_flow = 0;
  for (const auto& n : r["retransmitted"]) per_flow += n.get<uint64_t>();
  EXPECT_EQ(per_flow, r["tx_retransmitted"].get<uint64_t>());
}

INSTANTIATE_TEST_SUITE_P(modes, random_loss,
                         ::testing::Values(loss_case{"selective", 0.001}, loss_case{"selective", 0.01},
                                           loss_case{"go_back_n", 0.001}, loss_case{"go_back_n", 0.01}),
                         [](const ::testing::TestParamInfo<loss_case>& i) {
                           return std::string(i.param.mode) + (i.param.drop < 0.005 ? "_0p1pct" : "_1pct");
                         });

TEST(supernic, go_back_n_resends_more_than_selective_for_the_same_losses) {
  // Four losses in one 2000-packet WRITE, two of them back to back; none at the tail, so NAKs do it all.
  auto config = [](const char* mode) {
    nic_bench_config cfg = lossy(mode, 1000);
    cfg.faults.drop_psns = {{1100, 1}, {1500, 1}, {1501, 1}, {2500, 1}};
    cfg.message_bytes = {2000 * 1024};
    return cfg;
  };
  const json sel = run(config("selective"));
  const json gbn = run(config("go_back_n"));
  expect_all_succeeded(sel, 1);
  expect_all_succeeded(gbn, 1);
  // Selective resends exactly the four lost PSNs: one NAK each (the head stops at 1501 once 1500 is filled
  // and is NAKed at once, since later packets are held).
  EXPECT_EQ(sel["tx_retransmitted"], 4u);
  EXPECT_EQ(sel["tx_nak"], 4u);
  EXPECT_EQ(sel["timeouts"], 0u);
  // Go-back-N resends everything sent after each lost PSN before its NAK came back.
  EXPECT_GT(gbn["tx_retransmitted"].get<uint64_t>(), 4u * 16u);
  EXPECT_GT(gbn["rx_duplicate"].get<uint64_t>(), 0u);
}

class loss_mode : public ::testing::TestWithParam<const char*> {};

TEST_P(loss_mode, psns_wrap_during_a_retransmission) {
  nic_bench_config cfg = lossy(GetParam(), 0xfffff0);
  cfg.faults.drop_psns = {{0xfffffe, 1}, {0xffffff, 1}, {0, 2}, {1, 1}};
  cfg.message_bytes = {64 * 1024 + 3};
  const json r = run(cfg);
  expect_all_succeeded(r, 1);
  EXPECT_GE(r["tx_retransmitted"].get<uint64_t>(), 5u);
}

TEST_P(loss_mode, duplicated_packets_are_acknowledged_not_placed_twice) {
  nic_bench_config cfg = lossy(GetParam());
  cfg.faults.duplicate_probability = 0.2;
  cfg.faults.drop_probability = 0.01;
  cfg.order = O::shuffle;
  cfg.batch = 8;
  cfg.message_bytes = {500000, 1, 4096};
  const json r = run(cfg);
  expect_all_succeeded(r, 3);
  EXPECT_GT(r["box_duplicated"].get<uint64_t>(), 50u);
  EXPECT_GE(r["rx_duplicate"].get<uint64_t>(), r["box_duplicated"].get<uint64_t>() - r["box_dropped"].get<uint64_t>());
}

TEST_P(loss_mode, lost_acks_are_recovered_by_a_timeout_and_a_re_acknowledgement) {
  // Only the reverse link loses: data all arrives, but half the ACKs do not; the final one may be lost, in
  // which case the requester times out, resends, and the responder acknowledges the duplicate.
  nic_bench_config cfg = lossy(GetParam());
  cfg.reverse_drop_probability = 0.5;
  cfg.message_bytes = {100000, 5, 70000, 1024};
  cfg.seed = 3;
  const json r = run(cfg);
  expect_all_succeeded(r, 4);
  EXPECT_GT(r["reverse_dropped"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["box_dropped"], 0u);
}

TEST_P(loss_mode, a_lost_first_packet_is_resent_with_its_reth) {
  nic_bench_config cfg = lossy(GetParam(), 50);
  cfg.faults.drop_psns = {{50, 1}};
  cfg.message_bytes = {40 * 1024};
  const json r = run(cfg);
  expect_all_succeeded(r, 1);
  EXPECT_GT(r["rx_deferred"].get<uint64_t>(), 0u);  // the MIDDLEs waited for their FIRST
  EXPECT_EQ(r["tx_nak"], 1u);
  int copies = 0;
  for (const auto& s : r["seen"])
    if (s["psn"] == 50) {
      ++copies;
      EXPECT_EQ(s["opcode"], 0x06);
      EXPECT_EQ(s["reth"], true);
      EXPECT_EQ(s["dma_length"], 40 * 1024);
    }
  EXPECT_EQ(copies, 2);
}

TEST_P(loss_mode, a_lost_last_packet_is_resent_after_the_timeout) {
  // Nothing follows the LAST, so no NAK can come, and the 9 packets before it are not acknowledged either
  // (ACKs are coalesced per 16 packets or per message): the local ACK timeout settles it. Go-back-N resends
  // all 10 packets; selective resends una (a duplicate, re-acknowledged) and the highest PSN sent (the tail
  // probe), which is the lost LAST.
  nic_bench_config cfg = lossy(GetParam(), 7);
  cfg.a.rto_us = 20;
  cfg.faults.drop_psns = {{16, 1}};
  cfg.message_bytes = {10 * 1024 - 1};
  const json r = run(cfg);
  expect_all_succeeded(r, 1);
  EXPECT_EQ(r["timeouts"], 1u);
  EXPECT_EQ(r["rx_nak"], 0u);
  EXPECT_EQ(r["tx_retransmitted"], std::string(GetParam()) == "selective" ? 2u : 10u);
  EXPECT_GT(r["end_ns"].get<double>(), 20000.0);
  EXPECT_EQ(r["seen"].back()["opcode"], 0x08);
  EXPECT_EQ(r["seen"].back()["payload"], 1023u);
}

TEST_P(loss_mode, zero_length_one_mtu_and_one_mtu_plus_one_byte_writes_survive_loss) {
  // PSNs 0: 0-byte ONLY, 1: 1024-byte ONLY, 2-3: FIRST + 1-byte LAST. The ONLY of one MTU and the 1-byte
  // LAST are lost, then the zero-length ONLY's first resend too.
  nic_bench_config cfg = lossy(GetParam(), 0);
  cfg.a.rto_us = 10;
  cfg.faults.drop_psns = {{0, 2}, {1, 1}, {3, 1}};
  cfg.message_bytes = {0, 1024, 1025};
  const json r = run(cfg);
  expect_all_succeeded(r, 3);
  EXPECT_GE(r["timeouts"].get<uint64_t>(), 1u);  // nothing follows PSN 3: at least one timeout
  bool resent_last = false;
  int zero_length = 0;
  for (const auto& s : r["seen"]) {
    if (s["psn"] == 3) resent_last = resent_last || (s["opcode"] == 0x08 && s["payload"] == 1u && s["pad"] == 3);
    if (s["psn"] == 0) {
      ++zero_length;
      EXPECT_EQ(s["opcode"], 0x0a);
      EXPECT_EQ(s["payload"], 0u);
    }
  }
  EXPECT_TRUE(resent_last);
  EXPECT_GE(zero_length, 3);  // sent, lost twice
}

TEST_P(loss_mode, exhausted_retries_complete_in_error_and_the_run_ends) {
  nic_bench_config cfg = lossy(GetParam());
  cfg.a.rto_us = 10;
  cfg.a.retry_count = 3;
  cfg.faults.drop_probability = 1.0;
  cfg.message_bytes = {5000, 100};
  const json r = run(cfg);
  ASSERT_EQ(r["completions"], 2u);
  EXPECT_EQ(r["status"][0], "retry_exceeded");
  EXPECT_EQ(r["status"][1], "flushed");
  EXPECT_EQ(r["qp_errors"], 1u);
  EXPECT_EQ(r["timeouts"], 4u);  // the first 3 retry, the 4th finds the count exhausted
  EXPECT_EQ(r["placed"], 0u);
  EXPECT_EQ(r["packets_in_use"], 0u);
  // The run stops right after the fourth timeout (4 x 10 us after the first packets), not at the 1 s limit.
  EXPECT_GT(r["end_ns"].get<double>(), 40000.0);
  EXPECT_LT(r["end_ns"].get<double>(), 41000.0);
}

INSTANTIATE_TEST_SUITE_P(modes, loss_mode, ::testing::Values("selective", "go_back_n"));

// ACK timing: the responder may acknowledge a PSN only once it is placed, nic.rx_latency_ns after its last
// bit arrived. A to B directly (a pass-through records when each data packet reaches B); an observer on B's
// link records when each ACK starts on the wire (it is built no later). Optionally B sends a WRITE of its
// own, so its ACKs wait behind its transmit FIFO.
struct arrival_recorder : core::packet_sink {
  core::packet_sink* next = nullptr;
  std::map<uint32_t, double> arrived_ns;  // data PSN -> arrival at B
  void receive(core::packet* p, unsigned port) override {
    if (p->bth.opcode != bth_opcode::rc_acknowledge) arrived_ns.emplace(p->bth.psn, core::now().ns());
    next->receive(p, port);
  }
};
struct ack_observer : core::link_observer {
  std::vector<std::pair<uint32_t, double>> acks;  // (PSN, wire start) of each positive ACK from B
  void on_transmit(const core::link&, const core::packet& p, core::picoseconds start) override {
    if (p.bth.opcode == bth_opcode::rc_acknowledge && (p.aeth.syndrome & 0xe0) == 0)
      acks.push_back({p.bth.psn, start.ns()});
  }
};

json ack_timeline(uint64_t messages, uint64_t message_bytes, uint64_t b_sends_bytes) {
  const child_result c = run_in_child([&] {
    core::sim_context ctx;
    nic::supernic_params pa, pb;
    for (nic::supernic_params* p : {&pa, &pb}) {
      p->random_initial_psn = false;
      p->initial_psn = 1000;
      p->rx_latency_ns = 200;
      p->wqe_latency_ns = 200;
    }
    const uint64_t mem = messages * ((message_bytes + 4095) / 4096 * 4096) + b_sends_bytes + 8192;
    memory::host_memory mem_a("mem_a", mem), mem_b("mem_b", mem);
    nic::supernic a("nic_a", pa, core::ip_address::v4(0x0a000001), 0x020000000001, ctx);
    nic::supernic b("nic_b", pb, core::ip_address::v4(0x0a000002), 0x020000000002, ctx);
    a.dma.bind(mem_a.socket);
    b.dma.bind(mem_b.socket);
    core::link_params lp;  // 400 Gb/s
    core::link a_to_b("a_to_b", lp, ctx), b_to_a("b_to_a", lp, ctx);
    arrival_recorder rec;
    rec.next = &b;
    ack_observer obs;
    a.connect(a_to_b);
    a_to_b.bind(rec, 0);
    b.connect(b_to_a);
    b_to_a.bind(a, 0);
    b_to_a.set_observer(&obs);
    const uint32_t qa = a.create_qp(), qb = b.create_qp();
    a.connect_qp(qa, core::ip_address::v4(0x0a000002), qb, 1000, 1000);
    b.connect_qp(qb, core::ip_address::v4(0x0a000001), qa, 1000, 1000);
    for (uint64_t i = 0; i < messages; ++i) {
      const uint64_t src = mem_a.allocate(message_bytes), dst = mem_b.allocate(message_bytes);
      a.post_write(qa, i, src, dst, b.register_region(dst, message_bytes), message_bytes, core::picoseconds{});
    }
    if (b_sends_bytes > 0) {
      const uint64_t src = mem_b.allocate(b_sends_bytes), dst = mem_a.allocate(b_sends_bytes);
      b.post_write(qb, 0, src, dst, a.register_region(dst, b_sends_bytes), b_sends_bytes, core::picoseconds{});
    }
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
    json j;
    j["arrived_ns"] = json::array();
    for (const auto& [psn, t] : rec.arrived_ns) j["arrived_ns"].push_back(t);  // PSN order: no wrap from 1000
    j["acks"] = json::array();
    for (const auto& [psn, t] : obs.acks) j["acks"].push_back({psn, t});
    uint64_t ok = 0;
    for (const nic::completion& cpl : a.completions()) ok += cpl.status == nic::completion_status::success;
    j["completed"] = ok;
    return j.dump();
  });
  if (!c.ok) ADD_FAILURE() << "bench child failed: " << c.output;
  return c.ok ? json::parse(c.output) : json::object();
}

// Every ACK covers only PSNs that arrived at least rx_latency (200 ns) before it started on the wire.
void expect_placed_before_acknowledged(const json& r, uint64_t messages) {
  ASSERT_EQ(r["arrived_ns"].size(), messages);
  ASSERT_FALSE(r["acks"].empty());
  for (const json& ack : r["acks"]) {
    const uint32_t covered = ack[0].get<uint32_t>() - 1000 + 1;  // PSNs 1000 .. ack[0]
    ASSERT_LE(covered, messages);
    for (uint32_t k = 0; k < covered; ++k)
      EXPECT_LE(r["arrived_ns"][k].get<double>() + 200.0, ack[1].get<double>() + 1e-6)
          << "ACK of PSN " << ack[0] << " at " << ack[1] << " ns covers PSN " << 1000 + k << " arrived at "
          << r["arrived_ns"][k] << " ns";
  }
  EXPECT_EQ(r["acks"].back()[0], 1000 + messages - 1);  // the last ACK covers everything
  EXPECT_EQ(r["completed"], messages);
}

TEST(supernic, an_ack_covers_only_psns_placed_rx_latency_after_they_arrived) {
  // 24 one-packet WRITEs of 1024 B, back to back at 400 Gb/s: each is 8 + 14 + 20 + 8 + 12 + 16 (RETH) +
  // 1024 + 4 + 4 + 12 = 1122 wire bytes = 22.44 ns, so packets reach B 22.44 ns apart, from t0. Each ends a
  // message and asks for an ACK. The first ACK is queued at t0 and due at t0 + 200 ns; B's wire is idle, so
  // it starts then. By then PSNs 1000 .. 1008 have arrived (8 x 22.44 = 179.5 ns) but only PSN 1000 is
  // placed: the ACK names 1000. The triggers of PSNs 1001 .. 1008 were coalesced into it; the latest is due
  // at t0 + 179.52 + 200, so the next ACK starts then and names 1008 (1009 came at t0 + 201.96: not placed).
  // Each packet is processed by the clocked reorder block (nic.clock_mhz 1000: edges every ns) one cycle after
  // the first edge at or after its arrival: at ceil(arrival) + 1 ns; its ACK is due 200 ns after that.
  const json r = ack_timeline(24, 1024, 0);
  expect_placed_before_acknowledged(r, 24);
  ASSERT_GE(r["acks"].size(), 2u);
  const double t0 = r["arrived_ns"][0].get<double>();
  for (size_t k = 1; k < 24; ++k)
    EXPECT_NEAR(r["arrived_ns"][k].get<double>() - r["arrived_ns"][k - 1].get<double>(), 22.44, 1e-6) << k;
  EXPECT_EQ(r["acks"][0][0], 1000);
  const auto processed = [](double arrival_ns) { return double(int64_t(arrival_ns + 1.0 - 1e-9)) + 1.0; };
  EXPECT_NEAR(r["acks"][0][1].get<double>(), processed(t0) + 200.0, 1e-6);
  EXPECT_EQ(r["acks"][1][0], 1008);
  EXPECT_NEAR(r["acks"][1][1].get<double>(), processed(t0 + 8 * 22.44) + 200.0, 1e-6);
}

TEST(supernic, acks_behind_the_responders_own_transmit_fifo_still_wait_for_placement) {
  // B sends 256 KiB of its own to A while A's 64 one-packet WRITEs arrive: B's ACKs wait behind the data
  // frames its MAC FIFO holds (4 x 4178 B = 334 ns at 400 Gb/s), and are built when they get out.
  const json r = ack_timeline(64, 1024, 262144);
  expect_placed_before_acknowledged(r, 64);
}

}  // namespace
}  // namespace fabricsim::test
