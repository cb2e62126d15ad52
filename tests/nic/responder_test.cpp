// The SuperNIC responder (sc_models/nic/responder.h) on its own, with the reorder tracker's reference model and
// the ack engine, against cases worked out by hand: path MTU 1024, reorder_window 64, rx_latency_ns 200, one QP
// (QPN 2) whose first expected PSN is 1000, one region [0x10000, +0x10000) with R_Key 1 in 1 MiB of memory.
#include "sc_models/nic/responder.h"

#include <gtest/gtest.h>

#include "sc_models/nic/block_lockstep.h"
#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {
namespace responder_test {

using core::bth_opcode;
using core::packet;
using core::picoseconds;

picoseconds ns(uint64_t v) { return picoseconds(v * 1000); }

struct landed {
  uint64_t va;
  uint32_t psn, bytes;
  bool operator==(const landed& o) const { return va == o.va && psn == o.psn && bytes == o.bytes; }
};

struct fake_rx_host final : responder_host {
  std::vector<landed> writes;
  std::vector<placed_message> placed;
  std::vector<picoseconds> queued;
  bool bounce = false;  // READ data must be staged first
  void place_payload(uint64_t va, const packet* p) override { writes.push_back({va, p->bth.psn, p->payload_bytes}); }
  void message_placed(const placed_message& m) override { placed.push_back(m); }
  picoseconds response_ready(size_t, uint64_t, uint64_t, picoseconds ready) override {
    return bounce ? responder::never : ready;
  }
  void response_queued(picoseconds ready) override { queued.push_back(ready); }
};

struct head_of final : ack_host {
  const responder* rx = nullptr;
  uint32_t ack_head(size_t q) const override { return rx->head(q); }
  void ack_wake(picoseconds) override {}
};

struct bench {
  fake_rx_host host;
  head_of heads;
  core::packet_pool pool;
  core::stats_registry stats;
  shared_counters shared;
  std::unique_ptr<ack_engine> acks;
  std::unique_ptr<responder> rx;
  bench() {
    supernic_params p;
    p.rx_latency_ns = 200;
    p.ack_every_packets = 4;
    p.nak_threshold_packets = 3;
    p.reorder_window = 64;
    acks = std::make_unique<ack_engine>(p, false, heads, "nic0", &stats);
    rx = std::make_unique<responder>(p, *acks, false, host, pool, shared, "nic0", &stats);
    heads.rx = rx.get();
    EXPECT_EQ(rx->register_region(0x10000, 0x10000), 1u);
    rx->set_memory_size(1 << 20);
    acks->add_qp();
    rx->add_qp(2, make_nic_reorder_tracker("ref", 64, 0, {"nic0", "qp 2", nullptr}));
    acks->connect(0, 1000);
    rx->connect(0, 1000, 1024);
  }
  ~bench() { rx.reset(); }
  packet* make(bth_opcode op, uint32_t psn, uint32_t payload) {
    packet* p = pool.acquire();
    p->bth.opcode = op;
    p->bth.psn = psn;
    p->bth.dest_qp = 2;
    p->payload_bytes = payload;
    return p;
  }
  void arrive(bth_opcode op, uint32_t psn, uint32_t payload, picoseconds t) {
    rx->receive(0, make(op, psn, payload), t);
  }
  void arrive_first(bth_opcode op, uint32_t psn, uint32_t payload, uint64_t va, uint32_t rkey, uint32_t length,
                    picoseconds t) {
    packet* p = make(op, psn, payload);
    p->has_reth = true;
    p->reth = {va, rkey, length};
    rx->receive(0, p, t);
  }
  uint64_t counter(const char* name) const { return stats.counter_value("nic0", name); }
  ack_frame next_ack(picoseconds t) {
    ack_frame a;
    EXPECT_TRUE(acks->next(t, &a)) << "no acknowledgement due at " << t.value << " ps";
    return a;
  }
};

TEST(responder, a_write_in_order_lands_at_its_offsets_and_is_placed_when_the_head_passes_its_last) {
  bench b;
  // 3000 bytes at MTU 1024: 1024 + 1024 + 952, at 0x10000, 0x10400 and 0x10800.
  b.arrive_first(bth_opcode::rc_rdma_write_first, 1000, 1024, 0x10000, 1, 3000, ns(10));
  b.arrive(bth_opcode::rc_rdma_write_middle, 1001, 1024, ns(20));
  EXPECT_TRUE(b.host.placed.empty());
  b.arrive(bth_opcode::rc_rdma_write_last, 1002, 952, ns(30));
  EXPECT_EQ(b.host.writes, (std::vector<landed>{{0x10000, 1000, 1024}, {0x10400, 1001, 1024}, {0x10800, 1002, 952}}));
  ASSERT_EQ(b.host.placed.size(), 1u);
  EXPECT_EQ(b.host.placed[0].qpn, 2u);
  EXPECT_EQ(b.host.placed[0].va, 0x10000u);
  EXPECT_EQ(b.host.placed[0].bytes, 3000u);
  EXPECT_EQ(b.host.placed[0].first_arrival, ns(10));
  EXPECT_EQ(b.host.placed[0].placed_at, ns(30));
  EXPECT_EQ(b.rx->head(0), 1003u);
  EXPECT_EQ(b.rx->msn(0), 1u);
  EXPECT_EQ(b.rx->placed_bytes(0), 3000u);
  EXPECT_EQ(b.shared.placed_bytes, 3000u);
  EXPECT_EQ(b.counter("rx_in_order"), 3u);
  // The message end asks for an ACK at once: due rx_latency after the LAST, naming it.
  EXPECT_EQ(b.acks->next_due(), ns(230));
  EXPECT_EQ(b.next_ack(ns(230)).psn, 1002u);
}

TEST(responder, packets_that_overtook_their_first_wait_in_the_stash_and_land_with_it) {
  bench b;
  b.arrive(bth_opcode::rc_rdma_write_last, 1002, 952, ns(10));
  b.arrive(bth_opcode::rc_rdma_write_middle, 1001, 1024, ns(20));
  EXPECT_TRUE(b.host.writes.empty());  // no RETH yet: nowhere to put them
  EXPECT_EQ(b.counter("rx_deferred"), 2u);
  EXPECT_EQ(b.counter("rx_out_of_order"), 2u);
  EXPECT_EQ(b.counter("reorder_peak_packets"), 2u);
  EXPECT_EQ(b.rx->head(0), 1000u);
  b.arrive_first(bth_opcode::rc_rdma_write_first, 1000, 1024, 0x10000, 1, 3000, ns(30));
  // The FIRST lands, then the stashed packets in PSN order.
  EXPECT_EQ(b.host.writes, (std::vector<landed>{{0x10000, 1000, 1024}, {0x10400, 1001, 1024}, {0x10800, 1002, 952}}));
  ASSERT_EQ(b.host.placed.size(), 1u);
  EXPECT_EQ(b.host.placed[0].first_arrival, ns(30));  // known from its FIRST
  EXPECT_EQ(b.host.placed[0].placed_at, ns(30));
  EXPECT_EQ(b.rx->head(0), 1003u);
  EXPECT_EQ(b.rx->msn(0), 1u);
}

TEST(responder, a_send_goes_into_the_posted_receive_only_once_the_head_reaches_it) {
  bench b;
  b.rx->post_recv(0, 77, 0x20000, 4096);
  b.arrive(bth_opcode::rc_send_last, 1001, 500, ns(10));  // ahead of its FIRST: which receive is not known
  EXPECT_TRUE(b.host.writes.empty());
  EXPECT_TRUE(b.rx->recv_completions().empty());
  b.arrive(bth_opcode::rc_send_first, 1000, 1024, ns(20));
  EXPECT_EQ(b.host.writes, (std::vector<landed>{{0x20000, 1000, 1024}, {0x20400, 1001, 500}}));
  ASSERT_EQ(b.rx->recv_completions().size(), 1u);
  const recv_completion& c = b.rx->recv_completions()[0];
  EXPECT_EQ(c.wr_id, 77u);
  EXPECT_EQ(c.bytes, 1524u);
  EXPECT_EQ(c.op, rdma_op::send);
  EXPECT_EQ(c.status, completion_status::success);
  EXPECT_EQ(c.completed_at, ns(20));
  ASSERT_EQ(b.host.placed.size(), 1u);
  EXPECT_EQ(b.host.placed[0].va, 0x20000u);
  EXPECT_EQ(b.host.placed[0].bytes, 1524u);
  EXPECT_EQ(b.counter("recv_consumed"), 1u);
  EXPECT_EQ(b.rx->msn(0), 1u);
}

TEST(responder, a_send_longer_than_its_receive_completes_with_a_length_error) {
  bench b;
  b.rx->post_recv(0, 5, 0x20000, 1000);
  b.arrive(bth_opcode::rc_send_first, 1000, 1024, ns(10));  // 1024 > 1000: not written
  b.arrive(bth_opcode::rc_send_last, 1001, 8, ns(20));      // offset 1024 + 8 > 1000: not written either
  EXPECT_TRUE(b.host.writes.empty());
  ASSERT_EQ(b.rx->recv_completions().size(), 1u);
  EXPECT_EQ(b.rx->recv_completions()[0].status, completion_status::length_error);
  EXPECT_EQ(b.rx->recv_completions()[0].bytes, 0u);
  EXPECT_TRUE(b.host.placed.empty());
}

TEST(responder, a_send_with_no_receive_posted_takes_the_head_back_and_owes_an_rnr_nak) {
  bench b;
  b.arrive(bth_opcode::rc_send_only, 1000, 100, ns(10));
  EXPECT_EQ(b.rx->head(0), 1000u);  // not accepted
  EXPECT_TRUE(b.host.writes.empty());
  EXPECT_TRUE(b.rx->recv_completions().empty());
  const ack_frame a = b.next_ack(ns(210));
  EXPECT_EQ(a.psn, 1000u);
  EXPECT_EQ(a.syndrome, rnr_syndrome | rnr_timer_code_10us);
  // The requester resends after its RNR timer, with a receive posted meanwhile: accepted now.
  b.rx->post_recv(0, 9, 0x30000, 4096);
  b.arrive(bth_opcode::rc_send_only, 1000, 100, ns(20000));
  EXPECT_EQ(b.rx->head(0), 1001u);
  EXPECT_EQ(b.host.writes, (std::vector<landed>{{0x30000, 1000, 100}}));
  ASSERT_EQ(b.rx->recv_completions().size(), 1u);
  EXPECT_EQ(b.rx->recv_completions()[0].wr_id, 9u);
}

TEST(responder, a_write_with_immediate_without_a_receive_gives_its_last_bytes_back) {
  bench b;
  packet* p = b.make(bth_opcode::rc_rdma_write_only_imm, 1000, 100);
  p->has_reth = true;
  p->reth = {0x10000, 1, 100};
  p->immediate = 0xabcd;
  b.rx->receive(0, p, ns(10));
  EXPECT_EQ(b.rx->head(0), 1000u);       // RNR at its LAST (its ONLY)
  EXPECT_EQ(b.rx->placed_bytes(0), 0u);  // the 100 bytes written are taken back: they come again
  EXPECT_TRUE(b.host.placed.empty());
  EXPECT_EQ(b.next_ack(ns(210)).syndrome, rnr_syndrome | rnr_timer_code_10us);
  b.rx->post_recv(0, 11, 0x30000, 0);  // a WRITE with immediate needs a receive, not its buffer
  p = b.make(bth_opcode::rc_rdma_write_only_imm, 1000, 100);
  p->has_reth = true;
  p->reth = {0x10000, 1, 100};
  p->immediate = 0xabcd;
  b.rx->receive(0, p, ns(20000));
  ASSERT_EQ(b.rx->recv_completions().size(), 1u);
  EXPECT_EQ(b.rx->recv_completions()[0].op, rdma_op::write_imm);
  EXPECT_EQ(b.rx->recv_completions()[0].imm, 0xabcdu);
  EXPECT_EQ(b.rx->recv_completions()[0].bytes, 100u);
  ASSERT_EQ(b.host.placed.size(), 1u);
  EXPECT_EQ(b.rx->placed_bytes(0), 100u);
}

TEST(responder, a_read_request_queues_one_response_per_mtu_and_moves_the_head_past_them) {
  bench b;
  // 2500 bytes at MTU 1024: 3 responses, PSNs 1000..1002, ready rx_latency after the request.
  b.arrive_first(bth_opcode::rc_rdma_read_request, 1000, 0, 0x10000, 1, 2500, ns(50));
  const core::ring<read_job>& jobs = b.rx->responses(0);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs.front().first_psn, 1000u);
  EXPECT_EQ(jobs.front().packets, 3u);
  EXPECT_EQ(jobs.front().k, 0u);
  EXPECT_EQ(jobs.front().va, 0x10000u);
  EXPECT_EQ(jobs.front().length, 2500u);
  EXPECT_EQ(jobs.front().ready, ns(250));
  EXPECT_EQ(b.host.queued, std::vector<picoseconds>{ns(250)});
  EXPECT_EQ(b.rx->head(0), 1003u);
  EXPECT_EQ(b.rx->msn(0), 1u);
  EXPECT_TRUE(b.host.placed.empty());  // a READ is answered, not placed
  // The next request's PSN comes after the READ's three.
  b.arrive_first(bth_opcode::rc_rdma_write_only, 1003, 10, 0x10000, 1, 10, ns(60));
  EXPECT_EQ(b.counter("rx_in_order"), 2u);  // packets, not PSNs: the READ and the WRITE
  EXPECT_EQ(b.rx->head(0), 1004u);
}

