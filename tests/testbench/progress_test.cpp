// The progress line (testbench/progress.h): its wording from hand-computed figures, when it shows (the
// isatty and --quiet rule, the two-second delay, the redraw interval), and that a run cut into progress
// slices reports exactly what the same run reports in one piece.
#include "testbench/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "tests/support/sc_fork.h"

namespace fabricsim::testbench {
namespace progress_test {

using nlohmann::json;

TEST(progress, shows_only_on_a_terminal_and_never_with_quiet) {
  EXPECT_TRUE(progress_wanted(false, true));
  EXPECT_FALSE(progress_wanted(false, false));  // a pipe, a file, a CI log
  EXPECT_FALSE(progress_wanted(true, true));
  EXPECT_FALSE(progress_wanted(true, false));
}

TEST(progress, line_for_a_run_of_fixed_duration) {
  progress_state p;
  p.simulated_ns = 12346.0;  // 12.346 us of 120 us: 10.29 %
  p.planned_ns = 120000.0;
  p.wall_s = 2.0;
  p.packet_hops = 2920000;  // 1.46 M per second
  // 107.654 us left at 12.346 us per 2 s: 17.44 s, shown rounded up.
  EXPECT_EQ(format_progress(p), "sim 12.35 us of 120.00 us (10.3 %), 1.46 M packet-hops/s, about 18 s left");
}

TEST(progress, line_for_a_run_until_done_says_limit_and_at_most) {
  progress_state p;
  p.simulated_ns = 2.5e6;  // 2.5 ms of a 100 ms limit
  p.planned_ns = 1e8;
  p.until_done = true;
  p.wall_s = 10.0;
  p.packet_hops = 52000;  // 5.2 k per second
  // 97.5 ms left at 0.25 ms/s of wall: 390 s = 6 min 30 s.
  EXPECT_EQ(format_progress(p), "sim 2.50 ms (limit 100.00 ms, 2.5 %), 5.2 k packet-hops/s, at most 6 min 30 s left");
  p.simulated_ns = 0;
  EXPECT_NE(format_progress(p).find("time left -"), std::string::npos);
}

TEST(progress, waits_for_the_delay_then_redraws_at_the_interval_and_clears) {
  std::ostringstream out;
  progress_reporter r(out, 0.25, 2.0);
  progress_state p;
  p.planned_ns = 1000;
  p.simulated_ns = 10;
  p.wall_s = 1.9;
  EXPECT_FALSE(r.update(p));  // a short run shows nothing
  EXPECT_TRUE(out.str().empty());
  p.wall_s = 2.0;
  EXPECT_TRUE(r.update(p));
  p.wall_s = 2.2;
  EXPECT_FALSE(r.update(p));  // within the interval
  p.wall_s = 2.25;
  p.simulated_ns = 100;
  EXPECT_TRUE(r.update(p));
  EXPECT_EQ(r.lines_drawn(), 2u);
  const std::string drawn = out.str();
  EXPECT_EQ(drawn.front(), '\r');
  EXPECT_EQ(drawn.find('\n'), std::string::npos);  // redrawn in place, never scrolled
  r.finish();
  const std::string all = out.str();
  // The clearing tail: '\r', blanks as wide as the last line, '\r'.
  const std::string last = format_progress(p);
  EXPECT_EQ(all.substr(all.size() - last.size() - 2), "\r" + std::string(last.size(), ' ') + "\r");
}

TEST(progress, a_phase_is_drawn_in_place_and_kept_only_when_it_took_seconds) {
  std::ostringstream out;
  {
    phase_progress p(&out, "set-up: 8 hosts, 3 switches", 2.0);
    EXPECT_EQ(out.str(), "\rset-up: 8 hosts, 3 switches ...");
    p.end(1.99);  // a short phase: erased, nothing left
  }
  const std::string blank = "\r" + std::string(std::string("set-up: 8 hosts, 3 switches ...").size(), ' ') + "\r";
  EXPECT_EQ(out.str(), "\rset-up: 8 hosts, 3 switches ..." + blank);
  std::ostringstream longer;
  phase_progress v(&longer, "verification", 2.0);
  v.end(3.456);
  v.end(9.0);  // once only
  EXPECT_EQ(longer.str(), "\rverification ...\r" + std::string(16, ' ') + "\r# verification: 3.46 s wall\n");
  phase_progress none(nullptr, "report", 0.0);  // no terminal: nothing, and no crash at end()
  none.end(5.0);
}

TEST(progress, a_run_names_its_set_up_verification_and_report_phases) {
  // With no delay every phase leaves its line, in order, around the loop's own progress line.
  const test::child_result r = test::run_in_child([&] {
    std::ostringstream lines;
    run_options opts;
    opts.progress = &lines;
    opts.progress_delay_s = 0.0;
    run_scenario(load_scenario_text("topology: {kind: leaf_spine, leaves: 2, spines: 2, hosts_per_leaf: 2}\n"
                                    "writes: [{src: h0, dst: h3, bytes: 65536}]\n",
                                    "t.yaml"),
                 opts);
    return lines.str();
  });
  ASSERT_TRUE(r.ok) << r.output;
  const size_t setup = r.output.find("# set-up: 4 hosts, 4 switches: ");
  const size_t verify = r.output.find("# verification: ");
  const size_t report = r.output.find("# report: ");
  ASSERT_NE(setup, std::string::npos) << r.output;
  ASSERT_NE(verify, std::string::npos) << r.output;
  ASSERT_NE(report, std::string::npos) << r.output;
  EXPECT_LT(setup, r.output.find("sim "));  // the loop's line comes after the set-up
  EXPECT_LT(r.output.find("sim "), verify);
  EXPECT_LT(verify, report);
}

TEST(progress, a_collective_names_its_set_up_phase) {
  const test::child_result r = test::run_in_child([&] {
    std::ostringstream lines;
    run_options opts;
    opts.progress = &lines;
    opts.progress_delay_s = 0.0;
    run_scenario(load_scenario_text("topology: {kind: single_switch, hosts: 4}\nworkload: {kind: collective}\n"
                                    "collective: {op: allreduce, algo: ring, min_bytes: 65536, max_bytes: 65536}\n",
                                    "c.yaml"),
                 opts);
    return lines.str();
  });
  ASSERT_TRUE(r.ok) << r.output;
  const size_t setup = r.output.find("# set-up: 4 hosts, 1 switch, 4 ranks: ");
  ASSERT_NE(setup, std::string::npos) << r.output;
  EXPECT_LT(setup, r.output.find("# size 65536 B done"));
}

// The same scenario run whole and cut into progress slices must report the same: only the wall-clock fields
// may differ. An interval of 1 ns of wall time halves the slices down to their floor, 1 ns of simulated time:
// tens of thousands of extra stops, most of them between a packet's events.
json run_twice(const std::string& yaml) {
  const test::child_result r = test::run_in_child([&] {
    json out;
    out["plain"] = run_scenario(load_scenario_text(yaml, "t.yaml"));
    return out.dump();
  });
  const test::child_result q = test::run_in_child([&] {
    std::ostringstream line;
    run_options opts;
    opts.progress = &line;
    opts.progress_interval_s = 1e-9;
    opts.progress_delay_s = 0.0;
    json out;
    out["sliced"] = run_scenario(load_scenario_text(yaml, "t.yaml"), opts);
    const std::string drawn = line.str();
    out["line"] = drawn.substr(drawn.size() > 2000 ? drawn.size() - 2000 : 0);
    out["draws"] = std::count(drawn.begin(), drawn.end(), '\r') - 2;  // less finish()'s two
    return out.dump();
  });
  EXPECT_TRUE(r.ok) << r.output;
  EXPECT_TRUE(q.ok) << q.output;
  if (!r.ok || !q.ok) return json::object();
  json a = json::parse(r.output), b = json::parse(q.output);
  return {{"plain", a["plain"]}, {"sliced", b["sliced"]}, {"line", b["line"]}, {"draws", b["draws"]}};
}

void expect_same_report(json a, json b) {
  for (json* j : {&a, &b})
    for (const char* wall : {"wall_time_s", "packet_hops_per_s", "peak_rss_mib"}) j->erase(wall);
  EXPECT_EQ(a.dump(), b.dump());
}

TEST(progress, slicing_a_run_of_fixed_duration_changes_nothing) {
  // A DCQCN incast with spraying, ECN and PFC: timers, pauses and reordering all cross slice boundaries.
  const json r = run_twice(R"(
run: {duration_us: 40, sample_us: 2}
topology: {kind: single_switch, hosts: 5, link_gbps: 400}
switch: {lossless_priorities: "3", ecn_classes: "3"}
nic: {place_data: false, cc: dcqcn, path_entropy: per_packet}
workload: {kind: incast, incast_senders: 4, incast_target: h0, message_bytes: 4194304}
)");
  ASSERT_TRUE(r.contains("line"));
  EXPECT_NE(r["line"].get<std::string>().find("sim "), std::string::npos);
  EXPECT_GT(r["draws"].get<int>(), 10000);  // one per slice: 40 us in slices shrinking to 1 ns
  expect_same_report(r["plain"], r["sliced"]);
}

TEST(progress, slicing_a_run_until_done_changes_nothing) {
  // Until every WRITE completes: the run ends on starvation inside some slice.
  const json r = run_twice(R"(
topology: {kind: single_switch, hosts: 3, link_gbps: 400}
writes: [{src: h0, dst: h1, bytes: 1000003}, {src: h2, dst: h1, bytes: 524288, start_ns: 3000}]
)");
  ASSERT_TRUE(r.contains("line"));
  EXPECT_NE(r["line"].get<std::string>().find("limit"), std::string::npos);
  // Each slice reaches at least the next event: more slices than the 373 data packets, none stuck.
  EXPECT_GT(r["draws"].get<int>(), 1000);
  EXPECT_TRUE(r["plain"]["verified"].get<bool>());
  expect_same_report(r["plain"], r["sliced"]);
}

TEST(progress, collective_size_line_from_hand_figures) {
  // 1 MiB in a mean of 51 us: 1048576 / 51000 ns = 20.56 GB/s; an 8-rank allreduce's bus factor
  // 2 x 7 / 8 = 1.75 makes it 35.98 GB/s.
  EXPECT_EQ(format_collective_size_done(1048576, {50.0, 52.0}, 1.75, 2, 7, 1.3),
            "# size 1048576 B done (2 of 7 sizes): time 51.00 us, algbw 20.56 GB/s, busbw 35.98 GB/s; 1.3 s wall\n");
}

TEST(progress, a_collective_prints_each_size_as_it_finishes) {
  // 64 KiB .. 256 KiB by a factor of 2: three sizes, three lines, in order, each as its row in the report.
  const test::child_result r = test::run_in_child([&] {
    std::ostringstream lines;
    run_options opts;
    opts.progress = &lines;
    json out;
    out["report"] = run_scenario(
        load_scenario_text(
            "topology: {kind: single_switch, hosts: 4}\nworkload: {kind: collective}\n"
            "collective: {op: allreduce, algo: ring, min_bytes: 65536, max_bytes: 262144, step_factor: 2}\n",
            "c.yaml"),
        opts);
    out["lines"] = lines.str();
    return out.dump();
  });
  ASSERT_TRUE(r.ok) << r.output;
  const json j = json::parse(r.output);
  std::istringstream in(j["lines"].get<std::string>());
  std::string line;
  std::vector<std::string> got;
  while (std::getline(in, line)) {
    line = line.substr(line.rfind('\r') == std::string::npos ? 0 : line.rfind('\r') + 1);  // after a phase's line
    if (!line.empty()) got.push_back(line);
  }
  ASSERT_EQ(got.size(), 3u) << j["lines"];
  const auto& rows = j["report"]["collective"]["rows"];
  for (size_t i = 0; i < 3; ++i) {
    const uint64_t bytes = 65536u << i;
    EXPECT_EQ(got[i].rfind("# size " + std::to_string(bytes) + " B done (" + std::to_string(i + 1) + " of 3 sizes)", 0),
              0u)
        << got[i];
    char busbw[32];
    std::snprintf(busbw, sizeof busbw, "busbw %.2f GB/s", rows[i]["busbw_gbps"].get<double>());
    EXPECT_NE(got[i].find(busbw), std::string::npos) << got[i] << " vs " << busbw;
  }
}

}  // namespace progress_test
}  // namespace fabricsim::testbench
