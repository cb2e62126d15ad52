// SuperNIC operations beyond RDMA WRITE: WRITE with immediate, SEND/RECEIVE (out of order, RNR), RDMA READ
// (responses reordered and lost), zero-length and MTU-boundary messages, PSN wrap during a retransmission,
// duplicates, a lost ACK, the send queue and READ limits, per_flowlet entropy and the reorder occupancy peak.
// Every expected value is worked out by hand in the test from the IBTA rules and the bench's timings.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/nic_ops_bench.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace supernic_ops_test {

using nic::rdma_op;
using nlohmann::json;

json run(const ops_bench_config& cfg) {
  const child_result c = run_in_child([&] { return run_ops_bench(cfg).dump(); });
  if (!c.ok) ADD_FAILURE() << "bench child failed: " << c.output;
  if (c.ok && std::getenv("OPS_DEBUG")) std::cerr << c.output << "\n";
  return c.ok ? json::parse(c.output) : json::object();
}

// Opcodes (IBTA table 38, RC).
constexpr int send_first = 0x00, send_middle = 0x01, send_last = 0x02, send_only = 0x04, send_only_imm = 0x05;
constexpr int write_first = 0x06, write_middle = 0x07, write_last_imm = 0x09, write_only = 0x0a;
constexpr int write_only_imm = 0x0b, read_request = 0x0c, read_first = 0x0d, read_middle = 0x0e, read_last = 0x0f;
constexpr int read_only = 0x10, ack = 0x11;

std::vector<json> data_of(const json& seen) {  // the packets of a direction without the ACKs
  std::vector<json> out;
  for (const json& s : seen)
    if (s["opcode"] != ack) out.push_back(s);
  return out;
}

void expect_all_done(const json& r, size_t ops) {
  ASSERT_EQ(r["completions"].size(), ops);
  for (size_t i = 0; i < ops; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r["completions"][i]["status"], "success");
    EXPECT_EQ(r["completions"][i]["wr_id"], i);  // completions in posting order
    EXPECT_EQ(r["mismatched"][i], 0u);
  }
  EXPECT_EQ(r["packets_in_use"], 0u);
}

TEST(supernic_ops, exactly_one_mtu_and_one_byte_more_for_write_and_read) {
  // MTU 1024 from PSN 50: WRITE 1024 = ONLY (PSN 50); WRITE 1025 = FIRST 1024 + LAST 1 with 3 pad bytes (51,
  // 52); READ 1024 = one request (53) answered by READ RESPONSE ONLY; READ 1025 = one request (54) that
  // reserves 54 and 55, answered by FIRST (1024, AETH) and LAST (1, AETH, pad 3).
  ops_bench_config cfg;
  fixed_psns(cfg, 50, 1024);
  cfg.ops = {{rdma_op::write, 1024}, {rdma_op::write, 1025}, {rdma_op::read, 1024}, {rdma_op::read, 1025}};
  const json r = run(cfg);
  expect_all_done(r, 4);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 5u);
  EXPECT_EQ(fwd[0]["opcode"], write_only);
  EXPECT_EQ(fwd[0]["psn"], 50);
  EXPECT_EQ(fwd[0]["payload"], 1024);
  EXPECT_EQ(fwd[1]["opcode"], write_first);
  EXPECT_EQ(fwd[2]["opcode"], 0x08);  // WRITE LAST
  EXPECT_EQ(fwd[2]["payload"], 1);
  EXPECT_EQ(fwd[2]["pad"], 3);
  EXPECT_EQ(fwd[2]["psn"], 52);
  EXPECT_EQ(fwd[3]["opcode"], read_request);
  EXPECT_EQ(fwd[3]["psn"], 53);
  EXPECT_EQ(fwd[3]["dma_length"], 1024);
  EXPECT_EQ(fwd[3]["payload"], 0);
  EXPECT_EQ(fwd[4]["opcode"], read_request);
  EXPECT_EQ(fwd[4]["psn"], 54);
  EXPECT_EQ(fwd[4]["dma_length"], 1025);
  const auto rev = data_of(r["reverse"]);
  ASSERT_EQ(rev.size(), 3u);
  EXPECT_EQ(rev[0]["opcode"], read_only);
  EXPECT_EQ(rev[0]["psn"], 53);
  EXPECT_EQ(rev[0]["aeth"], true);
  EXPECT_EQ(rev[1]["opcode"], read_first);
  EXPECT_EQ(rev[1]["psn"], 54);
  EXPECT_EQ(rev[1]["payload"], 1024);
  EXPECT_EQ(rev[1]["aeth"], true);
  EXPECT_EQ(rev[2]["opcode"], read_last);
  EXPECT_EQ(rev[2]["psn"], 55);
  EXPECT_EQ(rev[2]["payload"], 1);
  EXPECT_EQ(rev[2]["pad"], 3);
  EXPECT_EQ(rev[2]["aeth"], true);
}

