// `fabricsim verify-rtl --mutate` (docs/verification.md, mutation testing) end to end: a bench starved of
// cycles leaves survivors that the default bench kills; the default bench's survivors on the shipped blocks
// are exactly the mutants shown equivalent by hand in docs/verification.md; yosys proves a redundant
// comparison's mutants equivalent (and the shipped block's three); a sample and the per-mutant timeout; bad
// flag combinations refused; the reaction point's seeded sample against its documented survivors, and its
// coincidence mutants (--mutate-ids) killed by the directed phase and the handshake checks. The compile
// cache is the build tree's (as user_rtl_test), so the Verilator runtime and each schema are compiled once.
#include <gtest/gtest.h>

#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "tests/support/run_cli.h"

namespace {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

const std::string cache = std::string(" --rtl-cache ") + FABRICSIM_USER_RTL_CACHE;

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// (line, description) of every mutant with `status`.
std::set<std::tuple<int, std::string>> with_status(const nlohmann::json& j, const std::string& status) {
  std::set<std::tuple<int, std::string>> s;
  for (const auto& m : j["mutants"])
    if (m["status"] == status) s.emplace(m["line"].get<int>(), m["description"].get<std::string>());
  return s;
}

std::set<int> ids_with_status(const nlohmann::json& j, const std::string& status) {
  std::set<int> s;
  for (const auto& m : j["mutants"])
    if (m["status"] == status) s.insert(m["id"].get<int>());
  return s;
}

// The reorder tracker's mutants that cannot change behaviour (rtl/reorder_tracker.sv): an unsigned value is
// <= 0 exactly when it is 0 (lines 96 and 121), and line 123 sets the verdict the always_comb default already
// set.
const std::set<std::tuple<int, std::string>> reorder_equivalent{
    {96, "== -> <="}, {121, "== -> <="}, {123, "assignment deleted"}};

TEST(rtl_mutate, a_starved_bench_leaves_survivors_the_default_bench_kills) {
  const std::string weak = testing::TempDir() + "mutate_weak.json", strong = testing::TempDir() + "mutate_strong.json";
  const run_result w = fabricsim("verify-rtl --block reorder_tracker --window 64 --mutate --no-equiv --cycles 40" +
                                 cache + " --mutate-json " + weak);
  ASSERT_EQ(w.exit_code, 1) << w.output;
  const run_result s = fabricsim("verify-rtl --block reorder_tracker --window 64 --mutate --no-equiv" + cache +
                                 " --mutate-json " + strong);
  ASSERT_EQ(s.exit_code, 1) << s.output;  // without the equivalence check the equivalent ones count as survivors
  const nlohmann::json jw = read_json(weak), js = read_json(strong);
  EXPECT_EQ(jw["generated"], 128);
  EXPECT_EQ(js["run"], 128);
  EXPECT_EQ(with_status(js, "survived"), reorder_equivalent) << s.output;
  const std::set<int> weak_killed = ids_with_status(jw, "killed"), strong_killed = ids_with_status(js, "killed");
  for (int id : weak_killed) EXPECT_EQ(strong_killed.count(id), 1u) << "mutant " << id;
  EXPECT_GT(jw["survived"].get<int>(), js["survived"].get<int>() + 10) << w.output;
  // The terminal says what the JSON says.
  std::ostringstream total;
  total << std::left << std::setw(12) << "total" << std::right << std::setw(8) << 128 << std::setw(8)
        << js["killed"].get<int>() << std::setw(10) << js["survived"].get<int>() << std::setw(12) << 0;
  EXPECT_NE(s.output.find(total.str()), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("survived: mutant"), std::string::npos);
  EXPECT_NE(s.output.find("-      if (psn_offset == '0) begin\n+      if ((psn_offset <= '0)) begin\n"),
            std::string::npos)
      << s.output;
}

TEST(rtl_mutate, cnp_gen_survivors_are_the_ones_docs_show_unobservable) {
  const std::string json = testing::TempDir() + "mutate_cnp.json";
  const run_result r = fabricsim("verify-rtl --block cnp_gen --mutate --no-equiv" + cache + " --mutate-json " + json);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json j = read_json(json);
  EXPECT_EQ(j["generated"], 134);
  // docs/verification.md: the always_comb defaults of lines 108..111 (deleted, the latch holds what the
  // register holds whenever they are read), clear_idx_q != '1 -> < (the same for an unsigned value), and the
  // reset values of per_port_q and port_q (interval 0 after a reset makes every arrival emit, and an init sets
  // both before they matter).
  const std::set<std::tuple<int, std::string>> expected{{108, "assignment deleted"},
                                                        {109, "assignment deleted"},
                                                        {110, "assignment deleted"},
                                                        {111, "assignment deleted"},
                                                        {134, "!= -> <"},
                                                        {155, "assignment deleted"},
                                                        {155, "1'b0 -> 1'b1"},
                                                        {156, "assignment deleted"},
                                                        {156, "'0 -> '1"}};
  EXPECT_EQ(with_status(j, "survived"), expected) << r.output;
}

// The reaction point's survivors of the default bench (seed 1, every one of its 461 mutants, --no-equiv), in the
// groups docs/verification.md argues them in: the always_comb defaults and reset values of registers no output
// shows before the init that follows a reset (177-190, 408-440), the lint sink (368-380), the event bits ORed
// where they cannot overlap, and the rest listed one by one there.
const std::set<int> dcqcn_rp_survivors{
    8,   14,  20,  26,  27,  28,  29,  31,  35,  76,  87,  106, 114, 141, 177, 178, 179, 184, 186, 189, 190, 203, 214,
    223, 224, 250, 270, 282, 302, 319, 321, 323, 324, 331, 342, 361, 363, 368, 369, 370, 371, 372, 373, 374, 375, 376,
    377, 378, 379, 380, 394, 397, 400, 401, 408, 409, 410, 411, 412, 421, 422, 425, 426, 431, 432, 433, 434, 439, 440};

// The reaction point's mutants that only an exact coincidence or a port-level rule shows (docs/verification.md):
// the bench's directed phase and its handshake checks kill each, at the kind of check the docs name; two
// equivalent ones run beside them survive (31: a bit above those alpha_up takes; 324: 1 >> 0 is 1 << 0).
TEST(rtl_mutate, dcqcn_rp_directed_phase_and_handshake_kill_the_coincidences) {
  const std::string json = testing::TempDir() + "mutate_dcqcn_ids.json";
  const run_result r = fabricsim(
      "verify-rtl --block dcqcn_rp --mutate --no-equiv --mutate-ids 1,4,31,47,55,170,176,215,217,231,232,233,241,324,"
      "353,357,358,406" +
      cache + " --mutate-json " + json);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("461 mutants generated, 18 run (those of --mutate-ids)"), std::string::npos) << r.output;
  const nlohmann::json j = read_json(json);
  EXPECT_EQ(ids_with_status(j, "survived"), (std::set<int>{31, 324})) << r.output;
  EXPECT_EQ(ids_with_status(j, "killed").size(), 16u) << r.output;
  const std::pair<int, std::string> how[] = {
      {1, "req_ready_o (rst_ni && !busy_o) expected 0 got 1"},                  // ready while busy
      {4, "busy_o a clock after a reset expected 0 got 1"},                     // an idle clock taken as a request
      {241, "rsp_valid_o a clock after a reset expected 0 got 1"},              // the busy branch run when idle
      {176, "busy_o a clock after a reset during a request expected 0 got 1"},  // busy_d latched through rst_ni
      {406, "busy_o with rst_ni low during a request expected 0 got 1"},        // busy_q not reset
      {47, "events_o"},                                                         // a clamp event on an exact tie
      {55, "events_o"},                                                         //
      {233, "events_o expected 1 got 2"},                                       // suppressed (2) instead of a cut (1)
      {170, "byte_count_o"},                                                    // the threshold met exactly
      {215, "deadline_o"},  // alpha timer armed with initial alpha 0
      {231, "rate_o"},      // no cut after an init
  };
  for (const auto& [id, detail] : how)
    for (const auto& m : j["mutants"])
      if (m["id"] == id) {
        EXPECT_NE(m["detail"].get<std::string>().find(detail), std::string::npos) << m.dump();
      }
}

