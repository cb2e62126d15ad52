// Link timing (serialization, propagation, FEC) and the FIFO egress port (commit at enqueue, tail drop),
// against hand calculations.
#include "sc_models/core/link.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "sc_models/core/egress_port.h"
#include "tests/support/link_rig.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace link_test {

using namespace fabricsim::core;
using nlohmann::json;

struct recorder : packet_sink {
  explicit recorder(sim_context& c) : ctx(c) {}
  void receive(packet* p, unsigned port) override {
    arrivals.push_back({{"t_ps", now().value}, {"id", p->id}, {"port", port}});
    ctx.pool.release(p);
  }
  sim_context& ctx;
  json arrivals = json::array();
};

TEST(link, back_to_back_frames_arrive_serialization_plus_latency_apart) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    link_params lp;
    lp.rate_gbps = 400;
    lp.propagation_ns = 25;
    lp.fec_latency_ns = 100;
    link l("l", lp, ctx);
    recorder r(ctx);
    l.bind(r, 3);
    // Three 4178-byte frames given to the wire at t = 0 (first bit of each as soon as the wire is free).
    picoseconds free{};
    for (int i = 0; i < 3; ++i) free = l.transmit(write_middle_4096(ctx), free);
    sc_core::sc_start();
    json out = {{"arrivals", r.arrivals}, {"events", ctx.events}, {"hops", ctx.packet_hops},
                {"in_use", ctx.pool.in_use()}};
    return out.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  // serialization 4178 B * 8 / 400 Gb/s = 83.56 ns; latency 25 + 100 ns.
  ASSERT_EQ(r["arrivals"].size(), 3u);
  EXPECT_EQ(r["arrivals"][0]["t_ps"], 83560u + 125000u);
  EXPECT_EQ(r["arrivals"][1]["t_ps"], 2 * 83560u + 125000u);
  EXPECT_EQ(r["arrivals"][2]["t_ps"], 3 * 83560u + 125000u);
  EXPECT_EQ(r["arrivals"][0]["port"], 3);
  EXPECT_EQ(r["hops"], 3u);
  EXPECT_EQ(r["events"], 3u);  // one kernel event per delivered frame
  EXPECT_EQ(r["in_use"], 0u);
}

TEST(egress_port, fifo_queues_behind_the_wire_and_tail_drops_beyond_its_buffer) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    link_params lp;
    lp.rate_gbps = 800;
    lp.propagation_ns = 0;
    lp.fec_latency_ns = 0;
    link l("l", lp, ctx);
    recorder r(ctx);
    l.bind(r, 0);
    // Room for two 4178-byte frames, not three.
    egress_port port("port", l, bytes(2 * 4178), ctx);
    json accepted = json::array();
    for (int i = 0; i < 3; ++i) {
      packet* p = write_middle_4096(ctx);
      const bool ok = port.enqueue(p, picoseconds(1000));
      if (!ok) ctx.pool.release(p);
      accepted.push_back(ok);
    }
    const uint64_t occupancy_at_0 = port.occupancy().value;
    sc_core::sc_start();
    json out = {{"accepted", accepted}, {"arrivals", r.arrivals}, {"occupancy_at_0", occupancy_at_0},
                {"occupancy_end", port.occupancy().value}, {"dropped", ctx.stats.counter_value("port", "dropped")}};
    return out.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  EXPECT_EQ(r["accepted"], json({true, true, false}));
  EXPECT_EQ(r["dropped"], 1u);
  EXPECT_EQ(r["occupancy_at_0"], 2u * 4178u);
  EXPECT_EQ(r["occupancy_end"], 0u);
  // Ready at 1 ns; 4178 B at 800 Gb/s = 41.78 ns each, back to back.
  ASSERT_EQ(r["arrivals"].size(), 2u);
  EXPECT_EQ(r["arrivals"][0]["t_ps"], 1000u + 41780u);
  EXPECT_EQ(r["arrivals"][1]["t_ps"], 1000u + 2 * 41780u);
}

TEST(link, rejects_a_zero_rate) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    link_params lp;
    lp.rate_gbps = 0;
    link l("bad_link", lp, ctx);
    return std::string("constructed");
  });
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.output.find("bad_link"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("rate_gbps"), std::string::npos) << c.output;
}

}  // namespace link_test
}  // namespace fabricsim::test