TEST(supernic_ops, read_response_middle_carries_no_aeth) {
  // READ of 3 x 256 at MTU 256: FIRST (AETH), MIDDLE (none), LAST (AETH).
  ops_bench_config cfg;
  fixed_psns(cfg, 0, 256);
  cfg.ops = {{rdma_op::read, 768}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  const auto rev = data_of(r["reverse"]);
  ASSERT_EQ(rev.size(), 3u);
  EXPECT_EQ(rev[0]["opcode"], read_first);
  EXPECT_EQ(rev[1]["opcode"], read_middle);
  EXPECT_EQ(rev[1]["aeth"], false);
  EXPECT_EQ(rev[2]["opcode"], read_last);
  EXPECT_EQ(rev[0]["aeth"], true);
  EXPECT_EQ(rev[2]["aeth"], true);
}

TEST(supernic_ops, zero_length_write_and_read_take_one_psn_each) {
  // WRITE 0: ONLY with no payload and DMA length 0 (PSN 7). READ 0: a request (PSN 8) for 0 bytes, answered
  // by one READ RESPONSE ONLY with no payload. A WRITE of 10 behind them takes PSN 9: each took one PSN.
  ops_bench_config cfg;
  fixed_psns(cfg, 7, 4096);
  cfg.ops = {{rdma_op::write, 0}, {rdma_op::read, 0}, {rdma_op::write, 10}};
  const json r = run(cfg);
  expect_all_done(r, 3);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 3u);
  EXPECT_EQ(fwd[0]["opcode"], write_only);
  EXPECT_EQ(fwd[0]["payload"], 0);
  EXPECT_EQ(fwd[0]["dma_length"], 0);
  EXPECT_EQ(fwd[1]["opcode"], read_request);
  EXPECT_EQ(fwd[1]["psn"], 8);
  EXPECT_EQ(fwd[1]["dma_length"], 0);
  EXPECT_EQ(fwd[2]["psn"], 9);
  const auto rev = data_of(r["reverse"]);
  ASSERT_EQ(rev.size(), 1u);
  EXPECT_EQ(rev[0]["opcode"], read_only);
  EXPECT_EQ(rev[0]["psn"], 8);
  EXPECT_EQ(rev[0]["payload"], 0);
}

class wrap : public ::testing::TestWithParam<const char*> {};

