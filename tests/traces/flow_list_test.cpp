// Tests of the CSV flow-list parser: the shared 256-host permutation, tolerated layout, and every kind of
// bad row with the file, line and column named.
#include "traces/flow_list.h"
#include "tests/support/error_of.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace fabricsim::traces {
namespace flow_list_test {

namespace fs = std::filesystem;
using core::config_error;

std::vector<flow_entry> parse(const std::string& text, size_t hosts = 4) {
  return parse_flow_list(text, "f.csv", hosts);
}

using test::error_of;

std::string parse_error(const std::string& text, size_t hosts = 4) {
  return error_of([&] { parse(text, hosts); });
}

TEST(flow_list, parses_rows_in_order) {
  const auto flows = parse("src,dst,bytes,start_ns\n0,1,4096,0\n3,2,100,12.5\n");
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0].src, 0u);
  EXPECT_EQ(flows[0].dst, 1u);
  EXPECT_EQ(flows[0].bytes, 4096u);
  EXPECT_DOUBLE_EQ(flows[0].start_ns, 0.0);
  EXPECT_EQ(flows[1].src, 3u);
  EXPECT_EQ(flows[1].dst, 2u);
  EXPECT_EQ(flows[1].bytes, 100u);
  EXPECT_DOUBLE_EQ(flows[1].start_ns, 12.5);
}

TEST(flow_list, tolerates_blank_lines_spaces_and_crlf) {
  const auto flows = parse("\n  \nsrc, dst, bytes, start_ns\r\n\r\n 0 , 1 ,64, 1e3\r\n\n2,3,8,0");
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_DOUBLE_EQ(flows[0].start_ns, 1000.0);
  EXPECT_EQ(flows[1].src, 2u);
  EXPECT_EQ(flows[1].bytes, 8u);
}

TEST(flow_list, header_only_is_an_empty_list) { EXPECT_TRUE(parse("src,dst,bytes,start_ns\n").empty()); }

TEST(flow_list, header_is_required) {
  EXPECT_EQ(parse_error(""), "f.csv:1: header: expected \"src,dst,bytes,start_ns\" as the first line, the file is "
                             "empty");
  EXPECT_EQ(parse_error("\n\n"), "f.csv:1: header: expected \"src,dst,bytes,start_ns\" as the first line, the file "
                                 "is empty");
  EXPECT_EQ(parse_error("\n0,1,64,0\n"),
            "f.csv:2: header: expected \"src,dst,bytes,start_ns\" (or \"src,dst,bytes,start_ns,op\") as the first line, got \"0,1,64,0\"");
  EXPECT_EQ(parse_error("src,dst,size,start_ns\n"),
            "f.csv:1: header: expected \"src,dst,bytes,start_ns\" (or \"src,dst,bytes,start_ns,op\") as the first line, got \"src,dst,size,start_ns\"");
  EXPECT_EQ(parse_error("src,dst,bytes\n"),
            "f.csv:1: header: expected \"src,dst,bytes,start_ns\" (or \"src,dst,bytes,start_ns,op\") as the first line, got \"src,dst,bytes\"");
}

TEST(flow_list, optional_op_column) {
  const auto flows = parse("src,dst,bytes,start_ns,op\n0,1,64,0,read\n1,0,8,0, send \n2,3,1,0,write_imm\n3,2,1,0,write\n");
  ASSERT_EQ(flows.size(), 4u);
  EXPECT_EQ(flows[0].op, "read");
  EXPECT_EQ(flows[1].op, "send");
  EXPECT_EQ(flows[2].op, "write_imm");
  EXPECT_EQ(flows[3].op, "write");
  EXPECT_EQ(parse("src,dst,bytes,start_ns\n0,1,64,0\n")[0].op, "write");  // without the column: WRITEs
  EXPECT_EQ(parse_error("src,dst,bytes,start_ns,op\n0,1,64,0,atomic\n"),
            "f.csv:2: op: unknown operation \"atomic\" (expected write, write_imm, read, send or send_imm)");
  EXPECT_EQ(parse_error("src,dst,bytes,start_ns,op\n0,1,64,0\n"),
            "f.csv:2: op: missing (expected 5 columns src,dst,bytes,start_ns,op, got 4)");
  EXPECT_EQ(parse_error("src,dst,bytes,start_ns,op\n0,1,64,0,\n"),
            "f.csv:2: op: unknown operation \"\" (expected write, write_imm, read, send or send_imm)");
}

TEST(flow_list, missing_and_extra_columns) {
  const std::string h = "src,dst,bytes,start_ns\n";
  EXPECT_EQ(parse_error(h + "0,1,64\n"),
            "f.csv:2: start_ns: missing (expected 4 columns src,dst,bytes,start_ns, got 3)");
  EXPECT_EQ(parse_error(h + "0,1,64,0\n0\n"),
            "f.csv:3: dst: missing (expected 4 columns src,dst,bytes,start_ns, got 1)");
  EXPECT_EQ(parse_error(h + "0,1,64,0,7\n"),
            "f.csv:2: column 5: unexpected extra column (expected 4 columns src,dst,bytes,start_ns, got 5)");
  EXPECT_EQ(parse_error(h + "0,1,,0\n"), "f.csv:2: bytes: expected a non-negative integer, got an empty field");
  EXPECT_EQ(parse_error(h + "0,1,64,\n"), "f.csv:2: start_ns: expected a number of ns, got an empty field");
}

