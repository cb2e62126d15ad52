// RTL in the loop, shown (issue 20, item 4): nic.reorder / nic.cnp_model / nic.dcqcn_model lockstep runs the
// Verilated block and its reference model side by side in every NIC, and --rtl-mutant BLOCK:N puts an
// already-built mutant (generated mutant N, rtl/mutants/BLOCK/N.patch) in the fabric. A clean lockstep run reports what
// rtl and ref report; each mutant the fabric can reach is caught by lockstep (exit 5, naming the NIC, QP, block and
// transaction) and, without lockstep, changes the fabric's outcome or fails the byte check; --wave writes the diverging
// block's FST.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_cli.h"

namespace lockstep_test {

using nlohmann::json;

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;
using fabricsim::test::run_shell;

const std::string cli_dir = std::string(FABRICSIM_SOURCE_DIR) + "/tests/cli/";
const std::string tiny_incast = cli_dir + "incast_dcqcn_tiny.yaml";  // 4 senders into h0, sprayed, ECN marks
const std::string lossy_pair = cli_dir + "lockstep_reorder.yaml";    // loss and reordering, window 64
const std::string recovering = cli_dir + "lockstep_dcqcn.yaml";      // a cut, then back to line rate

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The report without what depends on the machine (scripts/golden's MACHINE_FIELDS).
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

// Runs `args`, requiring exit status `status`, and returns the stripped JSON report.
json report_of(const std::string& args, const std::string& name, int status = 0) {
  // ctest runs the tests of this file in parallel processes: one file name per process.
  const std::string out = testing::TempDir() + "lockstep_" + std::to_string(getpid()) + "_" + name + ".json";
  std::remove(out.c_str());
  const run_result r = fabricsim("run " + args + " --quiet --json " + out);
  EXPECT_EQ(r.exit_code, status) << args << "\n" << r.output;
  return strip(json::parse(slurp(out)));
}

std::string every_block(const std::string& kind) {
  return " --set nic.reorder=" + kind + " --set nic.cnp_model=" + kind + " --set nic.dcqcn_model=" + kind;
}

TEST(lockstep, a_clean_lockstep_run_reports_what_rtl_and_ref_report) {
  // Lockstep returns the RTL's results and only compares: the report must not move by a bit.
  for (const std::string& scenario : {lossy_pair, tiny_incast, recovering}) {
    const json rtl = report_of(scenario + every_block("rtl"), "clean_rtl");
    const json ref = report_of(scenario + every_block("ref"), "clean_ref");
    const json both = report_of(scenario + every_block("lockstep"), "clean_lockstep");
    EXPECT_EQ(rtl, ref) << scenario;
    EXPECT_EQ(rtl, both) << scenario;
    // Something ran: at least the smallest scenario's data packets, 3 x 64 of 4 KiB, two hops each.
    EXPECT_GE(rtl.at("packet_hops").get<uint64_t>(), 384u) << scenario;
  }
}

TEST(lockstep, the_notification_points_counter_may_start_anywhere) {
  // 20000 cycles before the 32-bit time field wraps: the 60 us run crosses it (its first mark is at about
  // 2.5 us, its last near 60 us), and the modular compare of rtl/cnp_gen.sv makes that invisible.
  const std::string near_wrap = " --set nic.cnp_time_origin_cycles=" + std::to_string((uint64_t{1} << 32) - 20000);
  const json from_zero = report_of(tiny_incast + every_block("lockstep"), "origin_zero");
  const json wrapping = report_of(tiny_incast + every_block("lockstep") + near_wrap, "origin_wrap");
  EXPECT_EQ(from_zero, wrapping);
  EXPECT_GT(from_zero.at("fabric").at("cnps_sent").get<uint64_t>(), 10u);
}

// One mutant in a fabric chosen to reach it, and what it does there without lockstep.
enum class without_lockstep {
  not_verified,   // the byte check fails (exit 1)
  changes_field,  // `field` of the report differs from the clean run's
  no_effect,      // the report is the clean run's: only lockstep sees the bug
};
struct mutant_case {
  const char* block;
  int number;
  std::string scenario;  // with its --set options
  const char* context;   // what the divergence names besides the NIC: "qp " for a per-QP block
  without_lockstep effect;
  const char* field;  // changes_field: a JSON pointer
};

std::string mutant_name(const testing::TestParamInfo<mutant_case>& info) {
  return std::string(info.param.block) + "_" + std::to_string(info.param.number);
}

class lockstep_mutant : public testing::TestWithParam<mutant_case> {};

TEST_P(lockstep_mutant, is_caught_by_lockstep_naming_nic_context_block_and_transaction) {
  const mutant_case& m = GetParam();
  const std::string choice = std::string(m.block) + ":" + std::to_string(m.number);
  const run_result r =
      fabricsim("run " + m.scenario + every_block("lockstep") + " --rtl-mutant " + choice + " --quiet");
  ASSERT_EQ(r.exit_code, 5) << r.output;
  // "fabricsim: RTL divergence: h1_nic qp 2: reorder_tracker RTL (rtl_mutant_16) and its reference model
  // diverge at transaction 70, arrive psn 1380822:" then both results and the fields that differ.
  const std::string where = *m.context ? "h[0-9]+_nic " + std::string(m.context) + "[0-9]+: " : "h[0-9]+_nic: ";
  const std::regex head("fabricsim: RTL divergence: " + where + m.block + " RTL \\(rtl_mutant_" +
                        std::to_string(m.number) + "\\) and its reference model diverge at transaction [1-9][0-9]*, ");
  EXPECT_TRUE(std::regex_search(r.output, head)) << r.output;
  EXPECT_NE(r.output.find("fields that differ: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rtl {"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", ref {"), std::string::npos) << r.output;
}

TEST_P(lockstep_mutant, without_lockstep_changes_the_outcome_or_fails_the_byte_check) {
  const mutant_case& m = GetParam();
  const std::string choice = std::string(m.block) + ":" + std::to_string(m.number);
  const json clean = report_of(m.scenario + every_block("rtl"), "plain_clean");
  switch (m.effect) {
    case without_lockstep::not_verified: {
      const json bad = report_of(m.scenario + every_block("rtl") + " --rtl-mutant " + choice, "plain_mutant", 1);
      EXPECT_TRUE(clean.at("verified").get<bool>());
      EXPECT_FALSE(bad.at("verified").get<bool>());
      // The byte check or the outcome tells: bytes landed wrong, a completed WRITE has bytes that never
      // landed, or a WRITE failed (its queue pair ran out of retries).
      EXPECT_GT(bad.at("mismatched_bytes").get<uint64_t>() + bad.at("missing_bytes").get<uint64_t>() +
                    bad.at("failed").get<uint64_t>(),
                0u);
      break;
    }
    case without_lockstep::changes_field: {
      const json bad = report_of(m.scenario + every_block("rtl") + " --rtl-mutant " + choice, "plain_mutant");
      const json::json_pointer at(m.field);
      EXPECT_NE(clean.at(at), bad.at(at)) << m.field;
      break;
    }
    case without_lockstep::no_effect: {
      // At line rate the stuck rate timer only raises a rate already at its ceiling: the NIC reads the same
      // rate, so only the engine's own counters (timer_count, events), which lockstep compares, differ.
      const json bad = report_of(m.scenario + every_block("rtl") + " --rtl-mutant " + choice, "plain_mutant");
      EXPECT_EQ(clean, bad);
      break;
    }
  }
}

const std::string origin_near_wrap = " --set nic.cnp_time_origin_cycles=" + std::to_string((uint64_t{1} << 32) - 20000);

// Traffic per mutant (generated mutant ids; docs/verification.md, "RTL in the loop", has the table):
//  reorder_tracker 16 (in-window test >= instead of ==: PSNs a window or more ahead are marked in a slot of the
//    window) and 44 (retiring a stored PSN no longer clears its slot): loss with a long cable, so arrivals
//    run far ahead of the head and the head retires stored PSNs;
//  cnp_gen 18 (>= -> > in the interval test): an interval (2005 ns) that one of h0's flows' marks lands on exactly
//    (24 packets of 83.56 ns);
//  cnp_gen 12 (the elapsed time a sum instead of a difference): every mark, the counter started 20000 cycles
//    before the 32-bit wrap;
//  dcqcn_rp 271 (!= -> <= in the timer's re-arm: always true, the timer stays armed at line rate): a cut, then
//    the rate timer alone (huge byte counter) brings h1 back to line rate;
//  dcqcn_rp 66 (>= -> > in the monitor window): 334.24 Gb/s links, where a full frame takes exactly 100 ns:
//    CNPs (interval 2 us) land exactly one monitor period (2 us) after the last cut;
//  dcqcn_rp 314 (a cut no longer clears the byte accumulator): the tiny incast's byte counter events across cuts.
INSTANTIATE_TEST_SUITE_P(
    fabric, lockstep_mutant,
    testing::Values(mutant_case{"reorder_tracker", 16, lossy_pair, "qp ", without_lockstep::not_verified, ""},
                    mutant_case{"reorder_tracker", 44, lossy_pair, "qp ", without_lockstep::not_verified, ""},
                    mutant_case{"cnp_gen", 18, tiny_incast + " --set nic.cnp_interval_ns=2005", "",
                                without_lockstep::changes_field, "/fabric/cnps_sent"},
                    mutant_case{"cnp_gen", 12, tiny_incast + origin_near_wrap, "", without_lockstep::changes_field,
                                "/fabric/cnps_sent"},
                    // The stuck rate timer fires again at the ceiling: the NIC reads the same rate, but each extra
                    // timer is an extra cycle of the clocked block (k + 2 per transaction).
                    mutant_case{"dcqcn_rp", 271, recovering, "qp ", without_lockstep::changes_field,
                                "/stats/h1_nic/dcqcn_rp_busy_cycles/value"},
                    mutant_case{"dcqcn_rp", 66,
                                tiny_incast + " --set topology.link_gbps=334.24 --set nic.cnp_interval_ns=2000 --set "
                                              "nic.dcqcn_rate_reduce_monitor_period_us=2",
                                "qp ", without_lockstep::changes_field, "/fabric/delivered_payload_bytes"},
                    mutant_case{"dcqcn_rp", 314, tiny_incast, "qp ", without_lockstep::changes_field,
                                "/fabric/delivered_payload_bytes"}),
    mutant_name);

TEST(lockstep, init_mutants_are_equivalent_in_fabric_runs) {
  // reorder_tracker 39 and cnp_gen 52 forget to clear state on an init. A NIC inits each block once, right after
  // the reset pulse that already cleared it; the tracker's only later init is an RNR reset, and the testbench
  // posts every receive before the run, so none happens. Should a workload ever re-init a block, this test
  // fails and docs/verification.md's table must say what catches them.
  const std::string sprayed_64 = tiny_incast + " --set nic.reorder_window=64";  // reorder mutants: window 64
  for (const auto& [choice, scenario] :
       std::vector<std::pair<std::string, std::string>>{{"reorder_tracker:39", lossy_pair},
                                                        {"reorder_tracker:39", sprayed_64},
                                                        {"cnp_gen:52", tiny_incast},
                                                        {"cnp_gen:52", recovering}}) {
    const json clean = report_of(scenario + every_block("lockstep"), "init_clean");
    const json with = report_of(scenario + every_block("lockstep") + " --rtl-mutant " + choice, "init_mutant");
    EXPECT_EQ(clean, with) << choice << " on " << scenario;
  }
}

// ---- --wave

// An FST file's fixed header block (gtkwave's fstapi.c): block type FST_BL_HDR (0), its section length 329
// (FST_HDRLEN) big-endian, start and end time, then the endianness test double e in the writer's byte order.
void expect_fst_header(const std::string& path) {
  const std::string f = slurp(path);
  ASSERT_GT(f.size(), 400u) << path << " is too small to hold a waveform";
  EXPECT_EQ(uint8_t(f[0]), 0u) << path << ": not an FST header block";
  uint64_t length = 0, start = 0, end = 0;
  for (int i = 1; i <= 8; ++i) length = length << 8 | uint8_t(f[i]);
  for (int i = 9; i <= 16; ++i) start = start << 8 | uint8_t(f[i]);
  for (int i = 17; i <= 24; ++i) end = end << 8 | uint8_t(f[i]);
  EXPECT_EQ(length, 329u) << path;
  double e = 0;
  std::memcpy(&e, f.data() + 25, sizeof e);
  EXPECT_DOUBLE_EQ(e, 2.7182818284590452354) << path;
  EXPECT_GT(end, start) << path << ": the waveform covers no time";
}

// What fst2vcd (gtkwave) shows of the tracker: handshakes accepted (req_valid_i && req_ready_o in a low clock
// phase, where the adapter drives its inputs) and the PSN of the last one.
struct tracker_wave {
  uint64_t accepted = 0;
  uint64_t last_psn = 0;
};
tracker_wave read_tracker_vcd(const std::string& vcd) {
  std::map<std::string, std::string> id;  // signal name -> VCD id, the top scope's
  std::map<std::string, uint64_t> value;  // VCD id -> value
  tracker_wave w;
  std::istringstream in(vcd);
  auto low_phase_ends = [&] {
    if (value[id["clk_i"]] == 0 && value[id["req_valid_i"]] && value[id["req_ready_o"]]) {
      ++w.accepted;
      w.last_psn = value[id["req_psn_i"]];
    }
  };
  bool seen_time = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string tok;
    l >> tok;
    if (tok == "$var") {
      std::string type, width, code, name;
      l >> type >> width >> code >> name;
      id.emplace(name, code);
    } else if (!tok.empty() && tok[0] == '#') {
      if (seen_time) low_phase_ends();  // the state of the time step that just ended
      seen_time = true;
    } else if (!tok.empty() && tok[0] == 'b') {
      std::string code;
      l >> code;
      value[code] = std::stoull(tok.substr(1), nullptr, 2);
    } else if (!tok.empty() && (tok[0] == '0' || tok[0] == '1') && tok.size() > 1) {
      value[tok.substr(1)] = uint64_t(tok[0] - '0');
    }
  }
  if (seen_time) low_phase_ends();
  return w;
}

TEST(lockstep, wave_writes_the_diverging_blocks_last_transactions_as_fst) {
  const std::string dir = testing::TempDir() + "lockstep_waves";
  run_shell("rm -rf " + dir);
  run_result r = fabricsim("run " + lossy_pair + " --rtl-mutant reorder_tracker:16 --wave " + dir + " --quiet");
  ASSERT_EQ(r.exit_code, 5) << r.output;
  // The tracker of the responder's QP that diverged, named after NIC, QP and block.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m,
                                std::regex("(h[0-9]+_nic) qp ([0-9]+): reorder_tracker .* at transaction ([0-9]+), "
                                           "arrive psn ([0-9]+)")))
      << r.output;
  const std::string path = dir + "/" + m[1].str() + ".qp" + m[2].str() + ".reorder_tracker.fst";
  EXPECT_NE(r.output.find("waveform " + path + ": transactions 1 to " + m[3].str()), std::string::npos) << r.output;
  expect_fst_header(path);

  if (run_shell("command -v fst2vcd").exit_code != 0) {
    std::printf("fst2vcd (gtkwave) not installed: the FST header was checked, not its signals\n");
  } else {
    const run_result vcd = run_shell("fst2vcd " + path);
    ASSERT_EQ(vcd.exit_code, 0) << vcd.output.substr(0, 2000);
    for (const char* signal :
         {"clk_i", "rst_ni", "init_valid_i", "req_valid_i", "req_psn_i", "rsp_verdict_o", "head_psn_o", "busy_o"})
      EXPECT_NE(vcd.output.find(std::string(" ") + signal + " "), std::string::npos) << signal;
    // Every transaction from the first: one init (the QP's connect), then one accepted PSN per arrival, the
    // last being the arrival that diverged.
    const tracker_wave w = read_tracker_vcd(vcd.output);
    EXPECT_EQ(w.accepted, std::stoull(m[3].str()) - 1);
    EXPECT_EQ(w.last_psn, std::stoull(m[4].str()));
  }

  // The notification point's and the reaction point's files take the same names.
  r = fabricsim("run " + tiny_incast +
                " --set nic.cnp_model=lockstep --set nic.cnp_interval_ns=2005 --rtl-mutant "
                "cnp_gen:18 --wave " +
                dir + " --quiet");
  ASSERT_EQ(r.exit_code, 5) << r.output;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("(h[0-9]+_nic): cnp_gen RTL"))) << r.output;
  expect_fst_header(dir + "/" + m[1].str() + ".cnp_gen.fst");
  r = fabricsim("run " + recovering + " --rtl-mutant dcqcn_rp:271 --wave " + dir + " --quiet");
  ASSERT_EQ(r.exit_code, 5) << r.output;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("(h[0-9]+_nic) qp ([0-9]+): dcqcn_rp RTL"))) << r.output;
  expect_fst_header(dir + "/" + m[1].str() + ".qp" + m[2].str() + ".dcqcn_rp.fst");
}

