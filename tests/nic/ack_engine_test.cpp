// The responder's acknowledgements (sc_models/nic/ack_engine.h), worked out by hand from its rules: with
// nic.rx_latency_ns 200, nic.ack_every_packets 4 and nic.nak_threshold_packets 3 (below half of
// reorder_window 16), on QPs whose first expected PSN is 1000.
#include "sc_models/nic/ack_engine.h"

#include <gtest/gtest.h>

#include "sc_models/nic/supernic.h"

namespace fabricsim::nic {
namespace ack_engine_test {

using core::picoseconds;

picoseconds ns(uint64_t v) { return picoseconds(v * 1000); }

struct fake_host final : ack_host {
  std::vector<uint32_t> heads;
  std::vector<picoseconds> wakes;
  uint32_t ack_head(size_t q) const override { return heads[q]; }
  void ack_wake(picoseconds ready) override { wakes.push_back(ready); }
};

struct bench {
  fake_host host;
  core::stats_registry stats;
  std::unique_ptr<ack_engine> acks;
  explicit bench(bool sacks = false, size_t qps = 1) {
    supernic_params p;
    p.rx_latency_ns = 200;
    p.ack_every_packets = 4;
    p.nak_threshold_packets = 3;
    p.reorder_window = 16;
    acks = std::make_unique<ack_engine>(p, sacks, host, "nic0", &stats);
    for (size_t q = 0; q < qps; ++q) {
      acks->add_qp();
      acks->connect(q, 1000);
      host.heads.push_back(1000);
    }
  }
  void move_head(size_t q, uint32_t head, picoseconds t) {
    host.heads[q] = head;
    acks->head_moved(q, t);
  }
  // The acknowledgement due at `t` (one must be).
  ack_frame next(picoseconds t) {
    ack_frame a;
    EXPECT_TRUE(acks->next(t, &a)) << "nothing due at " << t.value << " ps";
    return a;
  }
  bool none(picoseconds t) {
    ack_frame a;
    return !acks->next(t, &a);
  }
  uint64_t counter(const char* name) const { return stats.counter_value("nic0", name); }
};

TEST(ack_engine, one_ack_per_four_packets_covering_what_is_placed) {
  bench b;
  for (uint32_t k = 1; k <= 3; ++k) {
    b.move_head(0, 1000 + k, ns(k));
    b.acks->advanced(0, 1, false, ns(k));
  }
  EXPECT_EQ(b.acks->next_due(), ack_engine::never);  // 3 < 4: nothing owed yet
  b.move_head(0, 1004, ns(4));
  b.acks->advanced(0, 1, false, ns(4));  // the fourth: an ACK, placed 200 ns after the head passed it
  EXPECT_EQ(b.acks->next_due(), ns(204));
  EXPECT_EQ(b.host.wakes, std::vector<picoseconds>{ns(204)});
  EXPECT_TRUE(b.none(ns(203)));
  const ack_frame a = b.next(ns(204));
  EXPECT_EQ(a.psn, 1003u);  // PSNs 1000..1003 are in: the ACK names the last
  EXPECT_EQ(a.syndrome, ack_syndrome);
  EXPECT_FALSE(a.sack);
  EXPECT_EQ(b.counter("tx_acks"), 1u);
}

TEST(ack_engine, a_trigger_coalesced_into_a_queued_ack_gets_a_follow_up_once_placed) {
  bench b;
  b.move_head(0, 1001, ns(0));
  b.acks->advanced(0, 1, true, ns(0));  // a message end: at once, due 200
  b.move_head(0, 1002, ns(50));
  b.acks->advanced(0, 1, true, ns(50));  // coalesced into the queued one (due 250)
  EXPECT_EQ(b.host.wakes.size(), 1u);
  EXPECT_EQ(b.next(ns(200)).psn, 1000u);  // 1001 is not placed before 250
  EXPECT_EQ(b.acks->next_due(), ns(250));
  EXPECT_EQ(b.next(ns(250)).psn, 1001u);
  EXPECT_TRUE(b.none(ns(1000)));
}

TEST(ack_engine, the_queue_stays_in_time_order) {
  bench b(false, 2);
  b.acks->request(0, ns(10));  // due 210
  b.acks->request(1, ns(5));   // due 205, behind an entry due 210: 210
  EXPECT_TRUE(b.none(ns(209)));
  EXPECT_EQ(b.next(ns(210)).q, 0u);
  EXPECT_EQ(b.next(ns(210)).q, 1u);
}

TEST(ack_engine, nak_once_the_furthest_psn_is_three_beyond_the_gap) {
  bench b;  // 1000 is lost; 1001.. arrive and are held beyond the head
  b.acks->arrival(0, 1001, ns(1));
  b.acks->arrival(0, 1002, ns(2));  // 2 beyond the head: could be reordering
  EXPECT_EQ(b.acks->next_due(), ack_engine::never);
  b.acks->arrival(0, 1003, ns(3));  // 3 beyond: NAK the expected PSN
  const ack_frame a = b.next(ns(203));
  EXPECT_EQ(a.psn, 1000u);
  EXPECT_EQ(a.syndrome, nak_syndrome | nak_psn_sequence_error);
  b.acks->arrival(0, 1004, ns(4));  // the same gap: no second NAK
  EXPECT_TRUE(b.none(ns(10'000)));
  EXPECT_EQ(b.counter("tx_nak"), 1u);
}

TEST(ack_engine, recovering_naks_the_next_gap_at_once_when_its_head_move_is_placed) {
  bench b;
  for (uint32_t psn : {1001u, 1003u, 1004u}) b.acks->arrival(0, psn, ns(1));
  EXPECT_EQ(b.next(ns(201)).psn, 1000u);  // NAKed when 1003 came, 3 beyond 1000
  // The resend of 1000 comes: the head moves to 1002 (1002 lost too), 1004 is only 2 beyond it, but the QP is
  // recovering: NAKed without waiting for the threshold.
  b.move_head(0, 1002, ns(300));
  b.acks->arrival(0, 1000, ns(300));
  EXPECT_EQ(b.acks->next_due(), ns(500));
  const ack_frame a = b.next(ns(500));  // the head's move at 300 is placed at 500: the NAK may go
  EXPECT_EQ(a.psn, 1002u);
  EXPECT_EQ(a.syndrome, nak_syndrome);
}

TEST(ack_engine, a_nak_waits_until_the_heads_last_move_is_placed_and_names_the_head_then) {
  bench b;
  b.move_head(0, 1001, ns(100));                                                // placed at 300
  for (uint32_t psn : {1002u, 1003u, 1004u}) b.acks->arrival(0, psn, ns(100));  // 1004: NAK, due 300
  b.move_head(0, 1002, ns(150));  // 1001 came: the head stops at the next gap, placed at 350
  EXPECT_TRUE(b.none(ns(300)));   // the NAK acknowledges everything before the head: not before 350
  const ack_frame a = b.next(ns(350));
  EXPECT_EQ(a.syndrome, nak_syndrome);
  EXPECT_EQ(a.psn, 1002u);
}

TEST(ack_engine, a_nak_whose_gap_closed_before_it_left_goes_as_a_plain_ack) {
  bench b;
  b.move_head(0, 1001, ns(100));                                                // placed at 300
  for (uint32_t psn : {1002u, 1003u, 1004u}) b.acks->arrival(0, psn, ns(100));  // NAK for 1001, due 300
  b.move_head(0, 1005, ns(150));                                                // the gap closed (placed at 350)
  b.acks->arrival(0, 1001, ns(150));
  const ack_frame a = b.next(ns(300));
  EXPECT_EQ(a.syndrome, ack_syndrome);
  EXPECT_EQ(a.psn, 1000u);  // what is placed by 300
  EXPECT_EQ(b.counter("tx_nak"), 0u);
}

TEST(ack_engine, a_duplicate_makes_a_gap_at_the_head_a_loss) {
  bench b;
  b.acks->arrival(0, 1001, ns(1));    // 1 beyond the head: below the threshold
  b.acks->request(0, ns(2));          // the duplicate's re-acknowledgement
  b.acks->duplicate(0, 1000, ns(2));  // recovering: the gap at 1000 is NAKed at once, on the queued entry
  b.acks->arrival(0, 1002, ns(3));    // the same gap: no second NAK
  const ack_frame a = b.next(ns(203));
  EXPECT_EQ(a.syndrome, nak_syndrome);
  EXPECT_EQ(a.psn, 1000u);
  EXPECT_TRUE(b.none(ns(10'000)));
}

TEST(ack_engine, sack_names_each_out_of_order_arrival_oldest_first_and_never_naks) {
  bench b(true);
  for (uint32_t psn : {1002u, 1003u, 1004u, 1005u, 1006u}) EXPECT_TRUE(b.acks->sack(0, psn, ns(1)));
  for (uint32_t psn : {1001u, 1002u, 1003u, 1004u, 1005u, 1006u}) b.acks->arrival(0, psn, ns(1));
  for (uint32_t psn : {1002u, 1003u, 1004u, 1005u, 1006u}) {
    const ack_frame a = b.next(ns(201));  // the next one at once while SACKs remain
    EXPECT_EQ(a.syndrome, ack_syndrome);
    EXPECT_EQ(a.psn, 999u);  // nothing placed beyond the expected PSN 1000
    EXPECT_TRUE(a.sack);
    EXPECT_EQ(a.sack_psn, psn);
  }
  EXPECT_TRUE(b.none(ns(100'000)));
  EXPECT_EQ(b.counter("tx_sacks"), 5u);
  EXPECT_EQ(b.counter("tx_nak"), 0u);
}

TEST(ack_engine, sack_queue_holds_64_and_drops_the_oldest) {
  bench b(true);
  for (uint32_t k = 0; k < sack_queue_depth; ++k) EXPECT_TRUE(b.acks->sack(0, 1001 + k, ns(1)));
  EXPECT_FALSE(b.acks->sack(0, 1001 + 64, ns(1)));
  EXPECT_EQ(b.next(ns(201)).sack_psn, 1002u);  // 1001 was dropped
}

TEST(ack_engine, rnr_nak_names_the_psn_and_forgets_what_was_owed) {
  bench b(true);
  b.acks->sack(0, 1003, ns(1));
  b.move_head(0, 1002, ns(10));  // the head passes 1000, 1001 (placed at 210) ...
  b.host.heads[0] = 1001;        // ... then goes back: 1001 found no receive
  b.acks->rnr(0, 1001, ns(10));
  const ack_frame a = b.next(ns(210));
  EXPECT_EQ(a.psn, 1001u);
  EXPECT_EQ(a.syndrome, rnr_syndrome | rnr_timer_code_10us);
  EXPECT_FALSE(a.sack);  // the SACK queue was cleared
  EXPECT_TRUE(b.none(ns(100'000)));
  EXPECT_EQ(b.counter("tx_rnr_nak"), 1u);
  // After the RNR NAK the mark was clamped: an ACK now covers up to 1000 only.
  b.acks->request(0, ns(20'000));
  EXPECT_EQ(b.next(ns(20'200)).psn, 1000u);
}

TEST(ack_engine, nak_threshold_is_capped_at_half_the_reorder_window) {
  EXPECT_EQ(bench().acks->nak_threshold(), 3u);  // 3 < 16 / 2
  fake_host host;
  supernic_params p;
  p.nak_threshold_packets = 2048;
  p.reorder_window = 256;
  EXPECT_EQ(ack_engine(p, false, host, "nic0", nullptr).nak_threshold(), 128u);
}

TEST(ack_engine, cnps_leave_in_order_at_their_result_cycle) {
  bench b(false, 2);
  b.acks->cnp(1, ns(5));
  b.acks->cnp(0, ns(7));
  EXPECT_EQ(b.acks->cnp_due(), ns(5));
  size_t q = 9;
  EXPECT_FALSE(b.acks->next_cnp(ns(4), &q));
  EXPECT_TRUE(b.acks->next_cnp(ns(5), &q));
  EXPECT_EQ(q, 1u);
  EXPECT_FALSE(b.acks->next_cnp(ns(6), &q));
  EXPECT_TRUE(b.acks->next_cnp(ns(7), &q));
  EXPECT_EQ(q, 0u);
  EXPECT_EQ(b.acks->cnp_due(), ack_engine::never);
  EXPECT_EQ(b.counter("tx_cnps"), 2u);
}

}  // namespace ack_engine_test
}  // namespace fabricsim::nic