TEST_P(wrap, psn_wrap_during_a_write_retransmission) {
  // 4 x 1024 from PSN 0xfffffe: PSNs fffffe, ffffff, 0, 1. PSN 0 is lost once. With nak_threshold 1 the
  // responder NAKs PSN 0 when PSN 1 arrives. Selective resends PSN 0 alone (1 retransmission); go-back-N
  // resends 0 and 1 (2), the second copy of 1 a duplicate at the responder.
  ops_bench_config cfg;
  fixed_psns(cfg, 0xfffffe, 1024);
  cfg.a.retransmission = cfg.b.retransmission = GetParam();
  cfg.b.nak_threshold_packets = 1;
  cfg.forward_faults.drop_psns = {{0u, 1u}};
  cfg.ops = {{rdma_op::write, 4096}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  const bool gbn = std::string(GetParam()) == "go_back_n";
  const auto fwd = data_of(r["forward"]);
  const std::vector<uint32_t> psns = gbn ? std::vector<uint32_t>{0xfffffe, 0xffffff, 0, 1, 0, 1}
                                         : std::vector<uint32_t>{0xfffffe, 0xffffff, 0, 1, 0};
  ASSERT_EQ(fwd.size(), psns.size());
  for (size_t i = 0; i < psns.size(); ++i) EXPECT_EQ(fwd[i]["psn"], psns[i]) << i;
  EXPECT_EQ(r["a"]["tx_retransmitted"], gbn ? 2u : 1u);
  EXPECT_EQ(r["b"]["tx_nak"], 1u);
  EXPECT_EQ(r["b"]["rx_duplicate"], gbn ? 1u : 0u);
  EXPECT_EQ(r["a"]["timeouts"], 0u);
}

TEST_P(wrap, psn_wrap_during_a_read_response_loss) {
  // READ of 4 x 1024 from PSN 0xfffffe: responses fffffe, ffffff, 0, 1; the response PSN 0 is lost. With
  // nak_threshold 1 the requester re-issues when response 1 arrives (one beyond the gap). Selective asks for
  // the run of missing responses only: a request at PSN 0 for 1024 bytes at offset 2048. Go-back-N asks for
  // the rest of the message: PSN 0 for 2048 bytes, whose second response (PSN 1) is then a duplicate.
  ops_bench_config cfg;
  fixed_psns(cfg, 0xfffffe, 1024);
  cfg.a.retransmission = cfg.b.retransmission = GetParam();
  cfg.a.nak_threshold_packets = 1;
  cfg.reverse_faults.drop_psns = {{0u, 1u}};
  cfg.ops = {{rdma_op::read, 4096}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  const bool gbn = std::string(GetParam()) == "go_back_n";
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_EQ(fwd[1]["opcode"], read_request);
  EXPECT_EQ(fwd[1]["psn"], 0);
  EXPECT_EQ(fwd[1]["dma_length"], gbn ? 2048 : 1024);
  EXPECT_EQ(fwd[1]["va"], fwd[0]["va"].get<uint64_t>() + 2048);
  EXPECT_EQ(r["a"]["read_reissues"], 1u);
  EXPECT_EQ(r["a"]["rx_duplicate_responses"], gbn ? 1u : 0u);
  EXPECT_EQ(r["b"]["tx_read_responses"], gbn ? 6u : 5u);
}

INSTANTIATE_TEST_SUITE_P(modes, wrap, ::testing::Values("selective", "go_back_n"));

TEST(supernic_ops, duplicated_packets_are_placed_once_and_reacknowledged) {
  // Every packet of a 3-packet WRITE arrives twice: 3 duplicates at the responder, no retransmission, one
  // completion, memory exact.
  ops_bench_config cfg;
  fixed_psns(cfg, 1000, 1024);
  cfg.forward_faults.duplicate_probability = 1.0;
  cfg.ops = {{rdma_op::write, 3000}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  EXPECT_EQ(r["forward_duplicated"], 3u);
  EXPECT_EQ(r["b"]["rx_duplicate"], 3u);
  EXPECT_EQ(r["a"]["tx_retransmitted"], 0u);
}

TEST(supernic_ops, a_lost_ack_is_recovered_by_the_timeout) {
  // One WRITE ONLY at PSN 5; its ACK (PSN 5) is lost. Nothing else can reveal it: after rto_us (65.536 us)
  // the requester resends PSN 5 (una, and the tail probe, the same PSN: once), the responder sees a
  // duplicate and ACKs again, and the WRITE completes a little after 65.536 us.
  ops_bench_config cfg;
  fixed_psns(cfg, 5, 4096);
  cfg.reverse_faults.drop_psns = {{5u, 1u}};
  cfg.ops = {{rdma_op::write, 100}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  EXPECT_EQ(r["reverse_dropped"], 1u);
  EXPECT_EQ(r["a"]["timeouts"], 1u);
  EXPECT_EQ(r["a"]["tx_retransmitted"], 1u);
  EXPECT_EQ(r["b"]["rx_duplicate"], 1u);
  const double t = r["completions"][0]["t_ns"];
  EXPECT_GT(t, 65536.0);
  EXPECT_LT(t, 65536.0 + 5000.0);  // plus a round trip of a few hundred ns
}

// A burst of 16 consecutive losses (PSNs 10-25 of a 64-packet WRITE, MTU 1024, links 400G with 110 ns of
// FEC + flight each, two per direction: a round trip is at least 4 x 110 = 440 ns). selective learns of one
// hole per round trip (the responder NAKs the hole its head stands at; the resend moves the head to the next
// hole), so it needs at least 15 round trips more than a clean run. sack learns of every hole from the SACKs
// of PSNs 26-29 (sack_reorder_packets 4: PSN 26 shows 10-22 lost, 27-29 show 23-25), resends each once
// within about one round trip, and finishes less than 4 round trips after the clean run (16 resends of
// 1102 wire bytes take 16 x 22 ns = 0.35 us, plus one round trip). No NAK, no timeout.
TEST(supernic_ops, sack_resends_a_burst_of_losses_in_one_round_trip) {
  auto config = [](const char* mode, bool lose) {
    ops_bench_config cfg;
    fixed_psns(cfg, 0, 1024);
    cfg.a.retransmission = cfg.b.retransmission = mode;
    cfg.a.sack_reorder_packets = cfg.b.sack_reorder_packets = 4;
    cfg.a.nak_threshold_packets = cfg.b.nak_threshold_packets = 4;
    if (lose)
      for (uint32_t psn = 10; psn <= 25; ++psn) cfg.forward_faults.drop_psns[psn] = 1;
    cfg.ops = {{rdma_op::write, 64 * 1024}};
    return cfg;
  };
  const json clean = run(config("sack", false));
  const json sack = run(config("sack", true));
  const json selective = run(config("selective", true));
  expect_all_done(clean, 1);
  expect_all_done(sack, 1);
  expect_all_done(selective, 1);
  EXPECT_EQ(sack["forward_dropped"], 16u);
  EXPECT_EQ(sack["a"]["tx_retransmitted"], 16u);  // each hole once, nothing else
  EXPECT_EQ(sack["a"]["sack_lost"], 16u);
  EXPECT_EQ(sack["a"]["timeouts"], 0u);
  EXPECT_EQ(sack["b"]["tx_nak"], 0u);
  // At least the SACKs of 26-29 (they reveal the holes), at most one per original beyond the burst (26-63).
  EXPECT_GE(sack["b"]["tx_sacks"].get<uint64_t>(), 4u);
  EXPECT_LE(sack["b"]["tx_sacks"].get<uint64_t>(), 64u - 26u);
  EXPECT_EQ(clean["a"]["tx_retransmitted"], 0u);
  EXPECT_EQ(clean["b"]["tx_sacks"], 0u);
  const double round_trip_ns = 440.0;
  const double t_clean = clean["completions"][0]["t_ns"], t_sack = sack["completions"][0]["t_ns"],
               t_selective = selective["completions"][0]["t_ns"];
  EXPECT_LT(t_sack - t_clean, 4 * round_trip_ns);
  EXPECT_GT(t_selective - t_clean, 15 * round_trip_ns);
}

TEST(supernic_ops, read_responses_reordered_are_placed_at_their_offsets) {
  // A READ of 8 x 1024 whose 8 responses come back reversed (LAST first): all placed, no re-issue (the
  // default threshold, min(2048, window/2 = 128), is far beyond a distance of 7), no duplicate.
  ops_bench_config cfg;
  fixed_psns(cfg, 0xfffffc, 1024);
  cfg.reverse_order = reorder_box::order::reverse;
  cfg.reverse_batch = 9;  // the 8 responses and the ACK of the READ's PSNs (sent first: ACKs go before data)
  cfg.ops = {{rdma_op::read, 8192}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  const auto rev = data_of(r["reverse"]);
  ASSERT_EQ(rev.size(), 8u);
  ASSERT_EQ(r["reverse"].size(), 9u);
  EXPECT_EQ(r["reverse"][0]["opcode"], ack);
  EXPECT_EQ(rev[0]["opcode"], read_first);
  EXPECT_EQ(rev[7]["opcode"], read_last);
  EXPECT_EQ(r["a"]["read_reissues"], 0u);
  EXPECT_EQ(r["a"]["rx_duplicate_responses"], 0u);
  EXPECT_EQ(r["a"]["tx_retransmitted"], 0u);
}

TEST(supernic_ops, write_with_immediate_consumes_a_receive) {
  // Two receives posted (wr_id 100, 101). WRITE_IMM of 3000 at MTU 1024: FIRST, MIDDLE, LAST WITH IMMEDIATE
  // (0x09, immediate 0xabcd); WRITE_IMM of 8: ONLY WITH IMMEDIATE (0x0b, 0x1234). Each consumes one receive
  // in order; the receive completions carry the immediates and the WRITEs' lengths; the data went to the
  // RETH addresses.
  ops_bench_config cfg;
  fixed_psns(cfg, 0, 1024);
  cfg.receives = {64, 64};
  cfg.ops = {{rdma_op::write_imm, 3000, 0, 0xabcd}, {rdma_op::write_imm, 8, 0, 0x1234}};
  const json r = run(cfg);
  expect_all_done(r, 2);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 4u);
  EXPECT_EQ(fwd[0]["opcode"], write_first);
  EXPECT_EQ(fwd[1]["opcode"], write_middle);
  EXPECT_EQ(fwd[2]["opcode"], write_last_imm);
  EXPECT_EQ(fwd[2]["imm"], true);
  EXPECT_EQ(fwd[2]["imm_value"], 0xabcd);
  EXPECT_EQ(fwd[1]["imm"], false);
  EXPECT_EQ(fwd[3]["opcode"], write_only_imm);
  EXPECT_EQ(fwd[3]["reth"], true);
  ASSERT_EQ(r["recv_completions"].size(), 2u);
  EXPECT_EQ(r["recv_completions"][0]["wr_id"], 100);
  EXPECT_EQ(r["recv_completions"][0]["op"], "write_imm");
  EXPECT_EQ(r["recv_completions"][0]["imm"], 0xabcd);
  EXPECT_EQ(r["recv_completions"][0]["bytes"], 3000);
  EXPECT_EQ(r["recv_completions"][1]["wr_id"], 101);
  EXPECT_EQ(r["recv_completions"][1]["imm"], 0x1234);
  EXPECT_EQ(r["b"]["recv_consumed"], 2u);
}

TEST(supernic_ops, sends_land_in_posted_buffers_in_any_arrival_order) {
  // Receives of 10000 and 5000 bytes (wr_id 100, 101), then SENDs of 9000 and 4000 at MTU 1024 (9 and 4
  // packets: FIRST, 7 MIDDLE, LAST; FIRST, 2 MIDDLE, LAST) and a SEND with immediate of 16 bytes (ONLY WITH
  // IMMEDIATE) into a third receive of 16. The 14 packets arrive in a seeded shuffle; each SEND's bytes are
  // in its own buffer and the receive completions come in posting order with the SENDs' lengths.
  ops_bench_config cfg;
  fixed_psns(cfg, 0xfffff8, 1024);
  cfg.receives = {10000, 5000, 16};
  cfg.forward_order = reorder_box::order::shuffle;
  cfg.forward_batch = 14;
  cfg.forward_expected = 14;
  cfg.ops = {{rdma_op::send, 9000}, {rdma_op::send, 4000}, {rdma_op::send_imm, 16, 0, 77}};
  const json r = run(cfg);
  expect_all_done(r, 3);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 14u);
  EXPECT_EQ(fwd[0]["opcode"], send_first);
  for (size_t i = 1; i < 8; ++i) EXPECT_EQ(fwd[i]["opcode"], send_middle);
  EXPECT_EQ(fwd[8]["opcode"], send_last);
  EXPECT_EQ(fwd[8]["payload"], 9000 - 8 * 1024);
  EXPECT_EQ(fwd[8]["reth"], false);
  EXPECT_EQ(fwd[13]["opcode"], send_only_imm);
  EXPECT_EQ(fwd[13]["imm_value"], 77);
  ASSERT_EQ(r["recv_completions"].size(), 3u);
  EXPECT_EQ(r["recv_completions"][0]["wr_id"], 100);
  EXPECT_EQ(r["recv_completions"][0]["bytes"], 9000);
  EXPECT_EQ(r["recv_completions"][1]["wr_id"], 101);
  EXPECT_EQ(r["recv_completions"][1]["bytes"], 4000);
  EXPECT_EQ(r["recv_completions"][2]["op"], "send_imm");
  EXPECT_EQ(r["recv_completions"][2]["imm"], 77);
  EXPECT_GT(r["b"]["rx_out_of_order"].get<uint64_t>(), 0u);  // the shuffle did reorder
}

TEST(supernic_ops, a_send_without_a_receive_gets_rnr_naks_until_one_is_posted) {
  // A SEND ONLY of 100 bytes with no receive posted; one is posted at 30 us. Each try: the SEND is ready at
  // 200 ns (wqe latency), takes two 110 ns hops to the responder, the RNR NAK 200 ns (rx latency) and two hops
  // back: a round trip of about 0.65 us, then rnr_timer_us 10.24 us of waiting. Tries reach the responder at
  // about 0.4, 11.3, 22.2 and 33.1 us: the first three find no receive (3 RNR NAKs), the fourth lands.
  ops_bench_config cfg;
  fixed_psns(cfg, 40, 4096);
  cfg.late_receive_ns = 30000;
  cfg.late_receive_bytes = 128;
  cfg.ops = {{rdma_op::send, 100}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  EXPECT_EQ(r["b"]["tx_rnr_nak"], 3u);
  EXPECT_EQ(r["a"]["rx_rnr_nak"], 3u);
  ASSERT_EQ(r["recv_completions"].size(), 1u);
  EXPECT_EQ(r["recv_completions"][0]["bytes"], 100);
  const double t = r["completions"][0]["t_ns"];
  EXPECT_GT(t, 30000.0);
  EXPECT_LT(t, 36000.0);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 4u);
  EXPECT_EQ(fwd[0]["opcode"], send_only);
  for (const auto& f : fwd) EXPECT_EQ(f["psn"], 40);
}

TEST(supernic_ops, rnr_retries_run_out_with_a_finite_rnr_retry_count) {
  // rnr_retry_count 1 and no receive ever: the first RNR NAK is retry 1 (allowed), the second exceeds it and
  // the SEND completes with rnr_retry_exceeded; the WRITE behind it is flushed.
  ops_bench_config cfg;
  fixed_psns(cfg, 0, 4096);
  cfg.a.rnr_retry_count = 1;
  cfg.ops = {{rdma_op::send, 100}, {rdma_op::write, 100}};
  const json r = run(cfg);
  ASSERT_EQ(r["completions"].size(), 2u);
  EXPECT_EQ(r["completions"][0]["status"], "rnr_retry_exceeded");
  EXPECT_EQ(r["completions"][1]["status"], "flushed");
  EXPECT_EQ(r["a"]["rx_rnr_nak"], 2u);
}

TEST(supernic_ops, a_send_longer_than_its_receive_is_a_length_error) {
  ops_bench_config cfg;
  fixed_psns(cfg, 0, 1024);
  cfg.receives = {1000};
  cfg.ops = {{rdma_op::send, 3000}};
  const json r = run(cfg);
  ASSERT_EQ(r["recv_completions"].size(), 1u);
  EXPECT_EQ(r["recv_completions"][0]["status"], "length_error");
}

TEST(supernic_ops, max_rd_atomic_serialises_reads_and_sq_depth_serialises_writes) {
  // Four 1-packet READs. With max_rd_atomic 1 each request waits for the previous READ's response: requests
  // are at least a round trip apart (4 hops of 110 ns plus the 200 ns rx latency = 640 ns). With 16 they go
  // back to back (a request is 8 + 14 + 20 + 8 + 12 + 16 RETH + 4 + 4 + 12 = 98 bytes on the wire: 2 ns at
  // 400 Gb/s).
  for (uint64_t limit : {1u, 16u}) {
    SCOPED_TRACE(limit);
    ops_bench_config cfg;
    fixed_psns(cfg, 0, 4096);
    cfg.a.max_rd_atomic = limit;
    cfg.ops = {{rdma_op::read, 64}, {rdma_op::read, 64}, {rdma_op::read, 64}, {rdma_op::read, 64}};
    const json r = run(cfg);
    expect_all_done(r, 4);
    const auto fwd = data_of(r["forward"]);
    ASSERT_EQ(fwd.size(), 4u);
    for (size_t i = 1; i < 4; ++i) {
      const double gap = fwd[i]["t_ns"].get<double>() - fwd[i - 1]["t_ns"].get<double>();
      if (limit == 1)
        EXPECT_GT(gap, 640.0);
      else
        EXPECT_LT(gap, 10.0);
    }
  }
  // sq_depth 1: a WRITE starts only when the one before it has been acknowledged.
  ops_bench_config cfg;
  fixed_psns(cfg, 0, 4096);
  cfg.a.sq_depth = 1;
  cfg.ops = {{rdma_op::write, 64}, {rdma_op::write, 64}};
  const json r = run(cfg);
  expect_all_done(r, 2);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 2u);
  EXPECT_GT(fwd[1]["t_ns"].get<double>() - fwd[0]["t_ns"].get<double>(), 640.0);
}

TEST(supernic_ops, per_flowlet_entropy_changes_port_only_after_an_idle_gap) {
  // Three WRITEs of 16 packets: at 0, 0 (back to back: same flowlet) and 20 us (idle far beyond the 1 us
  // gap: a new flowlet). Packets of one flowlet share one port; the QP picked exactly one new port.
  ops_bench_config cfg;
  fixed_psns(cfg, 0, 4096);
  cfg.a.path_entropy = "per_flowlet";
  cfg.a.flowlet_gap_ns = 1000;
  cfg.ops = {{rdma_op::write, 16 * 4096}, {rdma_op::write, 16 * 4096}, {rdma_op::write, 16 * 4096, 20000}};
  const json r = run(cfg);
  expect_all_done(r, 3);
  const auto fwd = data_of(r["forward"]);
  ASSERT_EQ(fwd.size(), 48u);
  std::set<int> first, second;
  for (size_t i = 0; i < 32; ++i) first.insert(fwd[i]["src_port"].get<int>());
  for (size_t i = 32; i < 48; ++i) second.insert(fwd[i]["src_port"].get<int>());
  EXPECT_EQ(first.size(), 1u);
  EXPECT_EQ(second.size(), 1u);
  EXPECT_EQ(r["a"]["flowlets"], 1u);
  // A new port is one of 16384: equal to the old one with probability 1/16384 (the seed is fixed).
  EXPECT_NE(*first.begin(), *second.begin());
}

TEST(supernic_ops, peak_reorder_occupancy_is_the_most_psns_held_beyond_the_head) {
  // 8 packets reversed: PSNs +7, +6, .. +1 arrive first and are held (7 beyond the head), then +0 moves the
  // head past all 8. Peak occupancy 7.
  ops_bench_config cfg;
  fixed_psns(cfg, 3, 1024);
  cfg.forward_order = reorder_box::order::reverse;
  cfg.forward_batch = 8;
  cfg.ops = {{rdma_op::write, 8192}};
  const json r = run(cfg);
  expect_all_done(r, 1);
  EXPECT_EQ(r["b"]["reorder_peak_packets"], 7u);
  EXPECT_EQ(r["b"]["rx_out_of_order"], 7u);
}

}  // namespace supernic_ops_test
}  // namespace fabricsim::test