TEST(lockstep, a_clean_run_writes_no_waveform) {
  const std::string dir = testing::TempDir() + "lockstep_no_waves";
  run_shell("rm -rf " + dir);
  const run_result r = fabricsim("run " + lossy_pair + every_block("lockstep") + " --wave " + dir + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(run_shell("ls -A " + dir).output, "");
}

// ---- bad values

TEST(lockstep, bad_rtl_mutant_values_name_the_flag_the_value_and_the_choices) {
  struct bad {
    const char* args;
    const char* message;
  };
  const std::string rt = lossy_pair;
  for (const bad& b : {
           bad{" --rtl-mutant frobnicator:1",
               "error: --rtl-mutant 'frobnicator:1': expected BLOCK:N with BLOCK one of reorder_tracker, cnp_gen, "
               "dcqcn_rp"},
           bad{" --rtl-mutant cnp_gen", "error: --rtl-mutant 'cnp_gen': expected BLOCK:N"},
           bad{" --rtl-mutant cnp_gen:x",
               "error: --rtl-mutant 'cnp_gen:x': N must be a mutant number; cnp_gen "
               "mutants in this build: 12, 18, 52"},
           bad{" --rtl-mutant dcqcn_rp:9",
               "error: --rtl-mutant 'dcqcn_rp:9': no dcqcn_rp mutant 9 in this build; "
               "built: 66, 271, 314"},
           bad{" --rtl-mutant reorder_tracker:39 --set nic.reorder_window=256",
               "nic.reorder_window 256 and nic.rtl_mutant reorder_tracker:39: reorder_tracker mutant 39: window 256 "
               "is not built; mutants have window 64 only"},
           bad{" --set nic.rtl_mutant=cnp_gen:0", "nic.rtl_mutant 'cnp_gen:0': no cnp_gen mutant 0 in this build"},
       }) {
    const run_result r = fabricsim("run " + rt + b.args + " --quiet");
    EXPECT_EQ(r.exit_code, 2) << b.args << "\n" << r.output;
    EXPECT_NE(r.output.find(b.message), std::string::npos) << b.args << "\n" << r.output;
  }
}

}  // namespace lockstep_test