TEST(flow_list, non_numbers) {
  const std::string h = "src,dst,bytes,start_ns\n";
  EXPECT_EQ(parse_error(h + "h0,1,64,0\n"), "f.csv:2: src: expected a non-negative integer, got \"h0\"");
  EXPECT_EQ(parse_error(h + "0,one,64,0\n"), "f.csv:2: dst: expected a non-negative integer, got \"one\"");
  EXPECT_EQ(parse_error(h + "0,1,64k,0\n"), "f.csv:2: bytes: expected a non-negative integer, got \"64k\"");
  EXPECT_EQ(parse_error(h + "0,1,64,soon\n"), "f.csv:2: start_ns: expected a number of ns, got \"soon\"");
  EXPECT_EQ(parse_error(h + "0,1,64,nan\n"), "f.csv:2: start_ns: expected a number of ns, got \"nan\"");
  EXPECT_EQ(parse_error(h + "0,1,6.5,0\n"),
            "f.csv:2: bytes: expected a non-negative integer, got \"6.5\" (not a whole number)");
  EXPECT_EQ(parse_error(h + "0,1,1e3,0\n"),
            "f.csv:2: bytes: expected a non-negative integer, got \"1e3\" (write integers in plain decimal)");
  EXPECT_EQ(parse_error(h + "0,1,99999999999999999999,0\n"), "f.csv:2: bytes: 99999999999999999999 does not fit in "
                                                             "64 bits");
}

TEST(flow_list, negative_values) {
  const std::string h = "src,dst,bytes,start_ns\n";
  EXPECT_EQ(parse_error(h + "-1,1,64,0\n"), "f.csv:2: src: expected a non-negative integer, got \"-1\" (negative)");
  EXPECT_EQ(parse_error(h + "0,1,-64,0\n"),
            "f.csv:2: bytes: expected a non-negative integer, got \"-64\" (negative)");
  EXPECT_EQ(parse_error(h + "0,1,64,-5\n"), "f.csv:2: start_ns: -5 is negative (expected a start time >= 0 ns)");
}

TEST(flow_list, hosts_out_of_range_and_self_flows) {
  const std::string h = "src,dst,bytes,start_ns\n";
  EXPECT_EQ(parse_error(h + "4,1,64,0\n"), "f.csv:2: src: host 4 is out of range (hosts are 0 .. 3)");
  EXPECT_EQ(parse_error(h + "0,1,64,0\n1,17,64,0\n"), "f.csv:3: dst: host 17 is out of range (hosts are 0 .. 3)");
  EXPECT_EQ(parse_error(h + "2,2,64,0\n"),
            "f.csv:2: dst: host 2 is also the src (a flow joins two different hosts)");
}

TEST(flow_list, sizes_and_times_out_of_range) {
  const std::string h = "src,dst,bytes,start_ns\n";
  EXPECT_EQ(parse_error(h + "0,1,0,0\n"), "f.csv:2: bytes: 0 (expected at least 1 byte)");
  EXPECT_EQ(parse_error(h + "0,1,1099511627777,0\n"),
            "f.csv:2: bytes: 1099511627777 is out of range [1, 1099511627776]");
  EXPECT_EQ(parse_error(h + "0,1,64,2e12\n"), "f.csv:2: start_ns: 2e12 is out of range [0, 1e12] ns");
}

TEST(flow_list, missing_file_is_named) {
  EXPECT_EQ(error_of([] { load_flow_list("/nonexistent/flows.csv", 4); }),
            "/nonexistent/flows.csv: cannot open the flow list (No such file or directory)");
}

TEST(flow_list, reads_a_file) {
  const fs::path p = fs::temp_directory_path() / ("fabricsim_flow_list_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(p) << "src,dst,bytes,start_ns\n1,0,10,5\n";
  const auto flows = load_flow_list(p.string(), 2);
  fs::remove(p);
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].src, 1u);
  EXPECT_EQ(flows[0].bytes, 10u);
  EXPECT_DOUBLE_EQ(flows[0].start_ns, 5.0);
}

// The 256-host peer permutation the shipped peer_leaf_spine_16x16 scenario runs (a copy, in the repository, of
// the list htsim and ns-3 were measured on): every host sends once and receives once.
TEST(flow_list, peer_permutation) {
  const fs::path p = fs::path(FABRICSIM_SOURCE_DIR) / "testbench" / "scenarios" / "data" / "peer_permutation_256.csv";
  ASSERT_TRUE(fs::exists(p)) << p;
  const auto flows = load_flow_list(p.string(), 256);
  ASSERT_EQ(flows.size(), 256u);
  std::set<size_t> srcs, dsts;
  for (const auto& f : flows) {
    srcs.insert(f.src);
    dsts.insert(f.dst);
    EXPECT_NE(f.src, f.dst);
    EXPECT_EQ(f.bytes, 16000000u);
  }
  EXPECT_EQ(srcs.size(), 256u);
  EXPECT_EQ(dsts.size(), 256u);
  EXPECT_EQ(error_of([&] { load_flow_list(p.string(), 200); }).find(p.string() + ":"), 0u);
}

}  // namespace flow_list_test
}  // namespace fabricsim::traces