TEST(responder, a_read_whose_data_needs_a_bounce_copy_waits_for_it) {
  bench b;
  b.host.bounce = true;
  b.arrive_first(bth_opcode::rc_rdma_read_request, 1000, 0, 0x10000, 1, 100, ns(50));
  ASSERT_EQ(b.rx->responses(0).size(), 1u);
  EXPECT_EQ(b.rx->responses(0).front().ready, responder::never);
  EXPECT_EQ(b.host.queued, std::vector<picoseconds>{responder::never});
}

TEST(responder, requests_outside_every_region_are_counted_and_not_served) {
  bench b;
  b.arrive_first(bth_opcode::rc_rdma_read_request, 1000, 0, 0x10000, 2, 1024, ns(10));  // no R_Key 2
  EXPECT_TRUE(b.rx->responses(0).empty());
  // R_Key 1, but 0x1ff00 + 0x200 runs past the region's end at 0x20000.
  b.arrive_first(bth_opcode::rc_rdma_write_only, 1001, 0x200, 0x1ff00, 1, 0x200, ns(20));
  EXPECT_TRUE(b.host.writes.empty());
  EXPECT_TRUE(b.host.placed.empty());
  EXPECT_EQ(b.shared.access_errors, 2u);
  EXPECT_EQ(b.rx->head(0), 1002u);  // both PSNs are consumed: the requester's retries run out
}

