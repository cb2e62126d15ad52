// "Verified" means bytes were checked, through the binary as a user runs it: a payload planted K bytes off
// by a NIC's DMA (faults kind misplace) is caught by the placement scoreboard alone (each payload checked as
// it lands), not by this test's own comparison, in generated and in dense memory; the same run without the
// fault is verified with every byte written checked; an operation cut off by the run's end has what landed
// of it checked; a run in which nothing landed says so, exits 4 and reports 0 checked bytes; comparisons and
// sweeps rank the statuses; bad misplace entries are refused naming file, line and key. Expected values by
// hand arithmetic.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_cli.h"

namespace verdict_test {

using fabricsim::test::fabricsim;
using fabricsim::test::run_result;
using nlohmann::json;

std::string write_file(const std::string& name, const std::string& content) {
  std::string path = testing::TempDir() + name;
  std::ofstream(path) << content;
  return path;
}

json load(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

// Two hosts on one switch, MTU 4096: one 64 KiB WRITE h0 -> h1 is 16 packets of exactly 4096 payload bytes.
const std::string two_hosts =
    "name: verdict\n"
    "topology: {kind: single_switch, hosts: 2}\n"
    "nic: {mtu_bytes: 4096}\n"
    "writes: [{src: h0, dst: h1, bytes: 65536}]\n";

struct outcome {
  run_result run;
  json report;
};

outcome run_yaml(const std::string& name, const std::string& yaml, const std::string& extra = "") {
  const std::string file = write_file(name + ".yaml", yaml), out = testing::TempDir() + name + ".json";
  std::remove(out.c_str());
  outcome o{fabricsim("run " + file + " --json " + out + " " + extra), json()};
  std::ifstream in(out);
  if (in) o.report = json::parse(in);
  return o;
}

TEST(verdict, the_run_without_the_fault_checks_every_byte_it_wrote) {
  const outcome o = run_yaml("clean", two_hosts);
  ASSERT_EQ(o.run.exit_code, 0) << o.run.output;
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_TRUE(o.report["verified"].get<bool>());
  EXPECT_EQ(o.report["checked_bytes"].get<uint64_t>(), 65536u);  // the one WRITE, whole
  EXPECT_EQ(o.report["placed_bytes"].get<uint64_t>(), 65536u);   // no loss: each payload placed once
  EXPECT_EQ(o.report["mismatched_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(o.report["flows"][0]["checked_bytes"].get<uint64_t>(), 65536u);
  EXPECT_NE(o.run.output.find("data: VERIFIED: 65,536 of 65,536 placed bytes checked byte for byte"), std::string::npos)
      << o.run.output;
}

class misplaced : public ::testing::TestWithParam<const char*> {};

TEST_P(misplaced, a_misplaced_payload_is_caught_by_the_byte_check) {
  // h1's NIC writes the payload of its 6th packet (after 5 correct ones) 100 bytes past its place. That
  // packet is a MIDDLE of the WRITE, 4096 payload bytes at offset a = 5 x 4096 of the buffer. It lands on
  // [a + 100, a + 4196): every byte compared there with the source byte of that offset, a byte of one
  // pattern word against a byte of another (100 is not a multiple of 8), equal about once in 256: far more
  // than half of the 4096 differ, and no more than 4096 can. Packet 7 then lands on [a + 4096, a + 8192):
  // its first 100 bytes land a second time (duplicates, not counted again), and [a, a + 100) never lands,
  // so 65,536 - 100 bytes are checked. In dense memory the buffer is read back too: [a, a + 100) holds the
  // zeros of the fresh buffer and [a + 100, a + 4096) the shifted payload (packet 7 rewrote the rest), so at
  // most 4096 differ there as well, and the larger count is reported.
  const outcome o = run_yaml(std::string("misplaced_") + GetParam(),
                             two_hosts + "faults: [{kind: misplace, host: h1, after_packets: 5, offset_bytes: 100}]\n",
                             std::string("--set workload.memory=") + GetParam());
  EXPECT_EQ(o.run.exit_code, 1) << o.run.output;
  EXPECT_EQ(o.report["memory"], GetParam());
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_FALSE(o.report["verified"].get<bool>());
  // The NIC did not notice: the WRITE completed with status success, and only the comparison tells.
  EXPECT_TRUE(o.report["flows"][0]["completed"].get<bool>());
  EXPECT_EQ(o.report["flows"][0]["status"], "success");
  const uint64_t wrong = o.report["mismatched_bytes"].get<uint64_t>();
  EXPECT_GT(wrong, 4096u / 2);
  EXPECT_LE(wrong, 4096u);
  EXPECT_EQ(o.report["flows"][0]["mismatched_bytes"].get<uint64_t>(), wrong);
  EXPECT_EQ(o.report["checked_bytes"].get<uint64_t>(), 65536u - 100u);
  EXPECT_EQ(o.report["duplicate_bytes"].get<uint64_t>(), 100u);
  const json& entry = o.report["faults"]["entries"][0];
  EXPECT_EQ(entry["kind"], "misplace");
  EXPECT_TRUE(entry["fired"].get<bool>());
  EXPECT_EQ(entry["payload_bytes"].get<uint64_t>(), 4096u);
  EXPECT_EQ(entry["applied_offset_bytes"].get<uint64_t>(), 100u);
  EXPECT_NE(o.run.output.find("data: NOT VERIFIED: "), std::string::npos) << o.run.output;
  EXPECT_NE(o.run.output.find(" of 65,436 checked bytes differ from their source"), std::string::npos) << o.run.output;
}

INSTANTIATE_TEST_SUITE_P(memory, misplaced, ::testing::Values("generated", "dense"));

TEST_P(misplaced, every_kind_of_operation_is_checked_where_it_lands_despite_loss) {
  // A WRITE, a WRITE with immediate, a READ (lands at h0, the requester), a SEND and a one-packet SEND
  // with immediate, at odd sizes, over a link that loses 2 % of frames: every byte of each is checked once,
  // at its own destination (100003 + 50001 + 70007 + 30011 + 9 = 250031), and resends land nothing twice
  // (the NICs drop a duplicate PSN before placement).
  const outcome o = run_yaml(std::string("every_op_") + GetParam(),
                             "topology: {kind: single_switch, hosts: 2}\nlink: {drop_probability: 0.02}\n"
                             "nic: {mtu_bytes: 1024}\nwrites:\n"
                             "  - {src: h0, dst: h1, bytes: 100003, op: write}\n"
                             "  - {src: h0, dst: h1, bytes: 50001, op: write_imm}\n"
                             "  - {src: h0, dst: h1, bytes: 70007, op: read}\n"
                             "  - {src: h1, dst: h0, bytes: 30011, op: send}\n"
                             "  - {src: h1, dst: h0, bytes: 9, op: send_imm}\n",
                             std::string("--set workload.memory=") + GetParam());
  EXPECT_EQ(o.run.exit_code, 0) << o.run.output;
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_GT(o.report["fabric"]["retransmissions"].get<uint64_t>(), 0u);  // loss happened and was recovered
  EXPECT_EQ(o.report["checked_bytes"].get<uint64_t>(), 250031u);
  EXPECT_EQ(o.report["duplicate_bytes"].get<uint64_t>(), 0u);
  const uint64_t sizes[] = {100003, 50001, 70007, 30011, 9};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(o.report["flows"][i]["checked_bytes"].get<uint64_t>(), sizes[i]) << i;
    EXPECT_TRUE(o.report["flows"][i]["verified"].get<bool>()) << i;
  }
}

TEST(verdict, a_fault_that_never_fires_changes_nothing) {
  // 16 payloads in all: the 17th (after_packets 16) never comes.
  const outcome o =
      run_yaml("unfired", two_hosts + "faults: [{kind: misplace, host: h1, after_packets: 16, offset_bytes: 100}]\n");
  EXPECT_EQ(o.run.exit_code, 0) << o.run.output;
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_TRUE(o.report["verified"].get<bool>());
  EXPECT_FALSE(o.report["faults"]["entries"][0]["fired"].get<bool>());
}

// One 4 MiB WRITE needs at least 4194304 x 8 / 400 Gb/s = 83.9 us of wire time; a 2 us run completes it not.
const std::string long_write =
    "name: short_run\n"
    "topology: {kind: single_switch, hosts: 2}\n"
    "run: {duration_us: 2}\n"
    "writes: [{src: h0, dst: h1, bytes: 4194304}]\n";

TEST(verdict, an_operation_cut_off_has_what_landed_of_it_checked) {
  const outcome o = run_yaml("cut_off", long_write);
  EXPECT_EQ(o.run.exit_code, 0) << o.run.output;
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_EQ(o.report["completed"].get<uint64_t>(), 0u);
  // Some payload did arrive in 2 us (a 4096-byte packet takes 82 ns at 400 Gb/s), not all of it; with no
  // loss each payload lands once, so every placed byte is a distinct checked one.
  const uint64_t placed = o.report["placed_bytes"].get<uint64_t>();
  EXPECT_GT(placed, 0u);
  EXPECT_LT(placed, 4194304u);
  EXPECT_EQ(o.report["checked_bytes"].get<uint64_t>(), placed);
  EXPECT_EQ(o.report["flows"][0]["checked_bytes"].get<uint64_t>(), placed);
  EXPECT_FALSE(o.report["flows"][0]["verified"].get<bool>());  // not complete: not verified as an operation
  EXPECT_TRUE(o.report["verified"].get<bool>());               // but nothing that landed was wrong
  std::string digits = std::to_string(placed), grouped;        // 1234567 -> 1,234,567
  for (size_t i = 0; i < digits.size(); ++i)
    grouped += (i > 0 && (digits.size() - i) % 3 == 0 ? "," : "") + digits.substr(i, 1);
  EXPECT_NE(o.run.output.find("data: VERIFIED: " + grouped + " of " + grouped + " placed bytes"), std::string::npos)
      << o.run.output;
}

TEST(verdict, a_run_in_which_nothing_landed_says_nothing_was_checked_and_exits_4) {
  // 0.05 us: the first packet is still being serialised (82 ns at 400 Gb/s) when the run stops.
  const outcome o = run_yaml("nothing", long_write, "--set run.duration_us=0.05");
  EXPECT_EQ(o.run.exit_code, 4) << o.run.output;
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_EQ(o.report["completed"].get<uint64_t>(), 0u);
  EXPECT_EQ(o.report["checked_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(o.report["placed_bytes"].get<uint64_t>(), 0u);
  EXPECT_FALSE(o.report["verified"].get<bool>());
  EXPECT_TRUE(o.report["data_checked"].get<bool>());  // checking was on; there was nothing to check
  EXPECT_NE(o.run.output.find("data: NOTHING CHECKED: no payload landed within run.duration_us=0.05; "),
            std::string::npos)
      << o.run.output;
  EXPECT_NE(o.run.output.find(" bytes placed, 0 checked"), std::string::npos) << o.run.output;
  EXPECT_EQ(o.run.output.find("VERIFIED"), std::string::npos) << o.run.output;
}

TEST(verdict, a_time_limited_run_checks_what_landed) {
  // A 64 KiB WRITE (1.3 us of wire time) finishes within 10 us, the 4 MiB one does not: all of the first and
  // what landed of the second are checked, no byte twice (no loss).
  const outcome o = run_yaml("partial",
                             "topology: {kind: single_switch, hosts: 2}\nrun: {duration_us: 10}\n"
                             "writes: [{src: h0, dst: h1, bytes: 65536}, {src: h1, dst: h0, bytes: 4194304}]\n");
  EXPECT_EQ(o.run.exit_code, 0) << o.run.output;
  ASSERT_TRUE(o.report.is_object()) << o.run.output;
  EXPECT_EQ(o.report["completed"].get<uint64_t>(), 1u);
  EXPECT_TRUE(o.report["verified"].get<bool>());
  EXPECT_EQ(o.report["flows"][0]["checked_bytes"].get<uint64_t>(), 65536u);
  EXPECT_GT(o.report["placed_bytes"].get<uint64_t>(), 65536u);  // and part of the long one
  EXPECT_EQ(o.report["checked_bytes"].get<uint64_t>(), o.report["placed_bytes"].get<uint64_t>());
  EXPECT_EQ(o.report["duplicate_bytes"].get<uint64_t>(), 0u);
}

TEST(verdict, comparisons_and_sweeps_rank_nothing_checked_below_a_mismatch) {
  const std::string file = write_file("short_run.yaml", long_write);
  // run.duration_us 0.05 checks nothing (4), 200 completes the 4 MiB WRITE and verifies it (0): the worst is 4.
  run_result r = fabricsim("run " + file + " --compare run.duration_us=0.05,200");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("data, 0.05: NOTHING CHECKED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("data, 200: VERIFIED: 4,194,304 of 4,194,304 placed bytes"), std::string::npos) << r.output;
  // A misplaced byte (1) outranks the run that checked nothing (4).
  const std::string faulty =
      write_file("short_run_faulty.yaml",
                 long_write + "faults: [{kind: misplace, host: h1, after_packets: 3, offset_bytes: 8}]\n");
  r = fabricsim("run " + faulty + " --compare run.duration_us=0.05,200");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // A sweep gives each point the status `run` would, and exits with the worst.
  const std::string dir = testing::TempDir() + "verdict_sweep";
  fabricsim::test::run_shell("rm -rf '" + dir + "'");
  r = fabricsim("sweep " + file + " --grid run.duration_us=0.05,200 --out " + dir);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  const json sweep = load(dir + "/sweep.json");
  ASSERT_EQ(sweep["rows"].size(), 2u) << sweep.dump();
  EXPECT_EQ(sweep["rows"][0]["status"].get<int>(), 4);
  EXPECT_EQ(sweep["rows"][0]["checked_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(sweep["rows"][1]["status"].get<int>(), 0);
  EXPECT_EQ(sweep["rows"][1]["checked_bytes"].get<uint64_t>(), 4194304u);
}

TEST(verdict, the_help_page_names_every_exit_status) {
  const run_result r = fabricsim("--help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* status : {"0 every checked byte equals its source", "1 a\nbyte differed", "2 the scenario",
                             "3 an internal error", "4 the run was to check bytes and compared\nnone"})
    EXPECT_NE(r.output.find(status), std::string::npos) << status << "\n" << r.output;
}

TEST(verdict, bad_misplace_entries_are_refused_naming_file_line_and_key) {
  struct bad {
    const char* entry;
    const char* key;
    const char* says;
  };
  for (const bad& b :
       {bad{"{kind: misplace, host: h7, offset_bytes: 8}", "faults.0.host", "no host 'h7'"},
        bad{"{kind: misplace, host: h1, after_packets: -3, offset_bytes: 8}", "faults.0.after_packets", "negative"},
        bad{"{kind: misplace, host: h1, offset_bytes: -8}", "faults.0.offset_bytes", "negative"},
        bad{"{kind: misplace, host: h1, offset_bytes: 0}", "faults.0.offset_bytes", "at least 1"},
        bad{"{kind: misplace, host: h1}", "faults.0", "missing required key offset_bytes"},
        bad{"{kind: misplace, host: h1, offset_bytes: 8, link: h0_to_sw0}", "faults.0.link",
            "does not apply to kind misplace"}}) {
    const std::string file = write_file("bad_misplace.yaml", two_hosts + "faults: [" + b.entry + "]\n");
    const run_result r = fabricsim("run " + file);
    EXPECT_EQ(r.exit_code, 2) << b.entry << "\n" << r.output;
    EXPECT_NE(r.output.find("bad_misplace.yaml:5: " + std::string(b.key)), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(b.says), std::string::npos) << r.output;
  }
}

}  // namespace verdict_test
