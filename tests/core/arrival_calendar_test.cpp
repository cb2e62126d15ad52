// The arrival calendar's pass (core/arrival_calendar.cpp) runs after every other process due at its
// picosecond, and costs one delta cycle, not two, at a time when no other process is due: another process's
// timed event at the same time as an arrival still runs first (here three of them, notified before and after
// the frame was scheduled), and an arrival alone at its time is served in the time's first delta cycle
// (counted with sc_delta_count, against a process of our own one time step earlier). Inside a
// kernel_run_window, with no process in the kernel but the two calendars', a pass serves later times in the
// same activation (now() ahead of the kernel's clock) until a transmit wake-up is due, never the window's end,
// and leaves the kernel's clock at the last time it served; with any other process, it never runs ahead.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/wakeup_calendar.h"
#include "tests/support/link_rig.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace arrival_calendar_test {

using namespace fabricsim::core;
using nlohmann::json;

// A process with a timed event of its own at given picoseconds, logging its name, the time and the delta
// count when it runs.
struct timed_logger : sc_core::sc_module {
  SC_HAS_PROCESS(timed_logger);
  timed_logger(sc_core::sc_module_name n, json& l, std::vector<uint64_t> at)
      : sc_module(n), log(l), times(std::move(at)) {
    SC_METHOD(fire);
    sensitive << ev;
    dont_initialize();
    ev.notify(to_sc_time(picoseconds(times[0])));
  }
  void fire() {
    log.push_back({std::string(basename()), now().value, sc_core::sc_delta_count()});
    if (++next < times.size()) ev.notify(to_sc_time(picoseconds(times[next]) - now()));
  }
  json& log;
  std::vector<uint64_t> times;
  size_t next = 0;
  sc_core::sc_event ev;
};

TEST(arrival_calendar, runs_after_the_other_processes_of_its_time_and_alone_in_one_delta_cycle) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    json log = json::array();
    // Before the frames are scheduled: one logger at 100,000 ps (a time step of its own before the first
    // arrival) and at the second arrival's time; two more at that time made after the frames.
    timed_logger early("early", log, {100000, 493560});
    link_params lp;  // 400 Gb/s, 10 + 100 ns: a 4,096-byte WRITE MIDDLE arrives 83,560 + 110,000 ps after its start
    link l("l", lp, ctx);
    arrival_sink sink(ctx, [&](const packet&) { log.push_back({"arrival", now().value, sc_core::sc_delta_count()}); });
    l.bind(sink, 0);
    l.transmit(write_middle_4096(ctx), picoseconds(0));       // arrives at 193,560 ps, alone
    l.transmit(write_middle_4096(ctx), picoseconds(300000));  // arrives at 493,560 ps, with three loggers
    timed_logger late1("late1", log, {493560});
    timed_logger late2("late2", log, {493560});
    sc_core::sc_start();
    return log.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json log = json::parse(c.output);
  ASSERT_EQ(log.size(), 6u) << log.dump();
  // Time 100,000: the early logger alone. Time 193,560: the arrival alone, in the time's first delta cycle,
  // the next after the logger's (a deferred pass would be one more).
  EXPECT_EQ(log[0][0], "early");
  EXPECT_EQ(log[0][1], 100000u);
  EXPECT_EQ(log[1][0], "arrival");
  EXPECT_EQ(log[1][1], 193560u);
  EXPECT_EQ(log[1][2].get<uint64_t>(), log[0][2].get<uint64_t>() + 1) << log.dump();
  // Time 493,560: the three loggers in whatever order the kernel runs them, then the arrival.
  std::vector<std::string> first_three;
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_EQ(log[i][1], 493560u);
    first_three.push_back(log[i][0]);
  }
  std::sort(first_three.begin(), first_three.end());
  EXPECT_EQ(first_three, (std::vector<std::string>{"early", "late1", "late2"})) << log.dump();
  EXPECT_EQ(log[5][0], "arrival") << log.dump();
  EXPECT_EQ(log[5][1], 493560u);
}

// Frames (up to three) on one 400 Gb/s link (10 + 100 ns), started at 0, 100,000 and 300,000 ps: they arrive
// at 193,560, 293,560 and 493,560 ps (83,560 ps of serialization each). Each arrival logs the model's time,
// the kernel's and the delta count.
struct arrivals_rig {
  explicit arrivals_rig(size_t frames) {
    l.bind(sink, 0);
    const uint64_t starts[3] = {0, 100000, 300000};
    for (size_t i = 0; i < frames; ++i) l.transmit(write_middle_4096(ctx), picoseconds(starts[i]));
  }
  sim_context ctx;
  json log = json::array();
  link l{"l", link_params{}, ctx};
  arrival_sink sink{ctx, [this](const packet&) {
                      log.push_back({"arrival", now().value, kernel_now().value, sc_core::sc_delta_count()});
                    }};
};

