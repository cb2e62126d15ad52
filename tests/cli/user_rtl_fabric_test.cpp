// A user's congestion-control block in a fabric and a fabric recording replayed against a user's block
// (issue 23, items 4 and 5): the alternative CNP generator written for the tests
// (tests/rtl/user_blocks/cnp_flag_gen.sv: flags cleared at once and a busy counter, not our swept RAM) runs in
// every NIC of a small DCQCN incast in lockstep with the reference model and the report is the ref run's; the
// same file with one planted error stops the run at the first divergence (exit 5) naming the NIC, the block
// and the transaction (the QPN, the cycle), with a waveform. A --record-rtl recording of a shipped scenario
// replays through the alternative reorder tracker and CNP generator transaction for transaction, and against
// a planted bug the first mismatch is reported at its line.
//
// The compile cache is the build tree's folder that user_rtl_test uses too (FABRICSIM_USER_RTL_CACHE).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_cli.h"

namespace {

using nlohmann::json;

using fabricsim::test::run_result;
using fabricsim::test::run_shell;

const std::string source_dir = FABRICSIM_SOURCE_DIR;
const std::string tracker = source_dir + "/tests/rtl/user_blocks/psn_shift_tracker.sv";
const std::string generator = source_dir + "/tests/rtl/user_blocks/cnp_flag_gen.sv";
const std::string tiny_incast = source_dir + "/tests/cli/incast_dcqcn_tiny.yaml";  // 4 senders into h0, 60 us
const std::string leaf_spine_small = source_dir + "/testbench/scenarios/leaf_spine_small.yaml";
const std::string env = "FABRICSIM_RTL_CACHE=" + std::string(FABRICSIM_USER_RTL_CACHE) + " ";

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// `source` with each `from` replaced by its `to` (each must be there), written to the temp folder.
std::string variant(const std::string& source, const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = slurp(source);
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " not in " << source;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// The planted CNP-generator bug: a context's time is taken on every marked arrival instead of on each CNP, so
// the interval runs from the last mark, and a flow marked more often than the interval gets one CNP only.
std::string generator_bug() {
  return variant(generator, "cnp_flag_gen_rearm.sv",
                 {{"if (take && fire && !per_port_q) when_q[ctx]", "if (take && !per_port_q) when_q[ctx]"}});
}

// The planted tracker bug: the window bound from the wrong constant (PSNs 8 or more ahead dropped at Window
// 256), which spraying reaches.
std::string tracker_bug() {
  return variant(tracker, "psn_shift_tracker_narrow_replay.sv", {{"d >= 24'(Window)", "d >= 24'(Window / 32)"}});
}

run_result fabricsim_run(const std::string& args) { return run_shell(env + FABRICSIM_BINARY + " run " + args); }

// The report without what depends on the machine (as lockstep_test strips it).
json strip(json j) {
  if (j.is_object()) {
    for (const char* k : {"wall_time_s", "packet_hops_per_s", "peak_rss_mib", "loop_wall_s", "setup_wall_s",
                          "verify_wall_s", "wall_s", "scenario_file"})
      j.erase(k);
    for (auto& [k, v] : j.items()) v = strip(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = strip(v);
  }
  return j;
}

json report_of(const std::string& args, const std::string& name) {
  const std::string out = testing::TempDir() + "user_rtl_fabric_" + std::to_string(getpid()) + "_" + name + ".json";
  std::remove(out.c_str());
  const run_result r = fabricsim_run(args + " --quiet --json " + out);
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  return strip(json::parse(slurp(out)));
}

uint64_t count_lines(const std::string& text, const std::string& prefix) {
  uint64_t n = 0;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

// The recorded transactions: every line but the header and the `new` lines that declare instances.
uint64_t transactions_in(const std::string& recording) {
  uint64_t n = 0;
  std::istringstream s(recording);
  for (std::string line; std::getline(s, line);) n += !line.empty() && line[0] != '#' && line.rfind("new ", 0) != 0;
  return n;
}

TEST(user_rtl_fabric, alternative_cnp_generator_in_lockstep_reports_what_ref_reports) {
  const std::string user = " --user-rtl cnp_gen=" + generator + " --user-rtl-top cnp_flag_gen";
  const json ref = report_of(tiny_incast + " --set nic.cnp_model=ref", "cnp_ref");
  const json both = report_of(tiny_incast + " --set nic.cnp_model=lockstep" + user, "cnp_lockstep");
  const json rtl = report_of(tiny_incast + " --set nic.cnp_model=rtl" + user, "cnp_rtl");
  // The notification point acted: CNPs were sent, and suppressed ones too (per-flow moderation).
  ASSERT_GT(ref.at("fabric").at("cnps_sent").get<uint64_t>(), 10u) << ref.dump(1);
  // The figures the brief names first (bytes, CNPs, completions), then the whole report.
  for (const char* field : {"/fabric/cnps_sent", "/fabric/cnps_received", "/fabric/delivered_payload_bytes",
                            "/operations", "/completed", "/fabric/completed_flows"}) {
    const json::json_pointer p(field);
    ASSERT_TRUE(ref.contains(p)) << field;
    EXPECT_EQ(both.at(p), ref.at(p)) << field;
    EXPECT_EQ(rtl.at(p), ref.at(p)) << field;
  }
  EXPECT_EQ(both, ref);
  EXPECT_EQ(rtl, ref);
}

TEST(user_rtl_fabric, planted_cnp_generator_bug_stops_the_lockstep_run_with_a_waveform) {
  const std::string waves = testing::TempDir() + "user_cnp_waves_" + std::to_string(getpid());
  run_shell("rm -rf " + waves);
  const run_result r =
      fabricsim_run(tiny_incast + " --set nic.cnp_model=lockstep --user-rtl cnp_gen=" + generator_bug() +
                    " --user-rtl-top cnp_flag_gen --quiet --wave " + waves);
  ASSERT_EQ(r.exit_code, 5) << r.output;
  // "h0_nic: cnp_gen RTL (user) and its reference model diverge at transaction 12, marked arrival of flow
  // (QPN) 3 at cycle 4711:" then both results: the reference sends a CNP the bug suppresses.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("RTL divergence: (h[0-9]+_nic): cnp_gen RTL \\(user\\) and its reference "
                                           "model diverge at transaction [1-9][0-9]*, marked arrival of flow \\(QPN\\) "
                                           "[0-9]+ at cycle [0-9]+:")))
      << r.output;
  EXPECT_NE(r.output.find("fields that differ: emit rtl 0, ref 1"), std::string::npos) << r.output;
  const std::string wave = waves + "/" + m[1].str() + ".cnp_gen.fst";
  EXPECT_NE(r.output.find("waveform " + wave + ": transactions "), std::string::npos) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written\n" << r.output;
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
}

TEST(user_rtl_fabric, both_user_blocks_at_once_and_the_refusals) {
  // The tracker and the generator together, each in lockstep: the report is the all-ref run's.
  const std::string both = " --user-rtl reorder_tracker=" + tracker + " --user-rtl cnp_gen=" + generator +
                           " --user-rtl-top reorder_tracker=psn_shift_tracker --user-rtl-top cnp_gen=cnp_flag_gen";
  const json ref = report_of(tiny_incast + " --set nic.reorder=ref --set nic.cnp_model=ref", "two_ref");
  const json user = report_of(tiny_incast + " --set nic.reorder=lockstep --set nic.cnp_model=lockstep" + both, "two");
  EXPECT_EQ(user, ref);

  const std::string run = tiny_incast + " --quiet --set nic.cnp_model=lockstep";
  run_result r = fabricsim_run(run + " --set nic_overrides.h1.cnp_rtl=x.sv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nic_overrides.h1.cnp_rtl: a user's CNP generator runs in every NIC or in none: set "
                          "nic.cnp_rtl"),
            std::string::npos)
      << r.output;
  r = fabricsim_run(tiny_incast + " --quiet --set nic.cnp_model=ref --user-rtl cnp_gen=" + generator);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(": needs nic.cnp_model rtl or lockstep (ref runs no RTL)"), std::string::npos) << r.output;
  r = fabricsim_run(run + " --set nic.cnp_rtl=none.sv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(
      r.output.find("incast_dcqcn_tiny.yaml: nic.cnp_rtl none.sv: no such file " + source_dir + "/tests/cli/none.sv"),
      std::string::npos)
      << r.output;
  r = fabricsim_run(run + " --user-rtl dcqcn=" + generator);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("block dcqcn cannot run in a fabric; blocks that can: reorder_tracker, cnp_gen, dcqcn_rp"),
            std::string::npos)
      << r.output;
  r = fabricsim_run(run + " --user-rtl cnp_gen=" + generator + " --user-rtl cnp_gen=" + generator);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("block cnp_gen given twice"), std::string::npos) << r.output;
  r = fabricsim_run(run + both.substr(0, both.find(" --user-rtl-top")) + " --user-rtl-top cnp_flag_gen");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("with 2 --user-rtl blocks, name the block: --user-rtl-top BLOCK=NAME"), std::string::npos)
      << r.output;
  r = fabricsim_run(run + " --user-rtl-top cnp_gen=cnp_flag_gen");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--user-rtl-top cnp_gen=cnp_flag_gen: no --user-rtl cnp_gen=FILE.sv to go with it"),
            std::string::npos)
      << r.output;
  // A mutant of the block the user replaces: which RTL would it be?
  r = fabricsim_run(run + " --user-rtl cnp_gen=" + generator + " --user-rtl-top cnp_flag_gen --rtl-mutant cnp_gen:18");
  EXPECT_EQ(r.exit_code, 2) << r.output;
