// core::fine_histogram against an exact computation: the quantile it answers is an upper bound on the true
// quantile (the ceil(q * n)-th smallest value, found by sorting) and at most 1/32 above it; bucket edges tile
// the range without gaps; the registry's JSON carries the percentiles; merging equals adding everything once.
#include "sc_models/core/fine_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "sc_models/core/stats.h"

namespace fabricsim::core {
namespace fine_histogram_test {

uint64_t exact_quantile(std::vector<uint64_t> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t rank = size_t(std::ceil(q * double(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

TEST(fine_histogram, buckets_tile_the_range_and_each_value_falls_between_its_edges) {
  EXPECT_EQ(fine_histogram::buckets, 1920u);
  for (unsigned i = 0; i + 1 < fine_histogram::buckets; ++i) {
    ASSERT_EQ(fine_histogram::upper(i) + 1, fine_histogram::lower(i + 1)) << i;
    ASSERT_EQ(fine_histogram::index(fine_histogram::lower(i)), i);
    ASSERT_EQ(fine_histogram::index(fine_histogram::upper(i)), i);
    // Width at most 1/32 of the lower edge above the exact range.
    if (i >= 64)
      ASSERT_LE(double(fine_histogram::upper(i) - fine_histogram::lower(i) + 1),
                double(fine_histogram::lower(i)) / 32.0);
  }
  EXPECT_EQ(fine_histogram::index(UINT64_MAX), fine_histogram::buckets - 1);
  EXPECT_EQ(fine_histogram::index(63), 63u);
  EXPECT_EQ(fine_histogram::index(64), 64u);
  EXPECT_EQ(fine_histogram::index(65), 64u);  // 64 and 65 share a bucket of width 2
  EXPECT_EQ(fine_histogram::index(66), 65u);
}

TEST(fine_histogram, quantiles_are_upper_bounds_within_a_32nd_of_the_sorted_answer) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(std::log(2.0e6), 0.8);  // ps: ~2 us with a long tail
  std::vector<uint64_t> values;
  fine_histogram h;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = uint64_t(latency(rng)) + 1;
    values.push_back(v);
    h.add(v);
  }
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
  for (double q : {0.01, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const uint64_t want = exact_quantile(values, q), got = h.quantile(q);
    EXPECT_GE(got, want) << q;
    EXPECT_LE(double(got), double(want) * (1.0 + 1.0 / 32.0)) << q;
  }
  EXPECT_EQ(h.quantile(1.0), h.max());
  EXPECT_EQ(fine_histogram{}.quantile(0.99), 0u);
}

TEST(fine_histogram, small_values_are_exact_and_merge_is_adding_once) {
  fine_histogram a, b, all;
  for (uint64_t v = 0; v < 50; ++v) {
    (v % 2 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), 50u);
  EXPECT_EQ(a.sum(), all.sum());
  for (unsigned i = 0; i < fine_histogram::buckets; ++i) ASSERT_EQ(a.bucket(i), all.bucket(i));
  EXPECT_EQ(a.quantile(0.5), 24u);   // 25th smallest of 0..49
  EXPECT_EQ(a.quantile(0.99), 49u);  // ceil(49.5) = 50th
}

TEST(fine_histogram, the_registry_writes_its_percentiles) {
  stats_registry r;
  fine_histogram h;
  for (uint64_t v = 1; v <= 1000; ++v) h.add(v * 1000);
  r.fine_hist("fabric", "lat", "ps", "latency", &h);
  const nlohmann::json j = r.to_json()["fabric"]["lat"];
  EXPECT_EQ(j["count"], 1000);
  EXPECT_EQ(j["max"], 1000000);
  // True p99 is 990,000; the answer is its bucket's top: 2^19 <= 990,000 < 2^20, width 2^14 = 16,384.
  const uint64_t p99 = j["p99"].get<uint64_t>();
  EXPECT_GE(p99, 990000u);
  EXPECT_LT(p99, 990000u + 16384u);
  EXPECT_EQ(&r.fine_hist_value("fabric", "lat"), &h);
  size_t fine = 0;
  r.for_each_entry([&](const stats_registry::merge_entry& e) { fine += e.fine != nullptr; });
  EXPECT_EQ(fine, 1u);
}

}  // namespace fine_histogram_test
}  // namespace fabricsim::core