TEST(rtl_mutate, dcqcn_rp_sample_score_and_survivors_are_the_documented_ones) {
  const std::string json = testing::TempDir() + "mutate_dcqcn.json";
  const run_result r = fabricsim("verify-rtl --block dcqcn_rp --mutate --no-equiv --mutate-sample 40 --seed 5" + cache +
                                 " --mutate-json " + json);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.output;
  const nlohmann::json j = read_json(json);
  EXPECT_EQ(j["generated"], 461);
  ASSERT_EQ(j["run"], 40);
  EXPECT_NE(r.output.find("461 mutants generated, 40 run (a seeded sample)"), std::string::npos) << r.output;
  const std::set<int> survived = ids_with_status(j, "survived");
  for (int id : survived) EXPECT_EQ(dcqcn_rp_survivors.count(id), 1u) << "mutant " << id << " survived\n" << r.output;
  // Those the full run kills are killed here too (the same bench, seed and cycles; a timeout or crash kills).
  for (const auto& m : j["mutants"])
    if (dcqcn_rp_survivors.count(m["id"].get<int>()) == 0) {
      EXPECT_NE(m["status"], "survived") << m.dump();
    }
  EXPECT_EQ(r.exit_code, survived.empty() ? 0 : 1);
  // The score printed is killed / run (none proven equivalent without yosys).
  const int killed = j["killed"].get<int>();
  EXPECT_EQ(killed + static_cast<int>(survived.size()), 40);
  std::ostringstream score;
  score << "mutation score " << std::fixed << std::setprecision(1) << 100.0 * killed / 40 << "% (" << killed
        << " killed of 40 non-equivalent)";
  EXPECT_NE(r.output.find(score.str()), std::string::npos) << score.str() << "\n" << r.output;
}