#if FABRICSIM_MUTANTS_BUILT
  EXPECT_NE(r.output.find("a user's cnp_gen (--user-rtl) and a cnp_gen mutant cannot be combined"), std::string::npos)
      << r.output;
#else  // a build without mutants (the asan preset) refuses the mutant itself first
  EXPECT_NE(r.output.find("no cnp_gen mutant 18 in this build"), std::string::npos) << r.output;
#endif
}

// The done-when of issue 23 item 4: the user's reorder tracker in every NIC of a 64-NIC leaf-spine (4 leaves of
// 16 hosts, 4 spines) with per-packet spraying, adaptive routing at the switches and 0.1 % loss, in lockstep with
// the reference model. The alternative runs clean and every byte is verified. The planted bug forgets the
// duplicate verdict of a PSN already marked ahead of the head, which only retransmissions bring: the bugged
// block runs clean on the same fabric without loss, and with loss the first divergence stops the run (exit 5)
// naming the NIC, QP, PSN and both verdicts, with a waveform of the block's last transactions.
TEST(user_rtl_fabric, users_tracker_in_a_lossy_sprayed_64_nic_fabric_in_lockstep) {
  const std::string fabric = source_dir +
                             "/testbench/scenarios/leaf_spine_permutation.yaml --set topology.leaves=4 --set "
                             "topology.hosts_per_leaf=16 --set topology.spines=4 --set workload.message_bytes=262144 "
                             "--set nic.path_entropy=per_packet --set switch.routing=adaptive --set "
                             "nic.reorder=lockstep --set nic.reorder_window=256 --user-rtl-top psn_shift_tracker";
  const std::string lossy = fabric + " --set link.drop_probability=0.001";
  const std::string json_out = testing::TempDir() + "user_rtl_64_" + std::to_string(getpid()) + ".json";
  run_result r = fabricsim_run(lossy + " --user-rtl reorder_tracker=" + tracker + " --json " + json_out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user RTL reorder_tracker " + tracker + " (module psn_shift_tracker, Window 256)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("operations 64/64 completed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("data: VERIFIED"), std::string::npos) << r.output;
  const json report = json::parse(slurp(json_out));
  const json& fab = report.at("fabric");
  EXPECT_GT(fab.at("injected_drops").get<uint64_t>(), 0u) << fab.dump(1);        // loss happened
  EXPECT_GT(fab.at("retransmissions").get<uint64_t>(), 0u) << fab.dump(1);       // and was recovered
  EXPECT_GT(fab.at("out_of_order_packets").get<uint64_t>(), 0u) << fab.dump(1);  // spraying reordered

  const std::string bug = variant(tracker, "psn_shift_tracker_no_marked_duplicate.sv",
                                  {{"    if (marks[d[$clog2(Window)-1:0]]) return Duplicate;\n", ""}});
  r = fabricsim_run(fabric + " --user-rtl reorder_tracker=" + bug + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << "without loss the bug is not reached\n" << r.output;
  const std::string waves = testing::TempDir() + "user_rtl_64_waves_" + std::to_string(getpid());
  run_shell("rm -rf " + waves);
  r = fabricsim_run(lossy + " --user-rtl reorder_tracker=" + bug + " --quiet --wave " + waves);
  ASSERT_EQ(r.exit_code, 5) << r.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.output, m,
                        std::regex("RTL divergence: (h[0-9]+_nic) qp ([0-9]+): reorder_tracker RTL \\(user\\) and "
                                   "its reference model diverge at transaction [0-9]+, arrive psn [0-9]+:")))
      << r.output;
  EXPECT_NE(r.output.find("fields that differ: verdict rtl out_of_order, ref duplicate"), std::string::npos)
      << r.output;
  const std::string wave = waves + "/" + m[1].str() + ".qp" + m[2].str() + ".reorder_tracker.fst";
  EXPECT_NE(r.output.find("waveform " + wave + ": transactions "), std::string::npos) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written\n" << r.output;
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
}

// verify-rtl --replay FILE --rtl USER.sv: a recording of a shipped scenario through the user's block.
TEST(user_rtl_fabric, recording_replays_against_the_users_reorder_tracker) {
  const std::string dir = testing::TempDir() + "user_replay_rt_" + std::to_string(getpid());
  run_result r = fabricsim_run(leaf_spine_small + " --quiet --record-rtl " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string file = dir + "/reorder_tracker.txt";
  const std::string rec = slurp(file);
  const uint64_t expected = transactions_in(rec);
  ASSERT_EQ(count_lines(rec, "arrive "), 16u * 64u);  // 16 WRITEs of 256 KiB at MTU 4096, no loss
  const std::string replay = env + FABRICSIM_BINARY + " verify-rtl --block reorder_tracker --replay " + file;
  r = run_shell(replay + " --rtl " + tracker + " --top psn_shift_tracker");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user RTL reorder_tracker " + tracker + " (module psn_shift_tracker, Window 256)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  transactions           " + std::to_string(expected) + "\n"), std::string::npos)
      << "expected " << expected << "\n"
      << r.output;
  EXPECT_NE(r.output.find("user RTL matches the reference model after every recorded transaction"), std::string::npos)
      << r.output;

  // The planted bug: the first mismatch, at a line of the file that is the transaction it quotes.
  r = run_shell(replay + " --rtl " + tracker_bug() + " --top psn_shift_tracker");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("MISMATCH at [^ ]*reorder_tracker.txt:([0-9]+), instance [^ ]+ transaction "
                                           "[0-9]+ \\(\"([^\"]+)\"\\): verdict expected out_of_order \\(reference "
                                           "model\\) got out_of_window \\(user RTL\\)")))
      << r.output;
  std::istringstream lines(rec);
  std::string line;
  for (long n = std::stol(m[1]); n > 0 && std::getline(lines, line); --n) {
  }
  EXPECT_EQ(line, m[2].str());
  EXPECT_EQ(line.rfind("arrive ", 0), 0u) << line;
}