namespace fabricsim::test {
namespace supernic_ops_test {

// A mix of every operation under seeded loss in both directions (and, without loss, a shuffled arrival
// order): every operation completes successfully, in posting order, and every byte is where it belongs.
struct mix_case {
  const char* mode;
  double loss;
  bool shuffle;
  uint64_t seed;
};
class mixed : public ::testing::TestWithParam<mix_case> {};

TEST_P(mixed, every_operation_completes_byte_exact) {
  const mix_case& c = GetParam();
  ops_bench_config cfg;
  fixed_psns(cfg, 0xffff00, 1024);
  cfg.seed = c.seed;
  cfg.a.retransmission = cfg.b.retransmission = c.mode;
  cfg.a.rto_us = cfg.b.rto_us = 8;  // short timeouts keep the lossy runs quick
  cfg.a.nak_threshold_packets = cfg.b.nak_threshold_packets = 4;
  cfg.forward_faults.drop_probability = cfg.reverse_faults.drop_probability = c.loss;
  uint64_t packets = 0;
  const rdma_op kinds[] = {rdma_op::write, rdma_op::read, rdma_op::send, rdma_op::write_imm, rdma_op::read,
                           rdma_op::send_imm};
  core::rng_stream sizes(c.seed);
  for (size_t i = 0; i < 24; ++i) {
    const rdma_op op = kinds[i % 6];
    const uint64_t bytes = sizes() % 20000;
    cfg.ops.push_back({op, bytes, 0, uint32_t(i)});
    if (op == rdma_op::send || op == rdma_op::send_imm || op == rdma_op::write_imm) cfg.receives.push_back(20000);
    if (op != rdma_op::read) packets += std::max<uint64_t>(1, (bytes + 1023) / 1024);
    else packets += 1;
  }
  if (c.shuffle) {
    cfg.forward_order = reorder_box::order::shuffle;
    cfg.forward_batch = 32;
    cfg.forward_expected = packets;
  }
  const json r = run(cfg);
  expect_all_done(r, cfg.ops.size());
  EXPECT_EQ(r["recv_completions"].size(), cfg.receives.size());
  for (size_t i = 0; i < r["recv_completions"].size(); ++i) {
    EXPECT_EQ(r["recv_completions"][i]["wr_id"], 100 + i);
    EXPECT_EQ(r["recv_completions"][i]["status"], "success");
  }
  if (c.loss > 0) {
    EXPECT_GT(r["forward_dropped"].get<uint64_t>() + r["reverse_dropped"].get<uint64_t>(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(ops, mixed,
                         ::testing::Values(mix_case{"selective", 0.0, true, 1}, mix_case{"go_back_n", 0.0, true, 2},
                                           mix_case{"sack", 0.0, true, 7}, mix_case{"sack", 0.03, false, 8},
                                           mix_case{"sack", 0.03, false, 9},
                                           mix_case{"selective", 0.03, false, 3},
                                           mix_case{"go_back_n", 0.03, false, 4},
                                           mix_case{"selective", 0.03, false, 5},
                                           mix_case{"go_back_n", 0.03, false, 6}));

}  // namespace supernic_ops_test
}  // namespace fabricsim::test
