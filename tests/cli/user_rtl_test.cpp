// A verification engineer's own RTL block through `fabricsim verify-rtl --rtl` (docs/rtl_contract.md): an
// alternative reorder tracker written for this test (tests/rtl/user_blocks/psn_shift_tracker.sv, a shift
// register aligned to the head rather than our bitmap addressed by PSN mod Window) passes the differential
// bench; the same file with a planted bug fails with a waveform that ends at the mismatch; contract
// violations are named before anything is Verilated; a compiled block is reused from the cache. The same for
// an alternative CNP generator and an alternative DCQCN reaction point.
//
// The compile cache is one folder of the build tree shared by every case (FABRICSIM_USER_RTL_CACHE), so the
// Verilator runtime and each file/parameter set are compiled once per build tree.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_cli.h"

namespace {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;
using fabricsim::test::run_shell;

const std::string alternative = std::string(FABRICSIM_SOURCE_DIR) + "/tests/rtl/user_blocks/psn_shift_tracker.sv";
const std::string alternative_cnp_gen = std::string(FABRICSIM_SOURCE_DIR) + "/tests/rtl/user_blocks/cnp_flag_gen.sv";
const std::string cache = std::string(" --rtl-cache ") + FABRICSIM_USER_RTL_CACHE;

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The alternative with each `from` replaced by its `to` (each must change it), written to the temp folder.
std::string variant(const std::string& name, const std::vector<std::pair<std::string, std::string>>& edits,
                    const std::string& source = alternative) {
  std::string text = read(source);
  for (const auto& [from, to] : edits) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " not in " << source;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  std::string path = testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

run_result verify(const std::string& file, const std::string& args = "") {
  return fabricsim("verify-rtl --block reorder_tracker --rtl " + file + " --top psn_shift_tracker" + cache + " " +
                   args);
}

TEST(user_rtl, alternative_reorder_tracker_matches_the_reference_and_closes_coverage) {
  for (const char* window : {"64", "256"}) {
    const run_result r = verify(alternative, std::string("--window ") + window);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("module psn_shift_tracker, Window ") + window), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("RTL matches the reference model on every cycle"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("  cycles                 100000\n"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("NOT HIT"), std::string::npos) << r.output;
  }
}

TEST(user_rtl, planted_bug_fails_with_a_waveform_up_to_the_mismatch) {
  // Off by one at the window edge: d == Window is marked (in the slot of the head) instead of dropped.
  const std::string bug = variant("psn_shift_tracker_bug.sv", {{"d >= 24'(Window)", "d > 24'(Window)"}});
  const std::string dir = testing::TempDir() + "user_rtl_bug/";
  run_shell("rm -rf " + dir + " && mkdir -p " + dir);
  const run_result r =
      run_shell("cd " + dir + " && " + FABRICSIM_BINARY + " verify-rtl --block reorder_tracker --rtl " + bug +
                " --top psn_shift_tracker --window 64" + cache);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("MISMATCH at cycle ([0-9]+)"))) << r.output;
  const long cycle = std::stol(m[1]);
  EXPECT_NE(r.output.find("\n  rtl    "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n  ref    "), std::string::npos) << r.output;
  // The bug is a verdict: the reference drops what the RTL marks.
  EXPECT_NE(r.output.find("res_verdict=3"), std::string::npos) << r.output;
  const std::string wave = dir + "psn_shift_tracker_mismatch_seed1.fst";
  EXPECT_NE(r.output.find("waveform up to the mismatch: psn_shift_tracker_mismatch_seed1.fst"), std::string::npos)
      << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written\n" << r.output;
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
  // GTKWave's converter reads it: two time points (clock low, clock high) per cycle, the mismatching one the last.
  const run_result vcd = run_shell("command -v fst2vcd >/dev/null || exit 77; fst2vcd " + wave + " | grep -c '^#'");
  if (vcd.exit_code == 77) return;  // gtkwave not installed
  ASSERT_EQ(vcd.exit_code, 0) << vcd.output;
  EXPECT_EQ(std::stol(vcd.output), 2 * (cycle + 1)) << vcd.output;
}

TEST(user_rtl, contract_violations_are_named_before_verilating) {
  struct violation {
    const char* name;
    std::vector<std::pair<std::string, std::string>> edits;
    const char* message;
  };
  const violation cases[] = {
      {"missing.sv",
       {{"output      logic        busy_o\n", "output      logic        busy_q\n"},
        {"assign busy_o ", "assign busy_q "}},
       "module psn_shift_tracker: missing port busy_o: expected output of 1 bit (retiring PSNs that arrived earlier), "
       "found no such port"},
      {"width.sv",
       {{"input  wire logic [23:0] req_psn_i", "input  wire logic [15:0] req_psn_i"}},
       "module psn_shift_tracker: port req_psn_i: expected input of 24 bits (the arriving PSN), found input of 16 "
       "bits"},
      // An input cannot be assigned: the assignment goes too, so the check, not Verilator, reports it.
      {"direction.sv",
       {{"output      logic        req_ready_o", "input  wire logic        req_ready_o"},
        {"assign req_ready_o =", "wire unused_ready ="}},
       "port req_ready_o: expected output of 1 bit (the PSN is taken at this edge if req_valid_i), found input"},
      {"extra.sv",
       {{"  input  wire logic        clk_i,\n", "  input  wire logic        clk_i,\n  input wire logic en_i,\n"}},
       "port en_i: an input the reorder_tracker contract does not have"},
  };
  for (const violation& v : cases) {
    const std::string path = variant(v.name, v.edits);
    const run_result r = verify(path);
    EXPECT_EQ(r.exit_code, 2) << v.name << "\n" << r.output;
    EXPECT_NE(r.output.find(path + ": module psn_shift_tracker: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(v.message), std::string::npos) << v.name << "\n" << r.output;
    EXPECT_EQ(r.output.find("compiled in"), std::string::npos) << r.output;
  }
  // A Window the reference model cannot take, from the elaborated parameter.
  const run_result r = verify(alternative, "--param Window=100");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("parameter Window = 100: expected a power of two in 16..4096"), std::string::npos)
      << r.output;
}

TEST(user_rtl, a_compiled_block_is_reused_from_the_cache) {
  run_result r = verify(alternative, "--window 128 --cycles 1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = verify(alternative, "--param Window=128 --cycles 1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("compiled block reused from the cache: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("compiled in"), std::string::npos) << r.output;
}

// tests/rtl/user_blocks/cnp_flag_gen.sv: flags cleared at once and a busy counter instead of our swept RAM.
TEST(user_rtl, alternative_cnp_generator_matches_and_a_planted_bug_fails) {
  for (const char* flows : {"64", "1024"}) {
    const run_result r = fabricsim("verify-rtl --block cnp_gen --rtl " + alternative_cnp_gen + " --top cnp_flag_gen" +
                                   cache + " --flows " + flows);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(std::string("module cnp_flag_gen, Flows ") + flows), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("RTL matches the reference model on every cycle"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("NOT HIT"), std::string::npos) << r.output;
  }
  // An arrival exactly one interval after the context's CNP is suppressed instead of emitted.
  const std::string bug = variant("cnp_flag_gen_bug.sv", {{"age >= interval", "age > interval"}}, alternative_cnp_gen);
  const std::string wave = testing::TempDir() + "cnp_flag_gen_bug.fst";
  std::remove(wave.c_str());
  const run_result r =
      fabricsim("verify-rtl --block cnp_gen --rtl " + bug + " --top cnp_flag_gen" + cache + " --wave " + wave);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("MISMATCH at cycle "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("signal rsp_emit_o: expected 1, got 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("waveform up to the mismatch: " + wave), std::string::npos) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written";
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
  // A cnp_gen contract violation: the QPN port narrowed.
  const std::string narrow = variant(
      "cnp_flag_gen_narrow.sv",
      {{"input  wire logic [23:0]          req_flow_i", "input  wire logic [15:0] req_flow_i"}}, alternative_cnp_gen);
  const run_result n = fabricsim("verify-rtl --block cnp_gen --rtl " + narrow + " --top cnp_flag_gen" + cache);
  EXPECT_EQ(n.exit_code, 2) << n.output;
  EXPECT_NE(n.output.find("port req_flow_i: expected input of 24 bits (its destination QPN), found input of 16 bits"),
            std::string::npos)
      << n.output;
}

// tests/rtl/user_blocks/dcqcn_fold_rp.sv: the flow as one packed struct, each step of the algorithm a function
// applied one per clock, instead of our parallel next-state datapath. Through the reaction point's random bench
// (both presets and random parameter sets, every output after every transaction).
const std::string alternative_reaction_point =
    std::string(FABRICSIM_SOURCE_DIR) + "/tests/rtl/user_blocks/dcqcn_fold_rp.sv";

run_result verify_reaction_point(const std::string& file, const std::string& args = "") {
  return fabricsim("verify-rtl --block dcqcn_rp --rtl " + file + " --top dcqcn_fold_rp" + cache + " " + args);
}

TEST(user_rtl, alternative_reaction_point_matches_the_reference_and_closes_coverage) {
  for (const char* preset : {"", "--preset nvidia"}) {
    const run_result r = verify_reaction_point(alternative_reaction_point, preset);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("module dcqcn_fold_rp, the widths of docs/rtl_contract.md"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("RTL matches the reference model after every transaction"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(" of 26 bins hit\n"), std::string::npos) << r.output;
    if (*preset == '\0') {  // the mixed sets close every bin
      EXPECT_NE(r.output.find("  26 of 26 bins hit\n"), std::string::npos) << r.output;
      EXPECT_EQ(r.output.find("NOT HIT"), std::string::npos) << r.output;
    }
    std::smatch m;  // the bench ran its 100000 clock cycles (it stops at the first transaction past them)
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("rtl cycles +([0-9]+)\n"))) << r.output;
    EXPECT_GE(std::stoull(m[1]), 100000u) << r.output;
  }
}

TEST(user_rtl, planted_reaction_point_bugs_fail_with_a_waveform) {
  // The rate's step towards the target rounded down instead of up: the rate is one kb/s short whenever
  // target + rate is odd.
  const std::string round_down = variant("dcqcn_fold_rp_round_down.sv",
                                         {{"avg    = ({1'b0, g.target} + {1'b0, f.rate} + 33'd1) >> 1;",
                                           "avg    = ({1'b0, g.target} + {1'b0, f.rate}) >> 1;"}},
                                         alternative_reaction_point);
  const std::string dir = testing::TempDir() + "user_rtl_rp_bug/";
  run_shell("rm -rf " + dir + " && mkdir -p " + dir);
  run_result r = run_shell("cd " + dir + " && " + FABRICSIM_BINARY + " verify-rtl --block dcqcn_rp --rtl " +
                           round_down + " --top dcqcn_fold_rp" + cache);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("MISMATCH at cycle [0-9]+ \\(transaction [0-9]+, seed 1\\): rate_o "
                                           "\\(kb/s\\) expected ([0-9]+) got ([0-9]+)")))
      << r.output;
  const uint64_t expected = std::stoull(m[1]), got = std::stoull(m[2]);
  EXPECT_EQ(got + 1, expected) << r.output;
  EXPECT_NE(r.output.find("\n  ref        "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n  rtl        "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("waveform up to the mismatch: dcqcn_fold_rp_mismatch_seed1.fst"), std::string::npos)
      << r.output;
  const std::string wave = dir + "dcqcn_fold_rp_mismatch_seed1.fst";
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written\n" << r.output;
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
  // The waveform ends at the mismatch: rate_o's last value in it is the wrong one the bench printed.
  const run_result last =
      run_shell("command -v fst2vcd >/dev/null || exit 77; fst2vcd " + wave +
                " | awk '$0 ~ /\\$var .* rate_o / && !id { id = $4 } id && $2 == id && $1 ~ /^b/ { v = substr($1, 2) } "
                "END { print v }'");
  if (last.exit_code != 77) {
    ASSERT_EQ(last.exit_code, 0) << last.output;
    EXPECT_EQ(std::stoull(last.output, nullptr, 2), got) << last.output;
  }

  // A CNP exactly one monitor period after the last cut suppressed instead of cutting: --wave names the file.
  const std::string monitor =
      variant("dcqcn_fold_rp_monitor.sv",
              {{"if (since >= {32'd0, cfg_monitor_period_i})", "if (since > {32'd0, cfg_monitor_period_i})"}},
              alternative_reaction_point);
  const std::string wave2 = testing::TempDir() + "dcqcn_fold_rp_monitor.fst";
  std::remove(wave2.c_str());
  r = verify_reaction_point(monitor, "--wave " + wave2);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("MISMATCH at cycle "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cnp at cycle "), std::string::npos) << r.output;  // the transaction is a CNP
  EXPECT_NE(r.output.find("waveform up to the mismatch: " + wave2), std::string::npos) << r.output;
  std::ifstream f2(wave2, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f2) << wave2 << " not written";
  EXPECT_GT(static_cast<long long>(f2.tellg()), 100) << wave2;

  // A reaction-point contract violation is named before anything is Verilated.
  const std::string narrow =
      variant("dcqcn_fold_rp_events.sv", {{"output      logic [9:0]  events_o", "output      logic [7:0]  events_o"}},
              alternative_reaction_point);
  r = verify_reaction_point(narrow);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("port events_o: expected output of 10 bits"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("compiled in"), std::string::npos) << r.output;
  // The bench's preset names are checked first.
  r = verify_reaction_point(alternative_reaction_point, "--preset dctcp");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--preset dctcp: only for --block dcqcn_rp, one of: paper, nvidia, fabric_400g"),
            std::string::npos)
      << r.output;
}

// Item 4 of issue 23: the user's block in every NIC of a 64-NIC leaf-spine with per-packet spraying, in lockstep
// with the reference model. The alternative runs clean; a window bound taken from the wrong constant (PSNs 8 or
// more ahead dropped at Window 256), which spraying reaches, stops the run at the first divergence (exit 5)
// naming the NIC, QP, PSN and both verdicts, with a waveform.
TEST(user_rtl, user_block_in_a_sprayed_64_nic_fabric_in_lockstep) {
  const std::string fabric =
      std::string(FABRICSIM_SOURCE_DIR) +
      "/testbench/scenarios/leaf_spine_permutation.yaml --set topology.leaves=4 --set "
      "topology.hosts_per_leaf=16 --set topology.spines=4 --set workload.message_bytes=262144 "
      "--set nic.path_entropy=per_packet --set nic.reorder=lockstep --set nic.reorder_window=256";
  const std::string env = "FABRICSIM_RTL_CACHE=" + std::string(FABRICSIM_USER_RTL_CACHE) + " ";
  run_result r = run_shell(env + FABRICSIM_BINARY + " run " + fabric + " --user-rtl reorder_tracker=" + alternative +
                           " --user-rtl-top psn_shift_tracker");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user RTL reorder_tracker " + alternative + " (module psn_shift_tracker, Window 256)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("operations 64/64 completed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("data: VERIFIED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("out-of-order arrivals"), std::string::npos) << r.output;  // spraying reorders

  const std::string bug = variant("psn_shift_tracker_narrow.sv", {{"d >= 24'(Window)", "d >= 24'(Window / 32)"}});
  const std::string waves = testing::TempDir() + "user_rtl_waves";
  run_shell("rm -rf " + waves);
  r = run_shell(env + FABRICSIM_BINARY + " run " + fabric + " --user-rtl reorder_tracker=" + bug +
                " --user-rtl-top psn_shift_tracker --wave " + waves);
  ASSERT_EQ(r.exit_code, 5) << r.output;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.output, m,
                        std::regex("RTL divergence: (h[0-9]+_nic) qp ([0-9]+): reorder_tracker RTL \\(user\\) and "
                                   "its reference model diverge at transaction [0-9]+, arrive psn [0-9]+")))
      << r.output;
  EXPECT_NE(r.output.find("verdict rtl out_of_window, ref out_of_order"), std::string::npos) << r.output;
  const std::string wave = waves + "/" + m[1].str() + ".qp" + m[2].str() + ".reorder_tracker.fst";
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written\n" << r.output;
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
}

TEST(user_rtl, a_scenario_names_the_block_with_nic_reorder_rtl) {
  // The file beside the scenario, named relative to it; run from another directory.
  const std::string dir = testing::TempDir() + "user_rtl_key/";
  run_shell("rm -rf " + dir + " && mkdir -p " + dir + "rtl");
  run_shell("cp " + alternative + " " + dir + "rtl/tracker.sv");
  const std::string yaml =
      "name: user_key\ntopology: {kind: single_switch, hosts: 4}\n"
      "link: {drop_probability: 0.01}\n"
      "nic: {reorder: lockstep, reorder_window: 64, path_entropy: per_packet, reorder_rtl: rtl/tracker.sv,\n"
      "      reorder_rtl_top: psn_shift_tracker}\n"
      "workload: {kind: permutation, message_bytes: 131072}\n";
  std::ofstream(dir + "user_key.yaml") << yaml;
  const std::string env = "cd / && FABRICSIM_RTL_CACHE=" + std::string(FABRICSIM_USER_RTL_CACHE) + " ";
  run_result r = run_shell(env + FABRICSIM_BINARY + " run " + dir + "user_key.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user RTL reorder_tracker " + dir + "rtl/tracker.sv (module psn_shift_tracker, Window 64)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("operations 4/4 completed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("data: VERIFIED"), std::string::npos) << r.output;
  // A planted bug in the file the key names is caught in lockstep (exit 5), as with --user-rtl.
  const std::string bug = variant("psn_shift_tracker_key_bug.sv", {{"d >= 24'(Window)", "d >= 24'(Window / 32)"}});
  r = run_shell(env + FABRICSIM_BINARY + " run " + dir + "user_key.yaml --set nic.reorder_rtl=" + bug);
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("reorder_tracker RTL (user) and its reference model diverge"), std::string::npos) << r.output;
  // Refused: one NIC alone, ref (no RTL to replace), a missing file (named with the key).
  r = run_shell(env + FABRICSIM_BINARY + " run " + dir + "user_key.yaml --set nic_overrides.h1.reorder_rtl=x.sv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nic_overrides.h1.reorder_rtl: a user's reorder tracker runs in every NIC or in none"),
            std::string::npos)
      << r.output;
  r = run_shell(env + FABRICSIM_BINARY + " run " + dir + "user_key.yaml --set nic.reorder=ref");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nic.reorder_rtl rtl/tracker.sv: needs nic.reorder rtl or lockstep"), std::string::npos)
      << r.output;
  r = run_shell(env + FABRICSIM_BINARY + " run " + dir + "user_key.yaml --set nic.reorder_rtl=none.sv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("user_key.yaml: nic.reorder_rtl none.sv: no such file " + dir + "none.sv"), std::string::npos)
      << r.output;
}

TEST(user_rtl, bad_requests_are_clear_errors) {
  run_result r =
      run_shell("FABRICSIM_VERILATOR=/nonexistent/verilator " + std::string(FABRICSIM_BINARY) +
                " verify-rtl --block reorder_tracker --rtl " + alternative + " --top psn_shift_tracker" + cache);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("Verilator (/nonexistent/verilator) is not on PATH"), std::string::npos) << r.output;
  r = fabricsim("verify-rtl --block hpcc --rtl " + alternative + cache);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(
      r.output.find("block hpcc has no user-RTL contract yet; blocks with one: reorder_tracker, cnp_gen, dcqcn_rp"),
      std::string::npos)
      << r.output;
  r = verify(alternative, "--mutant 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot be combined with --rtl"), std::string::npos) << r.output;
  r = verify(testing::TempDir() + "no_such_block.sv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no_such_block.sv: no such file"), std::string::npos) << r.output;
  r = verify(alternative, "--param 'Window=64; rm'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("expected NAME=VALUE"), std::string::npos) << r.output;
  // The default top is the block's name; the alternative's module is another.
  r = fabricsim("verify-rtl --block reorder_tracker --rtl " + alternative + cache);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot elaborate module reorder_tracker (--top names the top module)"), std::string::npos)
      << r.output;
}

}  // namespace
