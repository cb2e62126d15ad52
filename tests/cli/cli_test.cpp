// The fabricsim command line as a user runs it: the default scenario, a malformed scenario, bad flags,
// the JSON report's fields, and determinism of whole runs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_cli.h"

namespace {

using nlohmann::json;

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;

std::string temp_file(const std::string& name, const std::string& content) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

json load(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

const std::string scenarios = std::string(FABRICSIM_SOURCE_DIR) + "/testbench/scenarios/";

TEST(cli, default_scenario_runs_and_verifies) {
  const std::string out = testing::TempDir() + "default.json";
  const run_result r = fabricsim("run " + scenarios + "default.yaml --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Every byte of the three WRITEs (1,048,576 + 1,000,003 + 65,536) compared, of as many placed.
  EXPECT_NE(r.output.find("data: VERIFIED: 2,114,115 of 2,114,115 placed bytes checked byte for byte"),
            std::string::npos)
      << r.output;
  const json j = load(out);
  for (const char* key : {"scenario", "seed", "simulated_time_ns", "wall_time_s", "events", "packet_hops",
                          "packet_hops_per_s", "flows", "ports", "verified", "stats"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["verified"].get<bool>());
  EXPECT_EQ(j["checked_bytes"].get<uint64_t>(), 1048576u + 1000003u + 65536u);
  EXPECT_EQ(j["flows"].size(), 3u);
  // 1 MiB at MTU 4096 is 256 data packets, each crossing two links (NIC to switch, switch to NIC).
  EXPECT_GE(j["packet_hops"].get<uint64_t>(), 2u * (256u + 245u + 16u));
  for (const auto& f : j["flows"]) EXPECT_TRUE(f["verified"].get<bool>()) << f.dump();
}

TEST(cli, no_arguments_runs_the_built_in_default) {
  // The Spectrum-X headline: ECMP against adaptive routing, one row each.
  const run_result r = fabricsim("");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("comparison of switch.routing over 2 values (scenario spectrum_x_permutation)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\necmp "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nadaptive "), std::string::npos) << r.output;
}

TEST(cli, malformed_scenario_exits_non_zero_naming_file_line_and_key) {
  const std::string path = temp_file("bad.yaml", "name: bad\ntopology:\n  link_gbps: fast\n");
  const run_result r = fabricsim("run " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("topology.link_gbps"), std::string::npos) << r.output;
}

TEST(cli, unknown_key_and_bad_override_are_errors) {
  const std::string path = temp_file("typo.yaml", "name: typo\nnic:\n  mtu_byte: 4096\n");
  run_result r = fabricsim("run " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("mtu_byte"), std::string::npos) << r.output;
  r = fabricsim("run " + scenarios + "default.yaml --set topology.link_gbps=-3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("topology.link_gbps"), std::string::npos) << r.output;
}

TEST(cli, missing_file_and_unknown_flag_fail_cleanly) {
  run_result r = fabricsim("run /nonexistent/scenario.yaml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("/nonexistent/scenario.yaml"), std::string::npos) << r.output;
  r = fabricsim("run " + scenarios + "default.yaml --frobnicate");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("frobnicate"), std::string::npos) << r.output;
}

TEST(cli, help_lists_commands_and_flags) {
  const run_result r = fabricsim("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"run", "keys", "Example"}) EXPECT_NE(r.output.find(s), std::string::npos) << s;
  const run_result rr = fabricsim("run --help");
  for (const char* s : {"--set", "--seed", "--json", "--quiet", "--compare"})
    EXPECT_NE(rr.output.find(s), std::string::npos) << s;
}

json strip_wall_clock(json j) {
  j.erase("wall_time_s");
  j.erase("packet_hops_per_s");
  j.erase("peak_rss_mib");
  return j;
}

TEST(cli, same_seed_gives_identical_reports_and_another_seed_differs) {
  const std::string a = testing::TempDir() + "a.json", b = testing::TempDir() + "b.json",
                    c = testing::TempDir() + "c.json";
  const std::string s = scenarios + "leaf_spine_small.yaml --quiet";
  ASSERT_EQ(fabricsim("run " + s + " --seed 5 --json " + a).exit_code, 0);
  ASSERT_EQ(fabricsim("run " + s + " --seed 5 --json " + b).exit_code, 0);
  ASSERT_EQ(fabricsim("run " + s + " --seed 6 --json " + c).exit_code, 0);
  const json ja = strip_wall_clock(load(a)), jb = strip_wall_clock(load(b)), jc = strip_wall_clock(load(c));
  EXPECT_EQ(ja.dump(), jb.dump());
  EXPECT_NE(ja["flows"].dump(), jc["flows"].dump());  // spraying draws differ, so completion times do
  EXPECT_TRUE(ja["verified"].get<bool>());
  EXPECT_TRUE(jc["verified"].get<bool>());
}

}  // namespace

namespace {

TEST(cli, workload_too_large_for_memory_is_refused_before_anything_is_allocated) {
  // 256 hosts x 2^40 bytes each (source and destination): 2^49 bytes, four times a process's whole 2^47 of
  // address space, even with generated payloads that store no byte; must be a clear error, not an
  // allocation failure.
  run_result r =
      fabricsim("run " + scenarios + "leaf_spine_permutation.yaml --set workload.message_bytes=1099511627776");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("workload.message_bytes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("536870912 MiB of address space"), std::string::npos) << r.output;
  // Dense memory stores every byte: 256 x 2 x 64 GiB (2^36 each) is 32 TiB, within the address space but
  // beyond 3/4 of any machine this runs on.
  r = fabricsim("run " + scenarios +
                "leaf_spine_permutation.yaml --set workload.memory=dense --set workload.message_bytes=68719476736");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("33554432 MiB of memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("workload.memory"), std::string::npos) << r.output;
}

// With generated payloads what grows with the fabric is the model itself. The build measures the memory its
// first 256 hosts take and stops there when even that projection is past run.memory_limit_mib; otherwise the
// run checks what it holds once set up, before the first event. Both figures are held against the peak
// resident memory the kernel reports (getrusage) for the same run done whole.
TEST(cli, a_model_past_the_memory_limit_is_refused_naming_the_hosts_and_keys) {
  const std::string scale = std::string(FABRICSIM_SOURCE_DIR) +
                            "/bench/scale_4096.yaml --set topology.leaves=16 --set topology.spines=16 "
                            "--set run.duration_us=1 --quiet";
  const std::string json = testing::TempDir() + "memory_guard_whole.json";
  const run_result whole = fabricsim("run " + scale + " --json " + json);
  ASSERT_NE(whole.exit_code, 2) << whole.output;
  std::ifstream in(json);
  const double peak = nlohmann::json::parse(in)["peak_rss_mib"].get<double>();
  auto mib_after = [](const std::string& text, const std::string& before) {
    std::smatch m;
    return std::regex_search(text, m, std::regex(before + " ([0-9]+) MiB")) ? std::stod(m[1]) : -1.0;
  };
  // The build stopped at its first checkpoint: a floor (no switch, link or queue pair yet), below the peak.
  const run_result early = fabricsim("run " + scale + " --set run.memory_limit_mib=" + std::to_string(int(peak / 8)));
  ASSERT_EQ(early.exit_code, 2) << early.output;
  EXPECT_NE(early.output.find("scale_4096.yaml: building 1024 hosts (topology.leaves x topology.hosts_per_leaf) would "
                              "take at least "),
            std::string::npos)
      << early.output;
  EXPECT_NE(early.output.find("over the first 256 built; switches, links and queue pairs not counted), more than "
                              "run.memory_limit_mib ("),
            std::string::npos)
      << early.output;
  const double floor = mib_after(early.output, "at least");
  EXPECT_GT(floor, peak / 8) << early.output;
  EXPECT_LT(floor, peak) << early.output;
  // A limit above that floor but below the peak: refused once set up, with what the set-up holds, which the
  // report and the traffic then add to.
  const run_result set_up =
      fabricsim("run " + scale + " --set run.memory_limit_mib=" + std::to_string(int(peak * 0.6)));
  ASSERT_EQ(set_up.exit_code, 2) << set_up.output;
  EXPECT_NE(set_up.output.find("the set-up of 1024 hosts (topology.leaves x topology.hosts_per_leaf) took "),
            std::string::npos)
      << set_up.output;
  const double held = mib_after(set_up.output, "took");
  EXPECT_GT(held, 0.6 * peak) << set_up.output;
  EXPECT_LE(held, peak) << set_up.output;
}

}  // namespace

namespace {

TEST(cli, block_level_errors_name_the_instance_and_key) {
  run_result r = fabricsim("run " + scenarios + "default.yaml --set nic.reorder_window=128");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("h0_nic: nic.reorder ref with nic.reorder_window 128"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("64, 256, 1024"), std::string::npos) << r.output;
  r = fabricsim("run " + scenarios + "default.yaml --set nic_overrides.h9.reorder=ref");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("default.yaml: nic_overrides.h9: no host 'h9' (hosts are h0 .. h1)"), std::string::npos)
      << r.output;
  r = fabricsim("run " + scenarios + "default.yaml --set writes.1.src=h5");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("writes.1.src: no host 'h5'"), std::string::npos) << r.output;
  r = fabricsim("run " + scenarios + "default.yaml --set writes.0.dst=h99999999999999999999999");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("writes.0.dst: no host 'h99999999999999999999999' (hosts are h0 .. h1)"),
            std::string::npos)
      << r.output;
  r = fabricsim("run " + scenarios + "default.yaml --set nic.mtu_bytes=1000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nic.mtu_bytes 1000 is not one of 256, 512, 1024, 2048, 4096"), std::string::npos)
      << r.output;
}

TEST(cli, drops_are_reported_not_hidden) {
  // Two senders into one receiver through a 256 KiB shared buffer with no lossless class: the dynamic
  // threshold caps the queue at half the buffer and the 2:1 incast overruns it. Retransmission recovers:
  // the run verifies (exit 0) and the drops and resends are in the report. With no retries allowed the
  // first loss fails its queue pair: the run cannot verify, and the message says why.
  const std::string scenario = testing::TempDir() + "drops.yaml";
  std::ofstream(scenario) << "topology: {kind: single_switch, hosts: 3}\n"
                             "switch: {buffer_bytes: 262144, lossless_priorities: \"\"}\n"
                             "writes:\n"
                             "  - {src: h1, dst: h0, bytes: 1048576}\n"
                             "  - {src: h2, dst: h0, bytes: 1048576}\n";
  const std::string out = testing::TempDir() + "drops.json";
  const run_result r = fabricsim("run " + scenario + " --quiet --json " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const json j = load(out);
  EXPECT_GT(j["dropped_packets"].get<uint64_t>(), 0u);
  EXPECT_GE(j["fabric"]["retransmissions"].get<uint64_t>(), j["dropped_packets"].get<uint64_t>());
  EXPECT_TRUE(j["verified"].get<bool>());
  EXPECT_GT(j["stats"]["sw0.port0"]["dropped"]["value"].get<uint64_t>(), 0u);

  const run_result no_retry = fabricsim("run " + scenario + " --quiet --set nic.retry_count=0 --json " + out);
  EXPECT_EQ(no_retry.exit_code, 1) << no_retry.output;
  EXPECT_NE(no_retry.output.find("completed in error"), std::string::npos) << no_retry.output;
  EXPECT_NE(no_retry.output.find("packets were lost"), std::string::npos) << no_retry.output;
  const json failed = load(out);
  EXPECT_FALSE(failed["verified"].get<bool>());
  EXPECT_GT(failed["failed"].get<uint64_t>(), 0u);
}

}  // namespace

namespace {

TEST(cli, verify_rtl_reorder_tracker_matches_and_covers_every_verdict) {
  const run_result r = fabricsim("verify-rtl --block reorder_tracker --cycles 20000 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("RTL matches the reference model on every cycle"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cycles                 20000"), std::string::npos) << r.output;
  for (const char* verdict : {"in_order", "out_of_order", "duplicate", "out_of_window"}) {
    const size_t at = r.output.find(std::string("  ") + verdict + " ");
    ASSERT_NE(at, std::string::npos) << verdict << "\n" << r.output;
    const size_t digits = r.output.find_first_not_of(' ', at + 2 + std::string(verdict).size());
    EXPECT_GT(std::stoull(r.output.substr(digits)), 0u) << verdict << "\n" << r.output;
  }
}

TEST(cli, verify_rtl_writes_a_waveform) {
  const std::string wave = testing::TempDir() + "reorder_tracker_w64.fst";
  std::remove(wave.c_str());
  const run_result r = fabricsim("verify-rtl --block reorder_tracker --window 64 --cycles 2000 --wave " + wave);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written";
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
}

TEST(cli, verify_rtl_rejects_unknown_window_and_block) {
  run_result r = fabricsim("verify-rtl --block reorder_tracker --window 100");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("64, 256, 1024"), std::string::npos) << r.output;
  r = fabricsim("verify-rtl --block nope");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nope"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reorder_tracker"), std::string::npos) << r.output;
}

TEST(cli, verify_rtl_dcqcn_rp_matches_and_hits_every_coverage_bin) {
  const run_result r = fabricsim("verify-rtl --block dcqcn_rp");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("RTL matches the reference model after every transaction"), std::string::npos) << r.output;
  // 100001 of the random phase (it stops at the first request past 100000) and 374 of the directed corners
  // after it: 10 inits of 1 cycle, 20 requests of 2, the 10 alpha decays that the CNP 101 cycles after its init
  // (10-cycle alpha period) finds due, the 300 alpha decays and 1 rate increase (3000-cycle period) that an
  // advance 3000 cycles after a cut finds due, 4 idle clocks, 2 reset pulses of 2 clocks each, and a reset
  // during a request of 5 (the accepting edge, 2 busy clocks, rst_ni low, an idle clock).
  EXPECT_NE(r.output.find("rtl cycles             100375"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("transactions           32326"), std::string::npos) << r.output;  // 32289 + 37
  EXPECT_NE(r.output.find("26 of 26 bins hit"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("NOT HIT"), std::string::npos) << r.output;
  for (const char* bin : {"hyper_increase", "cnp_as_timer_expires", "rate_at_floor", "recovered_to_line_rate"})
    EXPECT_NE(r.output.find(std::string("  ") + bin + " "), std::string::npos) << bin << "\n" << r.output;
}

TEST(cli, verify_rtl_dcqcn_rp_preset_and_waveform) {
  const std::string wave = testing::TempDir() + "dcqcn_rp.fst";
  std::remove(wave.c_str());
  const run_result r = fabricsim("verify-rtl --block dcqcn_rp --preset paper --cycles 20000 --seed 5 --wave " + wave);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("preset paper seed 5"), std::string::npos) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written";
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
}

TEST(cli, verify_rtl_rejects_unknown_preset) {
  run_result r = fabricsim("verify-rtl --block dcqcn_rp --preset lab");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("paper, nvidia"), std::string::npos) << r.output;
  r = fabricsim("verify-rtl --block reorder_tracker --preset paper");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(cli, verify_rtl_help_has_a_working_example) {
  const run_result r = fabricsim("verify-rtl --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string marker = "Example: fabricsim ";
  const size_t at = r.output.find(marker);
  ASSERT_NE(at, std::string::npos) << r.output;
  std::string example = r.output.substr(at + marker.size(), r.output.find('\n', at) - at - marker.size());
  const std::string wave = testing::TempDir() + "help_example.fst";
  const size_t w = example.find("rt.fst");
  ASSERT_NE(w, std::string::npos) << example;
  example.replace(w, 6, wave);  // keep the example's output out of the working directory
  const run_result e = fabricsim(example);
  EXPECT_EQ(e.exit_code, 0) << example << "\n" << e.output;
}

TEST(cli, verify_rtl_cnp_gen_matches_and_hits_every_coverage_bin) {
  const run_result r = fabricsim("verify-rtl --block cnp_gen");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("RTL matches the reference model on every cycle"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("transactions checked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("transactions per second"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("NOT HIT"), std::string::npos) << r.output;
  for (const char* bin : {"first_cnp_of_flow", "suppressed_within_interval", "emitted_at_boundary",
                          "time_wrap_crossed", "flow_aliasing", "per_port_suppression", "back_pressure_stall"}) {
    const size_t at = r.output.find(std::string("  ") + bin + " ");
    ASSERT_NE(at, std::string::npos) << bin << "\n" << r.output;
    const size_t digits = r.output.find_first_not_of(' ', at + 2 + std::string(bin).size());
    EXPECT_GT(std::stoull(r.output.substr(digits)), 0u) << bin << "\n" << r.output;
  }
}

// --mutant runs a planted bug: the bench reports a mismatch and exits 1; the same run on the real RTL passes.
TEST(cli, verify_rtl_mutant_is_caught_and_the_real_rtl_is_not) {
  // One built mutant of each block (rtl/mutants/<block>/<id>.patch: generated mutant ids).
  for (const auto& [args, id] : {std::pair<std::string, std::string>{"--block reorder_tracker --window 64", "16"},
                                 {"--block cnp_gen", "18"},
                                 {"--block dcqcn_rp", "66"}}) {
    const run_result m = fabricsim("verify-rtl " + args + " --mutant " + id);
    if (m.exit_code == 2 && m.output.find("configure with -DFABRICSIM_RTL_MUTANTS=ON") != std::string::npos)
      GTEST_SKIP() << "mutants not built";
    EXPECT_EQ(m.exit_code, 1) << args << "\n" << m.output;
    EXPECT_NE(m.output.find("MISMATCH"), std::string::npos) << args << "\n" << m.output;
    EXPECT_NE(m.output.find("MUTANT " + id + " "), std::string::npos) << args << "\n" << m.output;
    const run_result real = fabricsim("verify-rtl " + args);
    EXPECT_EQ(real.exit_code, 0) << args << "\n" << real.output;
  }
}

TEST(cli, verify_rtl_rejects_a_mutant_that_is_not_built) {
  run_result r = fabricsim("verify-rtl --block reorder_tracker --window 64 --mutant 99");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("mutant 99 is not built"), std::string::npos) << r.output;
  r = fabricsim("verify-rtl --block reorder_tracker --window 256 --mutant 16");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(cli, verify_rtl_cnp_gen_waveform_and_bad_flows) {
  const std::string wave = testing::TempDir() + "cnp_gen_f1024.fst";
  std::remove(wave.c_str());
  run_result r = fabricsim("verify-rtl --block cnp_gen --flows 1024 --cycles 3000 --seed 5 --wave " + wave);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream f(wave, std::ios::binary | std::ios::ate);
  ASSERT_TRUE(f) << wave << " not written";
  EXPECT_GT(static_cast<long long>(f.tellg()), 100) << wave;
  r = fabricsim("verify-rtl --block cnp_gen --flows 100");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("64, 1024"), std::string::npos) << r.output;
}

}  // namespace

namespace {

// Comparison runs: one forked run per value, one report with a run per value.
const std::string k_small = scenarios + "leaf_spine_small.yaml --set workload.message_bytes=65536";

TEST(cli, compare_runs_each_value_and_reports_them_side_by_side) {
  const std::string out = testing::TempDir() + "compare.json";
  const run_result r = fabricsim("run " + k_small + " --compare nic.path_entropy=fixed,per_packet --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* s : {"comparison of nic.path_entropy over 2 values", "eff.thru", "mean flow", "min flow", "drops",
                        "ECN marked", "PFC pauses", "max queue", "completed", "packet-hops/s", "\nfixed ",
                        "\nper_packet ", "16/16"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  const json j = load(out);
  EXPECT_EQ(j["compare"], "nic.path_entropy");
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][0]["value"], "fixed");
  EXPECT_EQ(j["runs"][1]["value"], "per_packet");
  for (const auto& run : j["runs"]) {
    EXPECT_TRUE(run["report"]["verified"].get<bool>());
    EXPECT_GT(run["report"]["fabric"]["effective_throughput"].get<double>(), 0.0);
  }
  // Spraying spreads the permutation over the spines: the two runs differ.
  EXPECT_NE(j["runs"][0]["report"]["flows"], j["runs"][1]["report"]["flows"]);

  // Each run is exactly the single run with that value set.
  const std::string single = testing::TempDir() + "compare_single.json";
  ASSERT_EQ(fabricsim("run " + k_small + " --set nic.path_entropy=per_packet --quiet --json " + single).exit_code, 0);
  EXPECT_EQ(strip_wall_clock(load(single)).dump(), strip_wall_clock(j["runs"][1]["report"]).dump());
}

TEST(cli, compare_section_in_the_file_and_the_option_replacing_it) {
  const std::string path = temp_file("compare.yaml", R"(name: cmp
topology: {kind: single_switch, hosts: 2}
nic: {place_data: false}
writes: [{src: h0, dst: h1, bytes: 65536}]
compare: {key: topology.link_gbps, values: [100, 400]}
)");
  const std::string out = testing::TempDir() + "compare_file.json";
  run_result r = fabricsim("run " + path + " --quiet --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = load(out);
  EXPECT_EQ(j["compare"], "topology.link_gbps");
  ASSERT_EQ(j["runs"].size(), 2u);
  // A quarter of the line rate: the same bytes take longer.
  EXPECT_GT(j["runs"][0]["report"]["flows"][0]["fct_ns"].get<double>(),
            2 * j["runs"][1]["report"]["flows"][0]["fct_ns"].get<double>());
  r = fabricsim("run " + path + " --quiet --compare nic.mtu_bytes=1024,2048,4096 --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = load(out);
  EXPECT_EQ(j["compare"], "nic.mtu_bytes");
  EXPECT_EQ(j["runs"].size(), 3u);
}

// Issue 20, item 5: a --set of the file's compare key runs that value alone (it used to run every value of
// the section regardless), --no-compare runs the file's own values, and under MPI the error's advice works.
TEST(cli, set_of_the_compare_key_runs_that_value_alone_and_no_compare_the_base) {
  const std::string body = R"(name: cmp
topology: {kind: single_switch, hosts: 2}
nic: {place_data: false}
writes: [{src: h0, dst: h1, bytes: 65536}]
)";
  const std::string with =
      temp_file("compare_set.yaml", body + "compare: {key: topology.link_gbps, values: [100, 400]}\n");
  const std::string without = temp_file("compare_none.yaml", body);
  const std::string out = testing::TempDir() + "compare_set.json", ref = testing::TempDir() + "compare_ref.json";
  // One run at 100G: the report of a single run (no "compare"), equal to the same file without the section.
  run_result r = fabricsim("run " + with + " --quiet --set topology.link_gbps=100 --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(fabricsim("run " + without + " --quiet --set topology.link_gbps=100 --json " + ref).exit_code, 0);
  json j = load(out);
  EXPECT_FALSE(j.contains("compare")) << j.dump().substr(0, 300);
  json a = strip_wall_clock(j), b = strip_wall_clock(load(ref));
  a.erase("scenario_file"), b.erase("scenario_file");
  EXPECT_EQ(a.dump(), b.dump());
  // --no-compare: the file's own values, i.e. the file without its section.
  r = fabricsim("run " + with + " --quiet --no-compare --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(fabricsim("run " + without + " --quiet --json " + ref).exit_code, 0);
  a = strip_wall_clock(load(out)), b = strip_wall_clock(load(ref));
  EXPECT_FALSE(a.contains("compare"));
  a.erase("scenario_file"), b.erase("scenario_file");
  EXPECT_EQ(a.dump(), b.dump());
  r = fabricsim("run " + with + " --no-compare --compare nic.mtu_bytes=1024,2048");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("and --no-compare contradict each other"), std::string::npos) << r.output;

  // The shipped incast_dcqcn.yaml (compare: nic.cc = none, dcqcn, hpcc), shrunk: --set nic.cc=none is one run,
  // the very run the comparison makes for that value.
  const std::string small = scenarios +
                            "incast_dcqcn.yaml --quiet --set workload.message_bytes=65536 "
                            "--set workload.incast_senders=2 --set run.warmup_us=0 --set run.duration_us=20";
  r = fabricsim("run " + small + " --set nic.cc=none --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(fabricsim("run " + small + " --compare nic.cc=none,dcqcn --json " + ref).exit_code, 0);
  j = load(out);
  EXPECT_FALSE(j.contains("compare"));
  EXPECT_EQ(strip_wall_clock(j).dump(), strip_wall_clock(load(ref)["runs"][0]["report"]).dump());

  // Under MPI a comparison is refused; the --set the error advises runs under MPI.
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) return;
  r = fabricsim("run " + with + " --quiet --ranks 2");
  EXPECT_NE(r.exit_code, 0);
  const std::string advice = "run one value per mpirun instead, e.g. ";
  const size_t at = r.output.find(advice);
  ASSERT_NE(at, std::string::npos) << r.output;
  std::string set = r.output.substr(at + advice.size());
  set = set.substr(0, set.find(' ', set.find(' ') + 1));  // "--set KEY=V"
  EXPECT_EQ(set, "--set topology.link_gbps=100");
  r = fabricsim("run " + with + " --quiet --ranks 2 " + set + " --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(load(out).contains("compare"));
  EXPECT_EQ(load(out)["completed"], 1);
  r = fabricsim("run " + with + " --quiet --ranks 2 --no-compare --json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(load(out)["completed"], 1);
}

TEST(cli, compare_value_invalid_for_its_key_fails_before_any_run) {
  // Rejected by the loader.
  run_result r = fabricsim("run " + k_small + " --compare nic.path_entropy=fixed,bogus");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--compare nic.path_entropy=bogus: \"bogus\" is not one of: fixed, per_packet"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("comparison of"), std::string::npos) << r.output;
  // Rejected by a block at elaboration: still before the first value runs.
  r = fabricsim("run " + k_small + " --compare nic.mtu_bytes=4096,1000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--compare nic.mtu_bytes=1000: h0_nic: nic.mtu_bytes 1000 is not one of"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("comparison of"), std::string::npos) << r.output;
  // A key that does not exist fails for its first value.
  r = fabricsim("run " + k_small + " --compare switch.routing_mode=ecmp,adaptive");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--compare switch.routing_mode=ecmp: "), std::string::npos) << r.output;
  // The file's section names the file.
  const std::string path = temp_file("compare_bad.yaml", "writes: [{src: h0, dst: h1, bytes: 64}]\n"
                                                         "compare: {key: nic.reorder, values: [rtl, fast]}\n");
  r = fabricsim("run " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("compare_bad.yaml: compare nic.reorder=fast: \"fast\" is not one of: rtl, ref, lockstep"),
            std::string::npos)
      << r.output;
}

TEST(cli, compare_option_must_be_key_equals_values) {
  for (const char* bad : {"nic.mtu_bytes", "=1,2", "nic.mtu_bytes=1024,", "nic.mtu_bytes=,1024"}) {
    const run_result r = fabricsim("run " + k_small + " --compare " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find(std::string("--compare ") + bad + ": "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("expected KEY=V1,V2,..."), std::string::npos) << r.output;
  }
}

TEST(cli, compare_status_names_the_value_that_did_not_verify) {
  // A 2:1 incast, lossy in a 256 KiB buffer, drops; with retries it recovers, with none its queue pairs
  // fail. The comparison completes, reports both, and exits 1 naming the value that did not verify.
  const std::string path = temp_file("compare_drops.yaml", "topology: {kind: single_switch, hosts: 3}\n"
                                                           "switch: {buffer_bytes: 262144, lossless_priorities: \"\"}\n"
                                                           "writes:\n"
                                                           "  - {src: h1, dst: h0, bytes: 1048576}\n"
                                                           "  - {src: h2, dst: h0, bytes: 1048576}\n");
  const run_result r = fabricsim("run " + path + " --compare nic.retry_count=7,0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nic.retry_count=0: data placement NOT verified"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("nic.retry_count=7: data"), std::string::npos) << r.output;
}

// --tap: a capture per option, listed in the report with the link's frame count; a comparison writes one
// file per value; bad taps exit 2 naming the option value.
TEST(cli, tap_writes_captures_and_rejects_bad_taps) {
  const std::string scenario = temp_file("tap.yaml", R"(run: {duration_us: 5}
topology: {kind: single_switch, hosts: 3, link_gbps: 400}
nic: {place_data: false}
writes:
  - {src: h1, dst: h0, bytes: 1048576}
)");
  const std::string dir = testing::TempDir(), out = dir + "tap.json";
  const std::string up = dir + "cli_tap_up.pcap", down = dir + "cli_tap_down.pcap";
  run_result r = fabricsim("run " + scenario + " --quiet --json " + out + " --tap h1:0=" + up + " --tap sw0_to_h0=" + down);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = load(out);
  ASSERT_EQ(j["taps"].size(), 2u) << j.dump();
  EXPECT_EQ(j["taps"][0]["link"], "h1_to_sw0");
  EXPECT_EQ(j["taps"][1]["link"], "sw0_to_h0");
  for (const json& t : j["taps"]) {
    EXPECT_GT(t["frames"].get<uint64_t>(), 0u);
    for (const json& p : j["ports"])
      if (p["link"] == t["link"]) {
        EXPECT_EQ(p["packets"], t["frames"]) << t.dump();
      }
  }
  std::remove(up.c_str());
  std::remove(down.c_str());

  r = fabricsim("run " + scenario + " --quiet --compare nic.mtu_bytes=1024,4096 --tap h1:0=" + up);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* v : {"1024", "4096"}) {
    const std::string file = dir + "cli_tap_up." + v + ".pcap";
    EXPECT_TRUE(std::ifstream(file).good()) << file;
    std::remove(file.c_str());
  }

  for (const auto& [tap, message] : std::vector<std::pair<std::string, std::string>>{
           {"sw1:0=" + up, "--tap sw1:0=" + up + ": no node named 'sw1' (hosts h0 .. h2, switch sw0)"},
           {"sw0:3=" + up, "--tap sw0:3=" + up + ": switch sw0 has ports 0 .. 2; port 3 does not exist"},
           {"h0:0=/nonexistent/x.pcap", "--tap h0:0=/nonexistent/x.pcap: /nonexistent/x.pcap: cannot create"},
           {"h0_to_h1=" + up, "--tap h0_to_h1=" + up + ": no link named 'h0_to_h1'"}}) {
    r = fabricsim("run " + scenario + " --quiet --tap " + tap);
    EXPECT_EQ(r.exit_code, 2) << tap << ": " << r.output;
    EXPECT_NE(r.output.find("fabricsim: error: " + message), std::string::npos) << r.output;
  }
}

}  // namespace