TEST(rtl_mutate, yosys_proves_a_redundant_comparison_equivalent) {
  // The shipped tracker with a comparison that is always true ANDed into accept: its <= and >= mutants are
  // still always true (equivalent), <, > and != make it always false (killed).
  std::ifstream f(std::string(FABRICSIM_SOURCE_DIR) + "/rtl/reorder_tracker.sv");
  std::ostringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  const std::string from = "assign accept      = req_valid_i & req_ready_o;";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "assign accept      = req_valid_i & req_ready_o & (head_q == head_q);");
  const std::string file = testing::TempDir() + "redundant_tracker.sv", json = testing::TempDir() + "redundant.json";
  std::ofstream(file) << text;
  const run_result r = fabricsim("verify-rtl --block reorder_tracker --window 64 --mutate --rtl " + file + cache +
                                 " --mutate-json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = read_json(json);
  EXPECT_EQ(j["survived"], 0);
  EXPECT_EQ(j["score"], 1.0);
  auto expected = reorder_equivalent;
  expected.emplace(91, "== -> <=");
  expected.emplace(91, "== -> >=");
  EXPECT_EQ(with_status(j, "equivalent"), expected) << r.output;
  for (const auto& m : j["mutants"])
    if (m["status"] == "equivalent") {
      EXPECT_EQ(m["detail"], "proven by yosys equiv_induct");
    }
  for (const char* op : {"== -> <", "== -> >", "== -> !="})
    EXPECT_EQ(with_status(j, "killed").count({91, op}), 1u) << op;
  EXPECT_NE(r.output.find("mutation score 100.0%"), std::string::npos) << r.output;
}

TEST(rtl_mutate, a_seeded_sample_and_the_timeout) {
  const std::string args =
      "verify-rtl --block reorder_tracker --window 64 --mutate --no-equiv --mutate-sample 10 --seed 1" + cache;
  const std::string plain = testing::TempDir() + "sample.json", again = testing::TempDir() + "sample_again.json",
                    timed = testing::TempDir() + "sample_timeout.json";
  const run_result b = fabricsim(args + " --mutate-json " + plain);
  EXPECT_NE(b.output.find("128 mutants generated, 10 run (a seeded sample)"), std::string::npos) << b.output;
  fabricsim(args + " --mutate-json " + again);
  const nlohmann::json jb = read_json(plain), jagain = read_json(again);
  EXPECT_EQ(jb["mutants"], jagain["mutants"]);  // the same sample, the same outcomes
  ASSERT_EQ(jb["run"], 10);
  const std::set<int> survivors = ids_with_status(jb, "survived");
  ASSERT_FALSE(survivors.empty()) << b.output;  // seed 1 draws mutant 68, equivalent: every cycle runs
  // A survivor runs the whole bench (tens of ms): with a 1 ms timeout it is killed by the timeout instead.
  const run_result a = fabricsim(args + " --mutate-timeout 0.001 --mutate-json " + timed);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const nlohmann::json ja = read_json(timed);
  EXPECT_EQ(ja["killed"], 10);
  const std::set<int> timeouts = ids_with_status(ja, "timeout");
  for (int id : survivors) EXPECT_EQ(timeouts.count(id), 1u) << "mutant " << id << "\n" << a.output;
  EXPECT_NE(a.output.find("by the timeout"), std::string::npos) << a.output;
}

TEST(rtl_mutate, bad_flag_combinations_are_refused) {
  const std::pair<std::string, std::string> cases[] = {
      {"--block reorder_tracker --window 64 --mutate --mutant 1", "cannot be combined with --mutant"},
      {"--block reorder_tracker --mutate-sample 5", "go with --mutate"},
      {"--block reorder_tracker --mutate --replay x.txt", "cannot be combined with --replay"},
      {"--block reorder_tracker --mutate --wave w.fst", "drop --wave"},
      {"--block cnp_gen --mutate --preset nvidia", "--preset nvidia: only for --block dcqcn_rp"},
      {"--block dcqcn_rp --mutate --preset dctcp", "one of: paper, nvidia, fabric_400g"},
      {"--block reorder_tracker --mutate-ids 3", "go with --mutate"},
      {"--block reorder_tracker --mutate --mutate-ids 3,0", "mutant 0 does not exist; this block has mutants 1..128"},
      {"--block reorder_tracker --mutate --mutate-ids 3 --mutate-sample 2", "both pick the mutants: give one"},
  };
  for (const auto& [args, message] : cases) {
    const run_result r = fabricsim("verify-rtl " + args + cache);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