TEST(user_rtl_fabric, recording_replays_against_the_users_cnp_generator) {
  const std::string dir = testing::TempDir() + "user_replay_cnp_" + std::to_string(getpid());
  run_result r = fabricsim_run(tiny_incast + " --quiet --record-rtl " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string file = dir + "/cnp_gen.txt";
  const std::string rec = slurp(file);
  ASSERT_GT(count_lines(rec, "mark "), 10u);
  const uint64_t expected = transactions_in(rec);
  const std::string replay = env + FABRICSIM_BINARY + " verify-rtl --block cnp_gen --replay " + file;
  r = run_shell(replay + " --rtl " + generator + " --top cnp_flag_gen");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  transactions           " + std::to_string(expected) + "\n"), std::string::npos)
      << "expected " << expected << "\n"
      << r.output;
  EXPECT_NE(r.output.find("user RTL matches the reference model after every recorded transaction"), std::string::npos)
      << r.output;
  r = run_shell(replay + " --rtl " + generator_bug() + " --top cnp_flag_gen");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("MISMATCH at [^ ]*cnp_gen.txt:[0-9]+, instance [^ ]+ transaction "
                                                     "[0-9]+ \\(\"mark [0-9]+ [0-9]+ [0-9]+\"\\): emit expected 1 "
                                                     "\\(reference model\\) got 0 \\(user RTL\\)")))
      << r.output;
  // Refused: a file that is not there, --param (the recording sizes the block).
  r = run_shell(replay + " --rtl " + dir + "/none.sv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("verify-rtl --rtl " + dir + "/none.sv: no such file"), std::string::npos) << r.output;
  r = run_shell(replay + " --rtl " + generator + " --top cnp_flag_gen --param Flows=64");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--param cannot be combined with --replay"), std::string::npos) << r.output;
}

