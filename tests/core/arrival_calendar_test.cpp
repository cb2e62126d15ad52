// The arrival calendar's pass (core/arrival_calendar.cpp) runs after every other process due at its
// picosecond, and costs one delta cycle, not two, at a time when no other process is due: another process's
// timed event at the same time as an arrival still runs first (here three of them, notified before and after
// the frame was scheduled), and an arrival alone at its time is served in the time's first delta cycle
// (counted with sc_delta_count, against a process of our own one time step earlier).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
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

}  // namespace arrival_calendar_test
}  // namespace fabricsim::test