TEST(responder, a_duplicate_is_acknowledged_again_and_not_placed_twice) {
  bench b;
  b.arrive_first(bth_opcode::rc_rdma_write_only, 1000, 64, 0x10000, 1, 64, ns(10));
  ack_frame a = b.next_ack(ns(210));
  EXPECT_EQ(a.psn, 1000u);
  b.arrive_first(bth_opcode::rc_rdma_write_only, 1000, 64, 0x10000, 1, 64, ns(300));
  EXPECT_EQ(b.counter("rx_duplicate"), 1u);
  EXPECT_EQ(b.host.writes.size(), 1u);
  EXPECT_EQ(b.host.placed.size(), 1u);
  a = b.next_ack(ns(500));  // the first ACK may have been lost: another, rx_latency later
  EXPECT_EQ(a.psn, 1000u);
  EXPECT_EQ(a.syndrome, ack_syndrome);
}

TEST(responder, a_packet_beyond_the_window_is_dropped) {
  bench b;
  b.arrive_first(bth_opcode::rc_rdma_write_only, 1064, 64, 0x10000, 1, 64, ns(10));  // head 1000 + window 64
  EXPECT_EQ(b.counter("rx_out_of_window"), 1u);
  EXPECT_TRUE(b.host.writes.empty());
  EXPECT_EQ(b.rx->head(0), 1000u);
}

}  // namespace responder_test
}  // namespace fabricsim::nic
