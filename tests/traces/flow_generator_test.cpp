// Tests of the flow generator (traces/flow_generator): the published CDF tables' means worked out by hand,
// inverse-CDF sampling against the tables' own fractions, Poisson arrivals against the offered load, seeds,
// CDF file errors with line numbers, and the flow list it writes read back by the flow-list reader.
#include "traces/flow_generator.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <gtest/gtest.h>

#include "tests/support/error_of.h"

namespace fabricsim::traces {
namespace flow_generator_test {

using test::error_of;

// The web search table's mean by hand: each segment holds (its fraction) of the flows, uniform between its
// ends, so it adds fraction x (a + b) / 2.
constexpr double websearch_mean_by_hand = 0.15 * 5000 + 0.05 * 15000 + 0.10 * 25000 + 0.10 * 40000 +
                                          0.13 * 65000 + 0.07 * 140000 + 0.10 * 600000 + 0.10 * 1.5e6 +
                                          0.10 * 3.5e6 + 0.07 * 7.5e6 + 0.03 * 2e7;  // 1,711,250 bytes
constexpr double hadoop_mean_by_hand = 0.01 * 50 + 0.01 * 150 + 0.03 * 250 + 0.10 * 325 + 0.05 * 375 +
                                       0.10 * 450 + 0.10 * 550 + 0.10 * 650 + 0.10 * 850 + 0.07 * 1500 +
                                       0.03 * 4500 + 0.02 * 18500 + 0.10 * 40000 + 0.05 * 65000 +
                                       0.03 * 100000 + 0.05 * 210000 + 0.025 * 650000 + 0.015 * 1.5e6 +
                                       0.01 * 6e6;  // 120,420.75 bytes

TEST(flow_size_cdf, means_of_the_published_tables_match_the_hand_sums) {
  EXPECT_NEAR(websearch_cdf().mean(), websearch_mean_by_hand, 1e-6);
  EXPECT_NEAR(websearch_mean_by_hand, 1711250.0, 1e-6);  // the sum written out
  EXPECT_NEAR(hadoop_cdf().mean(), hadoop_mean_by_hand, 1e-6);
  EXPECT_NEAR(hadoop_mean_by_hand, 120420.75, 1e-6);
  // Capped at 1 MB: the 30 % of flows above 1 MB count as 1 MB; the segments below are unchanged.
  const double below = 0.15 * 5000 + 0.05 * 15000 + 0.10 * 25000 + 0.10 * 40000 + 0.13 * 65000 + 0.07 * 140000 +
                       0.10 * 600000;
  EXPECT_NEAR(websearch_cdf().mean(1e6), below + 0.30 * 1e6, 1e-6);
  // A cap inside a segment: web search's 10 K .. 20 K segment cut at 15 K holds half its flows below the
  // cap (mean 12.5 K) and half at it.
  const double cut = 0.15 * 5000 + 0.05 * (0.5 * 12500 + 0.5 * 15000) + 0.80 * 15000;
  EXPECT_NEAR(websearch_cdf().mean(15000), cut, 1e-6);
}

TEST(flow_size_cdf, quantile_interpolates_linearly_between_the_points) {
  const flow_size_cdf w = websearch_cdf();
  EXPECT_DOUBLE_EQ(w.quantile(0.0), 0.0);
  EXPECT_DOUBLE_EQ(w.quantile(0.15), 10000.0);
  EXPECT_DOUBLE_EQ(w.quantile(0.175), 15000.0);  // halfway from 15 % (10 KB) to 20 % (20 KB)
  EXPECT_DOUBLE_EQ(w.quantile(0.65), 600000.0);  // halfway from 60 % (200 KB) to 70 % (1 MB)
  EXPECT_DOUBLE_EQ(w.quantile(0.985), 2e7);      // halfway from 97 % (10 MB) to 100 % (30 MB)
  const flow_size_cdf h = hadoop_cdf();
  EXPECT_DOUBLE_EQ(h.quantile(0.10), 325.0);     // halfway from 5 % (300 B) to 15 % (350 B)
}

// Many draws: the fraction at or below every table point is the table's fraction, and the mean the hand
// mean. 400,000 draws: a fraction's standard error is at most 0.0008, so 0.004 is five of them; web search's
// size has a standard deviation near 4.2 MB, so the mean's standard error is about 0.4 % and 2.5 % is six.
void check_sampler(const flow_size_cdf& cdf, const std::vector<std::pair<double, double>>& table, double mean) {
  core::rng_stream rng = core::make_stream(11, "test", "sizes");
  const size_t n = 400000;
  std::vector<uint64_t> x(n);
  for (auto& v : x) v = cdf.sample(rng);
  std::sort(x.begin(), x.end());
  for (const auto& [bytes, fraction] : table) {
    const double below = double(std::upper_bound(x.begin(), x.end(), uint64_t(bytes)) - x.begin()) / double(n);
    EXPECT_NEAR(below, fraction, 0.004) << "P(size <= " << bytes << ")";
  }
  const double m = std::accumulate(x.begin(), x.end(), 0.0) / double(n);
  EXPECT_NEAR(m / mean, 1.0, 0.025);
  EXPECT_GE(x.front(), 1u);
  EXPECT_LE(double(x.back()), table.back().first);
}

TEST(flow_size_cdf, samples_follow_the_websearch_table) {
  check_sampler(websearch_cdf(),
                {{10000, .15}, {20000, .20}, {30000, .30}, {50000, .40}, {80000, .53}, {200000, .60}, {1e6, .70},
                 {2e6, .80}, {5e6, .90}, {1e7, .97}, {3e7, 1.0}},
                websearch_mean_by_hand);
}

TEST(flow_size_cdf, samples_follow_the_hadoop_table) {
  check_sampler(hadoop_cdf(),
                {{100, .01}, {300, .05}, {350, .15}, {500, .30}, {700, .50}, {1000, .60}, {2000, .67}, {7000, .70},
                 {30000, .72}, {50000, .82}, {120000, .90}, {300000, .95}, {1e6, .975}, {2e6, .99}, {1e7, 1.0}},
                hadoop_mean_by_hand);
}

TEST(flow_size_cdf, the_cap_cuts_samples) {
  core::rng_stream rng = core::make_stream(3, "test", "cap");
  uint64_t at_cap = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t b = websearch_cdf().sample(rng, 1000000);
    EXPECT_LE(b, 1000000u);
    at_cap += b == 1000000;
  }
  EXPECT_NEAR(double(at_cap) / 10000.0, 0.30, 0.03);  // the 30 % above 1 MB; standard error 0.0046
}

std::vector<double> rates(size_t hosts, double gbps) { return std::vector<double>(hosts, gbps * 1e9); }

// One size only: every flow is 10,000 bytes (a step CDF), so the offered load is the arrival count alone.
flow_size_cdf fixed_10k() { return flow_size_cdf({{10000, 0.0}, {10000, 1.0}}, "fixed"); }

TEST(flow_generator, arrivals_offer_the_target_load) {
  // 8 hosts at 100 Gb/s, load 0.4, 10 KB flows: one flow every 10,000 x 8 / (0.4 x 100) = 2,000 ns per host;
  // in 20 ms, 10,000 flows per host, 80,000 in all (Poisson: standard error 0.35 %; 2 % is six of them).
  flow_generator_params p;
  p.load = 0.4;
  p.window_ns = 20e6;
  const auto flows = generate_flows(fixed_10k(), p, rates(8, 100), {}, 5, "t");
  EXPECT_NEAR(double(flows.size()) / 80000.0, 1.0, 0.02);
  std::vector<std::vector<double>> starts(8);
  for (const auto& f : flows) {
    EXPECT_EQ(f.bytes, 10000u);
    EXPECT_NE(f.src, f.dst);
    EXPECT_LT(f.start_ns, 20e6);
    starts[f.src].push_back(f.start_ns);
  }
  for (size_t h = 0; h < 8; ++h) {
    const double offered = double(starts[h].size()) * 10000 * 8 / (20e6 * 1e-9) / 100e9;
    EXPECT_NEAR(offered, 0.4, 0.4 * 0.06) << "host " << h;  // 10,000 flows: 1 % error, 6 %: six of them
    // Exponential gaps: mean 2,000 ns and a coefficient of variation of 1.
    std::vector<double> gaps;
    for (size_t i = 1; i < starts[h].size(); ++i) gaps.push_back(starts[h][i] - starts[h][i - 1]);
    const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / double(gaps.size());
    double var = 0;
    for (double g : gaps) var += (g - mean) * (g - mean);
    const double cv = std::sqrt(var / double(gaps.size())) / mean;
    EXPECT_NEAR(mean, 2000.0, 2000.0 * 0.05);
    EXPECT_NEAR(cv, 1.0, 0.05);
  }
  // In time order.
  for (size_t i = 1; i < flows.size(); ++i) EXPECT_LE(flows[i - 1].start_ns, flows[i].start_ns);
}

TEST(flow_generator, websearch_offers_the_target_load_in_bytes) {
  // 16 hosts at 400 Gb/s, load 0.5: 0.5 x 50 GB/s / 1,711,250 B = 14,609 flows/s per host; in 0.2 s about
  // 46,750 flows. The bytes offered have a relative standard error near sqrt(E[X^2] / N) / E[X], 1.1 %
  // here; 5 % is over four of them.
  flow_generator_params p;
  p.load = 0.5;
  p.window_ns = 0.2e9;
  const auto flows = generate_flows(websearch_cdf(), p, rates(16, 400), {}, 9, "t");
  double bytes = 0;
  for (const auto& f : flows) bytes += double(f.bytes);
  const double offered = bytes * 8 / 0.2 / (16 * 400e9);
  EXPECT_NEAR(offered, 0.5, 0.5 * 0.05);
  EXPECT_NEAR(double(flows.size()) / (16 * 0.5 * 50e9 / websearch_mean_by_hand * 0.2), 1.0, 0.03);
}

TEST(flow_generator, flow_count_destinations_and_seeds) {
  flow_generator_params p;
  p.load = 0.3;
  p.flow_count = 500;
  const auto a = generate_flows(hadoop_cdf(), p, rates(6, 400), {}, 1, "t");
  ASSERT_EQ(a.size(), 500u);
  std::vector<int> to(6, 0);
  for (const auto& f : a) {
    EXPECT_NE(f.src, f.dst);
    ++to[f.dst];
  }
  for (int c : to) EXPECT_GT(c, 40);  // about 83 each
  // Same seed, same flows; another seed, other flows.
  const auto b = generate_flows(hadoop_cdf(), p, rates(6, 400), {}, 1, "t");
  const auto c = generate_flows(hadoop_cdf(), p, rates(6, 400), {}, 2, "t");
  auto same = [](const std::vector<flow_entry>& x, const std::vector<flow_entry>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].src != y[i].src || x[i].dst != y[i].dst || x[i].bytes != y[i].bytes || x[i].start_ns != y[i].start_ns)
        return false;
    return true;
  };
  EXPECT_TRUE(same(a, b));
  EXPECT_FALSE(same(a, c));
  // off_leaf: hosts 0-2 on leaf 0, 3-5 on leaf 1.
  p.destinations = "off_leaf";
  for (const auto& f : generate_flows(hadoop_cdf(), p, rates(6, 400), {0, 0, 0, 1, 1, 1}, 1, "t"))
    EXPECT_NE(f.src / 3, f.dst / 3);
}