// tests/rtl/user_blocks/dcqcn_fold_rp.sv: the flow as one struct, each step of the algorithm a function, one
// applied per clock, instead of our parallel next-state datapath. The planted bug rounds the rate's step
// towards the target down instead of up.
const std::string reaction_point = source_dir + "/tests/rtl/user_blocks/dcqcn_fold_rp.sv";
const std::string recovering = source_dir + "/tests/cli/lockstep_dcqcn.yaml";  // a cut, then back to line rate

std::string reaction_point_bug() {
  return variant(reaction_point, "dcqcn_fold_rp_round_down.sv",
                 {{"avg    = ({1'b0, g.target} + {1'b0, f.rate} + 33'd1) >> 1;",
                   "avg    = ({1'b0, g.target} + {1'b0, f.rate}) >> 1;"}});
}

TEST(user_rtl_fabric, alternative_reaction_point_in_lockstep_reports_what_ref_reports) {
  const std::string user = " --user-rtl dcqcn_rp=" + reaction_point + " --user-rtl-top dcqcn_fold_rp";
  for (const std::string& scenario : {tiny_incast, recovering}) {
    const json ref = report_of(scenario + " --set nic.dcqcn_model=ref", "rp_ref");
    const json both = report_of(scenario + " --set nic.dcqcn_model=lockstep" + user, "rp_lockstep");
    const json rtl = report_of(scenario + " --set nic.dcqcn_model=rtl" + user, "rp_rtl");
    // CNPs reached the reaction points (they cut rates); bytes and completions as the ref run's.
    ASSERT_GT(ref.at("fabric").at("cnps_received").get<uint64_t>(), 0u) << scenario;
    for (const char* field : {"/fabric/cnps_received", "/fabric/delivered_payload_bytes", "/operations", "/completed",
                              "/fabric/sender_goodput_gbps"}) {
      const json::json_pointer p(field);
      ASSERT_TRUE(ref.contains(p)) << field;
      EXPECT_EQ(both.at(p), ref.at(p)) << scenario << " " << field;
      EXPECT_EQ(rtl.at(p), ref.at(p)) << scenario << " " << field;
    }
    EXPECT_EQ(both, ref) << scenario;
    EXPECT_EQ(rtl, ref) << scenario;
  }
}