namespace fabricsim::test {
namespace link_test {

using namespace fabricsim::core;
using nlohmann::json;

// Two links whose frames arrive at the same picosecond: one kernel wake-up delivers both, in the order the
// arrivals were scheduled, and a later arrival costs a wake-up of its own.
TEST(arrival_calendar, simultaneous_arrivals_share_one_wake_up_in_scheduling_order) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    link_params lp;  // 400 Gb/s, 10 + 100 ns
    link first("first", lp, ctx), second("second", lp, ctx);
    recorder r(ctx);
    first.bind(r, 1);
    second.bind(r, 2);
    second.transmit(write_middle_4096(ctx), picoseconds(0));     // scheduled first: delivered first
    first.transmit(write_middle_4096(ctx), picoseconds(0));      // same arrival time
    first.transmit(write_middle_4096(ctx), picoseconds(83560));  // back to back: one serialization later
    sc_core::sc_start();
    return json({{"arrivals", r.arrivals}, {"events", ctx.events}}).dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  ASSERT_EQ(r["arrivals"].size(), 3u);
  EXPECT_EQ(r["arrivals"][0]["port"], 2);
  EXPECT_EQ(r["arrivals"][1]["port"], 1);
  EXPECT_EQ(r["arrivals"][0]["t_ps"], 83560u + 110000u);
  EXPECT_EQ(r["arrivals"][1]["t_ps"], 83560u + 110000u);
  EXPECT_EQ(r["arrivals"][2]["t_ps"], 2 * 83560u + 110000u);
  EXPECT_EQ(r["events"], 2u);
}

// Simultaneous arrivals are served in the links' calendar keys' order, whatever order they were scheduled in:
// the key a link hands the calendar is the one set_calendar_key gave it. A key past 32 bits and a far-end port
// past 16 are refused, naming the link.
TEST(arrival_calendar, simultaneous_arrivals_follow_the_links_keys_and_bad_keys_or_ports_are_refused) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    link_params lp;  // 400 Gb/s, 10 + 100 ns
    link low("low", lp, ctx), high("high", lp, ctx);
    low.set_calendar_key(7);
    high.set_calendar_key(9);
    recorder r(ctx);
    low.bind(r, 1);
    high.bind(r, 2);
    high.transmit(write_middle_4096(ctx), picoseconds(0));  // scheduled first, but its key is the larger
    low.transmit(write_middle_4096(ctx), picoseconds(0));
    sc_core::sc_start();
    std::string refusals;
    try {
      low.set_calendar_key(uint64_t(1) << 32);
    } catch (const std::logic_error& e) {
      refusals += std::string(e.what()) + "\n";
    }
    try {
      low.bind(r, 65536);
    } catch (const std::logic_error& e) {
      refusals += std::string(e.what()) + "\n";
    }
    return json({{"arrivals", r.arrivals}, {"refusals", refusals}, {"key", low.calendar_key()}}).dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  ASSERT_EQ(r["arrivals"].size(), 2u);
  EXPECT_EQ(r["arrivals"][0]["port"], 1);  // low's key, 7, before high's 9
  EXPECT_EQ(r["arrivals"][1]["port"], 2);
  EXPECT_EQ(r["arrivals"][0]["t_ps"], 83560u + 110000u);
  EXPECT_EQ(r["arrivals"][1]["t_ps"], 83560u + 110000u);
  const std::string refusals = r["refusals"];
  EXPECT_NE(refusals.find("low: calendar key 4294967296 past 2^32 - 1"), std::string::npos) << refusals;
  EXPECT_NE(refusals.find("low: bound to port 65536 of its far end"), std::string::npos) << refusals;
  EXPECT_EQ(r["key"], 7u);  // the refused key left the link's key as it was
}

// Loss injection: a seeded share of RoCE frames vanishes at its arrival time (released to the pool), PFC
// frames never do, and the same seed loses the same frames.
TEST(link, loss_injection_drops_roce_frames_only_and_repeatably) {
  auto lossy_run = [](uint64_t seed, double p) {
    const child_result c = run_in_child([=] {
      sim_context ctx;
      ctx.seed = seed;
      link_params lp;
      lp.drop_probability = p;
      link l("lossy", lp, ctx);
      recorder r(ctx);
      l.bind(r, 0);
      picoseconds free{};
      for (uint64_t i = 0; i < 2000; ++i) {
        packet* pk = write_middle_4096(ctx);
        pk->id = i;
        if (i % 10 == 0) pk->kind = frame_kind::pfc;  // 200 PFC frames among them
        free = l.transmit(pk, free);
      }
      sc_core::sc_start();
      json ids = json::array();
      for (const auto& a : r.arrivals) ids.push_back(a["id"]);
      return json{{"ids", ids}, {"dropped", l.dropped_injected()}, {"in_use", ctx.pool.in_use()},
                  {"counter", ctx.stats.counter_value("lossy", "dropped_injected")}}
          .dump();
    });
    EXPECT_TRUE(c.ok) << c.output;
    return c.ok ? json::parse(c.output) : json::object();
  };
  const json a = lossy_run(1, 0.25), b = lossy_run(1, 0.25), c = lossy_run(2, 0.25), all = lossy_run(1, 1.0);
  EXPECT_EQ(a["ids"].size() + a["dropped"].get<size_t>(), 2000u);
  EXPECT_EQ(a["counter"], a["dropped"]);
  EXPECT_EQ(a["in_use"], 0u);
  // 1800 RoCE frames at 25 %: 450 expected, sigma about 18.
  EXPECT_NEAR(a["dropped"].get<double>(), 450.0, 80.0);
  EXPECT_EQ(a["ids"], b["ids"]);
  EXPECT_NE(a["ids"], c["ids"]);
  // Which frames: one 53-bit draw per RoCE frame, in order, from the link's own stream (the run's seed and
  // the link's name), drawn here again. The link makes its stream at its first draw, not at construction:
  // the same stream, the same frames lost.
  rng_stream drop = make_stream(1, "lossy", "drop");
  json kept = json::array();
  for (uint64_t i = 0; i < 2000; ++i)
    if (i % 10 == 0 || (drop() >> 11) >= uint64_t(0.25 * double(uint64_t(1) << 53))) kept.push_back(i);
  EXPECT_EQ(a["ids"], kept);
  // Probability 1: every RoCE frame lost, every PFC frame delivered.
  EXPECT_EQ(all["dropped"], 1800u);
  ASSERT_EQ(all["ids"].size(), 200u);
  for (const auto& id : all["ids"]) EXPECT_EQ(id.get<uint64_t>() % 10, 0u);
}

}  // namespace link_test
}  // namespace fabricsim::test