TEST(flow_generator, bad_parameters_are_named) {
  flow_generator_params p;
  p.flow_count = 10;
  p.load = 0;
  EXPECT_EQ(error_of([&] { generate_flows(hadoop_cdf(), p, rates(4, 400), {}, 1, "s.yaml: workload"); }),
            "s.yaml: workload.load: 0 must be above 0 and at most 1 (a fraction of each host's link rate)");
  p.load = 1.5;
  EXPECT_NE(error_of([&] { generate_flows(hadoop_cdf(), p, rates(4, 400), {}, 1, "w"); }).find("w.load: 1.5 must"),
            std::string::npos);
  p.load = 0.5;
  p.window_ns = 100;
  EXPECT_NE(error_of([&] { generate_flows(hadoop_cdf(), p, rates(4, 400), {}, 1, "w"); }).find("exactly one of"),
            std::string::npos);
  EXPECT_NE(error_of([&] { generate_flows(hadoop_cdf(), p, rates(1, 400), {}, 1, "w"); }).find("exactly one of"),
            std::string::npos);
  p.window_ns = 0;
  EXPECT_EQ(error_of([&] { generate_flows(hadoop_cdf(), p, rates(1, 400), {}, 1, "w"); }),
            "w: generated flows need at least 2 hosts, the topology has 1");
  p.destinations = "off_leaf";
  EXPECT_EQ(error_of([&] { generate_flows(hadoop_cdf(), p, rates(2, 400), {0, 0}, 1, "w"); }),
            "w.destinations: off_leaf: host h0 has no host on another leaf to send to");
}

