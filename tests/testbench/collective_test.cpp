// Tests of the collective engine (testbench/collective): nccl-tests' bus factors, the size sweep, the bad
// configurations, the bytes every rank sends for each op and algorithm (counted by hand here, read from the
// NICs' own counters), results checked against the reference, and ring allreduce's bus bandwidth on a
// non-blocking switch against the bound derived from the wire format. Each run forks (tests/support).
#include "testbench/collective.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sc_models/core/packet.h"
#include "testbench/scenario.h"
#include "tests/support/scenario_child.h"

namespace fabricsim::testbench {
namespace collective_test {

using nlohmann::json;

TEST(collective, bus_factors_are_nccl_tests_ones) {
  // doc/PERFORMANCE.md of nccl-tests: allreduce 2(n-1)/n, allgather and reducescatter (n-1)/n, broadcast 1;
  // alltoall (n-1)/n as alltoall.cu computes it. By hand for 8 ranks: 14/8, 7/8, 7/8, 7/8, 1; for 2 ranks:
  // 1, 1/2, 1/2, 1/2, 1.
  EXPECT_DOUBLE_EQ(bus_factor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor("allgather", 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor("reducescatter", 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor("alltoall", 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor("broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor("allreduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor("allgather", 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor("broadcast", 2), 1.0);
  EXPECT_EQ(dtype_bytes("float"), 4u);
  EXPECT_EQ(dtype_bytes("int32"), 4u);
  EXPECT_EQ(dtype_bytes("half"), 2u);
  EXPECT_EQ(dtype_bytes("bfloat16"), 2u);
}

TEST(collective, sizes_sweep_like_nccl_tests) {
  collective_params p;
  p.min_bytes = 1048576;
  p.max_bytes = 67108864;
  p.step_factor = 2;
  EXPECT_EQ(collective_sizes(p), (std::vector<uint64_t>{1048576, 2097152, 4194304, 8388608, 16777216, 33554432,
                                                        67108864}));
  p.min_bytes = 1000;
  p.max_bytes = 10000;
  p.step_factor = 3;  // 1000, 3000, 9000 (27000 is past the end)
  EXPECT_EQ(collective_sizes(p), (std::vector<uint64_t>{1000, 3000, 9000}));
  p.max_bytes = 1000;
  EXPECT_EQ(collective_sizes(p), (std::vector<uint64_t>{1000}));
}

std::string error_of(const std::string& yaml) {
  try {
    place_ranks(load_scenario_text(yaml, "c.yaml"));
  } catch (const core::config_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(collective, bad_configurations_name_the_key) {
  const std::string base = "topology: {kind: single_switch, hosts: 4}\nworkload: {kind: collective}\n";
  EXPECT_NE(error_of(base + "collective: {op: allsum}\n").find("collective.op"), std::string::npos);
  EXPECT_NE(error_of(base + "collective: {op: allsum}\n").find("allreduce, allgather"), std::string::npos);
  EXPECT_EQ(error_of(base + "collective: {min_bytes: 4096, max_bytes: 1024}\n"),
            "c.yaml: collective.min_bytes 4096 is above collective.max_bytes 1024");
  EXPECT_EQ(error_of(base + "collective: {ranks: 5}\n"), "c.yaml: collective.ranks 5 is more than the topology's 4 hosts");
  EXPECT_EQ(error_of(base + "collective: {ranks: 1}\n"),
            "c.yaml: collective.ranks: a collective needs at least 2 ranks, got 1");
  EXPECT_NE(error_of(base + "collective: {algo: sharp}\n").find("the fabric has no SHARP-capable switch"),
            std::string::npos);
  EXPECT_NE(error_of(base + "collective: {algo: tree, op: allgather}\n").find("collective.algo tree"), std::string::npos);
  EXPECT_NE(error_of(base + "collective: {op: broadcast, root: 4}\n").find("collective.root 4"), std::string::npos);
  // 4 ranks of 4-byte elements: allgather needs 16 bytes at least.
  EXPECT_NE(error_of(base + "collective: {op: allgather, min_bytes: 12, max_bytes: 64}\n").find("collective.min_bytes 12"),
            std::string::npos);
  EXPECT_NE(error_of(base + "collective: {step_factor: 1}\n").find("collective.step_factor"), std::string::npos);
  EXPECT_NE(error_of(base + "run: {sample_us: 5}\n").find("run.sample_us is not supported"), std::string::npos);
  EXPECT_NE(error_of(base + "run: {warmup_us: 5}\n").find("run.warmup_us is not supported"), std::string::npos);
  EXPECT_EQ(error_of(base), "no error");
}

TEST(collective, spread_placement_goes_round_robin_over_leaves) {
  // 3 leaves of 2 hosts: h0 h1 | h2 h3 | h4 h5. Spread: the first host of each leaf, then the second ones.
  const scenario s = load_scenario_text("topology: {kind: leaf_spine, leaves: 3, hosts_per_leaf: 2, spines: 2}\n"
                                        "workload: {kind: collective}\ncollective: {placement: spread, ranks: 5}\n",
                                        "c.yaml");
  EXPECT_EQ(place_ranks(s), (std::vector<size_t>{0, 2, 4, 1, 3}));
}

TEST(collective, a_comparison_prints_busbw_by_size_and_value) {
  auto report = [](double b1, const nlohmann::json& b2, bool verified) {
    return json{{"data_checked", true},
                {"verified", verified},
                {"collective",
                 {{"avg_busbw_gbps", b1},
                  {"rows", json::array({{{"size", 1024}, {"busbw_gbps", b1}}, {{"size", 2048}, {"busbw_gbps", b2}}})}}}};
  };
  const json c = {{"compare", "collective.algo"},
                  {"runs", json::array({{{"value", "ring"}, {"report", report(1.5, 2.25, true)}},
                                        {{"value", "tree"}, {"report", report(1.0, nullptr, false)}}})}};
  EXPECT_EQ(format_collective_compare(c),
            "busbw (GB/s) by size and collective.algo\n"
            "    size (B)         ring         tree\n"
            "        1024         1.50         1.00\n"
            "        2048         2.25            -\n"
            "         avg         1.50         1.00\n"
            "    verified          yes           NO\n");
}

json run(const std::string& yaml) { return test::run_scenario_yaml(yaml); }

uint64_t tx_payload(const json& r, size_t host) {
  return r["stats"]["h" + std::to_string(host) + "_nic"]["tx_payload_bytes"]["value"].get<uint64_t>();
}

// One size of S = 1 MiB over 4 ranks, one timed iteration and no warm-up, so each NIC's payload counter is
// one iteration's bytes. By hand (S/4 = 262144 per part):
//   ring allreduce: reduce-scatter 3 parts + all-gather 3 parts = 6 x 262144 = 1572864 per rank;
//   ring allgather, reducescatter, alltoall: 3 parts = 786432 per rank;
//   ring broadcast from rank 1: the chain 1 -> 2 -> 3 -> 0, so ranks 1, 2, 3 send S and rank 0 nothing;
//   binary_tree allreduce (positions = ranks, parent (i-1)/2: 1 and 2 under 0, 3 under 1): up 1->0, 2->0,
//   3->1, down 0->1, 0->2, 1->3: rank 0 sends 2S, rank 1 2S, ranks 2 and 3 S;
//   tree allreduce, NCCL's double binary tree, S/2 = H on each tree. Tree A (parent of r: lowest set bit
//   cleared and the next one set, or only cleared past the last rank): 1 -> 2, 3 -> 2, 2 -> 0, root 0.
//   Tree B, A mirrored (r -> 3-r): 2 -> 1, 0 -> 1, 1 -> 3, root 3. Up and down each tree:
//   A: rank 0 sends H (down to 2), 1 H, 2 3H (up, two down), 3 H; B: 0 H, 1 3H, 2 H, 3 H (down to 1).
//   Totals: S, 2S, 2S, S;
//   tree broadcast from rank 0: 0 sends to 1 and 2, 1 to 3: 2S, S, 0, 0;
//   binary_tree broadcast from rank 2: positions 0 1 2 3 are ranks 2 3 0 1, so 2 sends to 3 and 0, 3 to 1;
//   tree allreduce over 5 ranks (odd: tree B is tree A shifted by one rank, r -> r+1 mod 5):
//   A: 1 -> 2, 3 -> 2, 2 -> 4, 4 -> 0; B: 2 -> 3, 4 -> 3, 3 -> 0, 0 -> 1. Sends up and down:
//   A: 0 H, 1 H, 2 3H, 3 H, 4 2H; B: 0 2H, 1 H, 2 H, 3 3H, 4 H. Totals 3H, 2H, 4H, 4H, 3H.
struct byte_case {
  const char* settings;
  uint64_t per_rank[5];  // h4 is a rank only where the settings say ranks: 5
};

TEST(collective, every_op_moves_the_hand_counted_bytes_and_the_right_result) {
  constexpr uint64_t S = 1048576;
  const byte_case cases[] = {
      {"op: allreduce", {1572864, 1572864, 1572864, 1572864}},
      {"op: allgather", {786432, 786432, 786432, 786432}},
      {"op: reducescatter", {786432, 786432, 786432, 786432}},
      {"op: alltoall", {786432, 786432, 786432, 786432}},
      {"op: broadcast, root: 1", {0, S, S, S}},
      {"op: allreduce, algo: binary_tree", {2 * S, 2 * S, S, S}},
      {"op: allreduce, algo: tree", {S, 2 * S, 2 * S, S}},
      {"op: broadcast, algo: binary_tree, root: 2", {0, 0, 2 * S, S}},
      {"op: allreduce, algo: tree, ranks: 5", {3 * S / 2, S, 2 * S, 2 * S, 3 * S / 2}},
      {"op: broadcast, algo: tree", {2 * S, S, 0, 0}},
  };
  for (const byte_case& c : cases) {
    SCOPED_TRACE(c.settings);
    const json r = run(std::string("topology: {kind: single_switch, hosts: 5}\nworkload: {kind: collective}\n"
                                   "collective: {min_bytes: 1048576, max_bytes: 1048576, iterations: 1, "
                                   "warmup_iterations: 0, chunk_bytes: 65536, ") +
                       c.settings + (std::string(c.settings).find("ranks") == std::string::npos ? ", ranks: 4" : "") +
                       "}\n");
    ASSERT_TRUE(r.contains("collective")) << r.dump().substr(0, 400);
    const json& col = r["collective"];
    EXPECT_TRUE(col["completed"].get<bool>());
    EXPECT_TRUE(r["verified"].get<bool>());  // every WRITE byte for byte, every result against the reference
    ASSERT_EQ(col["rows"].size(), 1u);
    EXPECT_EQ(col["rows"][0]["wrong"].get<uint64_t>(), 0u);
    EXPECT_EQ(col["rows"][0]["size"].get<uint64_t>(), S);
    EXPECT_EQ(col["rows"][0]["count"].get<uint64_t>(), S / 4);
    for (size_t h = 0; h < 5; ++h) EXPECT_EQ(tx_payload(r, h), c.per_rank[h]) << "h" << h;
  }
}

TEST(collective, half_precision_with_uneven_parts_reduces_exactly) {
  // 1000006 bytes of half: 500003 elements, parts of 125000 and 125001 elements; the reduction is done on
  // the 2-byte elements and compared with a sum computed from the send buffers.
  const json r = run("topology: {kind: single_switch, hosts: 4}\nworkload: {kind: collective}\n"
                     "collective: {min_bytes: 1000006, max_bytes: 1000006, dtype: half, iterations: 2, chunk_bytes: 100000}\n");
  ASSERT_TRUE(r.contains("collective"));
  const json& row = r["collective"]["rows"][0];
  EXPECT_EQ(row["count"].get<uint64_t>(), 500003u);
  EXPECT_EQ(row["wrong"].get<uint64_t>(), 0u);
  EXPECT_TRUE(r["verified"].get<bool>());
  EXPECT_EQ(row["iteration_times_us"].size(), 2u);
}

TEST(collective, ring_allreduce_busbw_approaches_the_link_rate_less_headers) {
  // Hand derivation. Every rank's uplink carries 2(n-1)/n S of payload in MTU-sized packets. Per packet on
  // the wire: payload 4096 + Ethernet 14 + FCS 4 + preamble/SFD 8 + IFG 12 + IPv4 20 + UDP 8 + BTH 12 +
  // ICRC 4 = 4178 bytes (plus a 16-byte RETH on the first packet of each WRITE: 16 bytes per 128 packets
  // with 512 KiB slices, 0.003 %, left out). busbw = 2(n-1)/n S / t, and t >= 2(n-1)/n S / (rate x
  // 4096/4178), so busbw_max = 400e9/8 x 4096/4178 = 49.019 GB/s. The ring keeps every uplink busy from
  // the first slice on, so a 32 MiB allreduce over 8 ranks should come within 1 % of it (fill and drain
  // are one slice of 512 KiB over 56 MiB sent), and never above. ACKs go the other way on each link.
  namespace hb = core::header_bytes;
  const double overhead = hb::ethernet + hb::fcs + hb::preamble_sfd + hb::inter_frame_gap + hb::ipv4 + hb::udp +
                          hb::bth + hb::icrc;
  EXPECT_EQ(overhead, 82.0);
  const double bound_gbytes = 400e9 / 8 * 4096 / (4096 + overhead) / 1e9;
  const json r = run("topology: {kind: single_switch, hosts: 8, link_gbps: 400}\nnic: {place_data: false}\n"
                     "workload: {kind: collective}\n"
                     "collective: {min_bytes: 33554432, max_bytes: 33554432, iterations: 1, warmup_iterations: 1}\n");
  ASSERT_TRUE(r.contains("collective"));
  const json& row = r["collective"]["rows"][0];
  const double busbw = row["busbw_gbps"].get<double>();
  EXPECT_LT(busbw, bound_gbytes);
  EXPECT_GT(busbw, 0.99 * bound_gbytes);
  // algbw and busbw as nccl-tests defines them: S / t and algbw x 2(n-1)/n.
  EXPECT_NEAR(row["algbw_gbps"].get<double>(), 33554432.0 / (row["time_us"].get<double>() * 1e-6) / 1e9, 1e-9);
  EXPECT_NEAR(busbw, row["algbw_gbps"].get<double>() * 14.0 / 8.0, 1e-9);
  EXPECT_EQ(r["fabric"]["drops"].get<uint64_t>(), 0u);
}

TEST(collective, trees_stay_below_their_link_load_bounds) {
  // Per rank, the bytes into its downlink bound the time. Ring allreduce: 2(n-1)/n S = 1.75 S at 8 ranks.
  // binary_tree: an inner rank receives S from each of two children and S from its parent: 3 S, so
  // busbw <= 49.02 x 1.75 / 3 = 28.6 GB/s. tree (double binary): each rank is inner in one tree (3 x S/2
  // in) and a leaf in the other (S/2 in): 2 S, busbw <= 49.02 x 1.75 / 2 = 42.9 GB/s. So the ring beats
  // the double tree, which beats the plain one.
  const double bound = 400e9 / 8 * 4096 / 4178 / 1e9;
  auto busbw = [](const char* algo) {
    const json r = run(std::string("topology: {kind: single_switch, hosts: 8}\nnic: {place_data: false}\n"
                                   "workload: {kind: collective}\ncollective: {min_bytes: 16777216, max_bytes: "
                                   "16777216, iterations: 1, algo: ") +
                       algo + "}\n");
    return r.contains("collective") ? r["collective"]["rows"][0]["busbw_gbps"].get<double>() : -1.0;
  };
  const double ring = busbw("ring"), dtree = busbw("tree"), btree = busbw("binary_tree");
  EXPECT_LT(btree, bound * 1.75 / 3);
  EXPECT_LT(dtree, bound * 1.75 / 2);
  EXPECT_GT(btree, 0.5 * bound * 1.75 / 3);  // the pipeline works: within a factor of two of its bound
  EXPECT_GT(dtree, 0.5 * bound * 1.75 / 2);
  EXPECT_GT(ring, dtree);
  EXPECT_GT(dtree, btree);
}

TEST(collective, sprayed_ring_across_leaves_is_verified_and_repeatable) {
  // Spread placement puts every ring neighbour behind the other leaf; per-packet spraying over two spines
  // reorders packets, so WRITEs on one queue pair may be placed out of post order: the engine must still
  // match every placement to its WRITE. Same seed, same times.
  const std::string yaml = "topology: {kind: leaf_spine, leaves: 2, hosts_per_leaf: 4, spines: 2}\n"
                           "nic: {path_entropy: per_packet}\nworkload: {kind: collective}\n"
                           "collective: {placement: spread, min_bytes: 1048576, max_bytes: 2097152, iterations: 1, "
                           "chunk_bytes: 131072}\n";
  const json a = run(yaml), b = run(yaml);
  ASSERT_TRUE(a.contains("collective") && b.contains("collective"));
  EXPECT_EQ(a["collective"]["rank_hosts"], json({"h0", "h4", "h1", "h5", "h2", "h6", "h3", "h7"}));
  EXPECT_EQ(a["collective"]["unexpected_placements"].get<uint64_t>(), 0u);
  EXPECT_TRUE(a["verified"].get<bool>());
  EXPECT_EQ(a["collective"]["rows"], b["collective"]["rows"]);
}

}  // namespace collective_test
}  // namespace fabricsim::testbench