TEST(user_rtl_fabric, planted_reaction_point_bug_stops_the_lockstep_run_with_a_waveform) {
  const std::string waves = testing::TempDir() + "user_rp_waves_" + std::to_string(getpid());
  run_shell("rm -rf " + waves);
  const run_result r =
      fabricsim_run(recovering + " --set nic.dcqcn_model=lockstep --user-rtl dcqcn_rp=" + reaction_point_bug() +
                    " --user-rtl-top dcqcn_fold_rp --quiet --wave " + waves);
  ASSERT_EQ(r.exit_code, 5) << r.output;
  // "h1_nic qp 1: dcqcn_rp RTL (user) and its reference model diverge at transaction 40, sent 4158 bytes at
  // cycle 9000:" then both outputs; the rate differs by the rounding: one kb/s.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("RTL divergence: (h[0-9]+_nic) qp ([0-9]+): dcqcn_rp RTL \\(user\\) and "
                                           "its reference model diverge at transaction [1-9][0-9]*, (sent [0-9]+ bytes "
                                           "at|timers advanced to|CNP at) cycle [0-9]+:")))
      << r.output;
  const std::string nic = m[1], qp = m[2];
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("fields that differ: rate_kbps rtl ([0-9]+), ref ([0-9]+)")))
      << r.output;
  EXPECT_EQ(std::stoull(m[2]), std::stoull(m[1]) + 1) << r.output;
  const std::string wave = waves + "/" + nic + ".qp" + qp + ".dcqcn_rp.fst";
  EXPECT_NE(r.output.find("waveform " + wave + ": transactions "), std::string::npos) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written\n" << r.output;
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
  // A reaction-point contract violation is named before anything is Verilated.
  const std::string narrow = variant(reaction_point, "dcqcn_fold_rp_narrow.sv",
                                     {{"input  wire logic [63:0] req_now_i", "input  wire logic [31:0] req_now_i"}});
  const run_result n =
      fabricsim_run(recovering + " --quiet --set nic.dcqcn_model=lockstep --user-rtl dcqcn_rp=" + narrow +
                    " --user-rtl-top dcqcn_fold_rp");
  EXPECT_EQ(n.exit_code, 2) << n.output;
  EXPECT_NE(n.output.find("port req_now_i: expected input of 64 bits (the request's time, cycles), found input of "
                          "32 bits"),
            std::string::npos)
      << n.output;
}