// sc_start for 10 us, starving, inside a window (to 10 us) that lets the arrival calendar run ahead of the kernel.
void run_starving_to_10_us() {
  const kernel_run_window window(picoseconds(10000000));
  sc_core::sc_start(sc_core::sc_time(10.0, sc_core::SC_US), sc_core::SC_EXIT_ON_STARVATION);
}

struct wake_logger : wakeup_client {
  explicit wake_logger(json& l) : log(l) {}
  void on_wake(picoseconds t) override {
    log.push_back({"wake", t.value, kernel_now().value, sc_core::sc_delta_count()});
  }
  json& log;
};

TEST(arrival_calendar, serves_later_times_ahead_of_the_kernel_until_a_transmit_wake_up_is_due) {
  const child_result c = run_in_child([] {
    arrivals_rig r(3);
    wake_logger w(r.log);
    r.ctx.transmit_calendar.schedule(&w, picoseconds(400000));  // between the second and third arrivals
    run_starving_to_10_us();
    return json({{"log", r.log},
                 {"ahead", r.ctx.calendar.passes_ahead()},
                 {"end", now().value},
                 {"events", r.ctx.events}})
        .dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  const json& log = r["log"];
  ASSERT_EQ(log.size(), 4u) << r.dump();
  // Model times and order as without running ahead: 193,560, 293,560, the wake-up at 400,000, 493,560.
  EXPECT_EQ(log[0][0], "arrival");
  EXPECT_EQ(log[0][1], 193560u);
  EXPECT_EQ(log[1][0], "arrival");
  EXPECT_EQ(log[1][1], 293560u);
  EXPECT_EQ(log[2][0], "wake");
  EXPECT_EQ(log[2][1], 400000u);
  EXPECT_EQ(log[3][0], "arrival");
  EXPECT_EQ(log[3][1], 493560u);
  // The second arrival was served ahead, in the first one's activation (the kernel still at 193,560); the wake-up
  // and the third arrival each at the kernel's own time.
  EXPECT_EQ(log[1][2], 193560u);
  EXPECT_EQ(log[1][3], log[0][3]);
  EXPECT_EQ(log[2][2], 400000u);
  EXPECT_EQ(log[3][2], 493560u);
  EXPECT_EQ(r["ahead"], 1u);
  EXPECT_EQ(r["end"], 493560u);
  EXPECT_EQ(r["events"], 3u);  // one per arrival time served, ahead or not
}

TEST(arrival_calendar, never_serves_the_windows_end_and_leaves_the_kernel_at_the_last_time_served) {
  const child_result c = run_in_child([] {
    arrivals_rig r(2);  // 193,560 and 293,560
    json ends = json::array();
    {  // to 293,560 exactly: that time's arrival stays pending (an sc_start to a time leaves its events)
      const kernel_run_window window(picoseconds(293560));
      sc_core::sc_start(sc_core::sc_time(293560.0, sc_core::SC_PS), sc_core::SC_RUN_TO_TIME);
    }
    ends.push_back({r.log.size(), kernel_now().value});
    run_starving_to_10_us();  // then on: the last arrival served, the kernel's clock left there
    ends.push_back({r.log.size(), kernel_now().value});
    // Two more frames, 100 ns apart, and a starving run: the second is served ahead, then the kernel lands on it.
    r.l.transmit(write_middle_4096(r.ctx), now());
    r.l.transmit(write_middle_4096(r.ctx), now() + picoseconds(100000));
    run_starving_to_10_us();
    ends.push_back({r.log.size(), kernel_now().value});
    return json({{"log", r.log}, {"ends", ends}, {"ahead", r.ctx.calendar.passes_ahead()}}).dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  EXPECT_EQ(r["ends"][0], json({1, 293560})) << r.dump();  // only the first arrival; the kernel at the end
  EXPECT_EQ(r["ends"][1], json({2, 293560})) << r.dump();  // the second at its own time, not ahead
  // 293,560 + 193,560 and + 293,560: the last served ahead of the kernel, which then lands on it.
  EXPECT_EQ(r["ends"][2], json({4, 587120})) << r.dump();
  EXPECT_EQ(r["log"][3][1], 587120u);
  EXPECT_EQ(r["log"][3][2], 487120u);
  EXPECT_EQ(r["ahead"], 1u);
}

TEST(arrival_calendar, never_runs_ahead_beside_another_process) {
  const child_result c = run_in_child([] {
    json other_log = json::array();
    // A process of its own: a notification it times against now() would wake it early, so nothing runs ahead.
    timed_logger other("other", other_log, {5000000});
    arrivals_rig r(2);
    run_starving_to_10_us();
    return json({{"log", r.log}, {"ahead", r.ctx.calendar.passes_ahead()}}).dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  EXPECT_EQ(r["ahead"], 0u) << r.dump();
  ASSERT_EQ(r["log"].size(), 2u) << r.dump();
  EXPECT_EQ(r["log"][1][1], 293560u);
  EXPECT_EQ(r["log"][1][2], 293560u);  // served at the kernel's own time
}

}  // namespace arrival_calendar_test
}  // namespace fabricsim::test
