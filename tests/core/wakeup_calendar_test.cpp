// The wake-up calendar (core/wakeup_calendar.h): wake-ups served in (time, order asked), one kernel pass per
// distinct time, one wake-up per client (an earlier request moves it, a later one is ignored, and a moved
// wake-up leaves nothing behind to keep the kernel running), a request for now inside a pass served in that
// pass, and a time's pass ahead of the arrival calendar's pass at the same picosecond.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "sc_models/core/link.h"
#include "sc_models/core/sim_context.h"
#include "tests/support/link_rig.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::test {
namespace wakeup_calendar_test {

using namespace fabricsim::core;
using nlohmann::json;

struct log_client : wakeup_client {
  log_client(std::string n, json& l) : name(std::move(n)), log(l) {}
  void on_wake(picoseconds t) override {
    log.push_back(name + "@" + std::to_string(t.value));
    if (again_at_now) {
      again_at_now = false;
      cal->schedule(this, t);
    }
  }
  std::string name;
  json& log;
  wakeup_calendar* cal = nullptr;
  bool again_at_now = false;
};

TEST(wakeup_calendar, one_wake_up_per_client_served_by_time_then_order_asked) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    wakeup_calendar& cal = ctx.transmit_calendar;
    json log = json::array();
    log_client a("a", log), b("b", log), k("k", log), mover("mover", log);
    a.cal = &cal;
    a.again_at_now = true;  // asks again for its own time inside the pass: served after b, no second pass
    cal.schedule(&k, picoseconds(100));
    cal.schedule(&a, picoseconds(100));
    cal.schedule(&b, picoseconds(100));
    cal.schedule(&mover, picoseconds(900000));  // moved to 40 below: nothing is left at 900,000
    cal.schedule(&mover, picoseconds(40));
    cal.schedule(&mover, picoseconds(70));  // later than its wake-up: ignored
    cal.schedule(&k, picoseconds(100));     // the same time again: k keeps its place (asked before a and b)
    const bool pending = cal.pending(&mover);
    sc_core::sc_start();
    return json({{"log", log},
                 {"passes", cal.kernel_wakeups()},
                 {"pending_before", pending},
                 {"pending_after", cal.pending(&mover)},
                 {"end_ps", now().value},
                 {"events", ctx.events}})
        .dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  const json r = json::parse(c.output);
  EXPECT_EQ(r["log"], json({"mover@40", "k@100", "a@100", "b@100", "a@100"}));
  EXPECT_EQ(r["passes"], 2u);    // 40 and 100
  EXPECT_EQ(r["end_ps"], 100u);  // the moved wake-up at 900,000 ps did not keep the kernel running
  EXPECT_EQ(r["pending_before"], true);
  EXPECT_EQ(r["pending_after"], false);
  EXPECT_EQ(r["events"], 0u);  // the model's `events` counts the clients' work, not the calendar's passes
}

// A frame arriving at the same picosecond as a wake-up: the wake-up's pass runs first (the time's first
// delta cycle), the arrival calendar's after it, as a NIC's own timed event ran before the arrivals.
TEST(wakeup_calendar, a_wake_up_runs_before_the_arrivals_of_its_picosecond) {
  const child_result c = run_in_child([] {
    sim_context ctx;
    json log = json::array();
    link_params lp;  // 400 Gb/s, 10 + 100 ns: a 4,096-byte WRITE MIDDLE arrives at 83,560 + 110,000 ps
    link l("l", lp, ctx);
    arrival_sink sink(ctx, [&](const packet&) { log.push_back("arrival@" + std::to_string(now().value)); });
    l.bind(sink, 0);
    l.transmit(write_middle_4096(ctx), picoseconds(0));  // scheduled before the wake-up, still served after it
    log_client w("wake", log);
    ctx.transmit_calendar.schedule(&w, picoseconds(83560 + 110000));
    sc_core::sc_start();
    return log.dump();
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(json::parse(c.output), json({"wake@193560", "arrival@193560"}));
}

}  // namespace wakeup_calendar_test
}  // namespace fabricsim::test