TEST(cdf_file, parses_fractions_percentages_comments_and_separators) {
  const flow_size_cdf a = parse_cdf("# size fraction\n0 0\n1000, 0.5\n\n3000\t1   # end\n", "a.cdf");
  EXPECT_DOUBLE_EQ(a.mean(), 0.5 * 500 + 0.5 * 2000);
  const flow_size_cdf b = parse_cdf("0 0\r\n1000 50\r\n3000 100\r\n", "b.cdf");  // HPCC's percent format
  EXPECT_DOUBLE_EQ(b.quantile(0.75), 2000.0);
}

TEST(cdf_file, errors_name_the_file_and_line) {
  EXPECT_EQ(error_of([] { parse_cdf("0 0\nabc 1\n", "x.cdf"); }), "x.cdf:2: bytes: expected a size >= 0, got 'abc'");
  EXPECT_EQ(error_of([] { parse_cdf("0 0\n\n100 0.5 7\n", "x.cdf"); }),
            "x.cdf:3: expected two columns `bytes fraction`, got '100 0.5 7'");
  EXPECT_EQ(error_of([] { parse_cdf("0 0\n100 0.5\n50 1\n", "x.cdf"); }),
            "x.cdf:3: bytes: sizes must not decrease (previous 100)");
  EXPECT_EQ(error_of([] { parse_cdf("0 0\n100 0.5\n200 0.4\n", "x.cdf"); }),
            "x.cdf:3: fraction: must not decrease (previous 0.5)");
  EXPECT_EQ(error_of([] { parse_cdf("0 0\n100 0.5\n200 0.9\n", "x.cdf"); }),
            "x.cdf:3: fraction: the last point must be 1 (or 100 for percentages), got 0.9");
  EXPECT_EQ(error_of([] { parse_cdf("0 -1\n100 1\n", "x.cdf"); }),
            "x.cdf:1: fraction: expected a number >= 0 (0..1 or a percentage 0..100), got '-1'");
  EXPECT_EQ(error_of([] { parse_cdf("# nothing\n100 1\n", "x.cdf"); }),
            "x.cdf: a flow-size CDF needs at least two points `bytes fraction`");
  EXPECT_EQ(error_of([] { load_cdf("/nonexistent/f.cdf"); }), "/nonexistent/f.cdf: cannot read the flow-size CDF file");
}

TEST(flow_list_file, generated_flows_round_trip_through_the_reader) {
  flow_generator_params p;
  p.load = 0.7;
  p.flow_count = 300;
  const auto flows = generate_flows(websearch_cdf(), p, rates(5, 400), {}, 4, "t");
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fabricsim_gen_" + std::to_string(getpid()) + ".csv")).string();
  write_flow_list(path, flows);
  const auto back = load_flow_list(path, 5);
  std::filesystem::remove(path);
  ASSERT_EQ(back.size(), flows.size());
  for (size_t i = 0; i < flows.size(); ++i) {
    EXPECT_EQ(back[i].src, flows[i].src);
    EXPECT_EQ(back[i].dst, flows[i].dst);
    EXPECT_EQ(back[i].bytes, flows[i].bytes);
    EXPECT_EQ(back[i].start_ns, flows[i].start_ns);  // shortest round-trip text: exact
  }
  EXPECT_EQ(error_of([&] { write_flow_list("/nonexistent/dir/f.csv", flows); }),
            "/nonexistent/dir/f.csv: cannot open the flow list for writing");
}

}  // namespace flow_generator_test
}  // namespace fabricsim::traces