TEST(user_rtl_fabric, recording_replays_against_the_users_reaction_point) {
  const std::string dir = testing::TempDir() + "user_replay_rp_" + std::to_string(getpid());
  run_result r = fabricsim_run(recovering + " --quiet --record-rtl " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string file = dir + "/dcqcn_rp.txt";
  const std::string rec = slurp(file);
  ASSERT_GT(count_lines(rec, "cnp "), 0u);
  ASSERT_GT(count_lines(rec, "sent "), 100u);
  const uint64_t expected = transactions_in(rec);
  const std::string replay = env + FABRICSIM_BINARY + " verify-rtl --block dcqcn_rp --replay " + file;
  r = run_shell(replay + " --rtl " + reaction_point + " --top dcqcn_fold_rp");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user RTL dcqcn_rp " + reaction_point + " (module dcqcn_fold_rp): "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  transactions           " + std::to_string(expected) + "\n"), std::string::npos)
      << "expected " << expected << "\n"
      << r.output;
  EXPECT_NE(r.output.find("user RTL matches the reference model after every recorded transaction"), std::string::npos)
      << r.output;
  r = run_shell(replay + " --rtl " + reaction_point_bug() + " --top dcqcn_fold_rp");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("MISMATCH at [^ ]*dcqcn_rp.txt:[0-9]+, instance [^ ]+ transaction [0-9]+ "
                                           "\\(\"[^\"]+\"\\): rate_kbps expected ([0-9]+) \\(reference model\\) got "
                                           "([0-9]+) \\(user RTL\\)")))
      << r.output;
  EXPECT_EQ(std::stoull(m[1]), std::stoull(m[2]) + 1) << r.output;
}

}  // namespace
