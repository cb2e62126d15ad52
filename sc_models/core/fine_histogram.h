// A histogram fine enough for percentiles: values below 64 counted exactly, above that 32 buckets per power
// of two (log-linear, as HdrHistogram lays out its sub-buckets), so a bucket is at most 1/32 (3.1 %) of its
// lower edge wide. quantile() answers the largest value of the bucket the rank falls in (never more than the
// largest value added): an upper bound within 3.1 % of the true quantile. 1,920 buckets (15 KiB): one per
// run-wide quantity, not one per device. Trivially copyable (the scale-out merge ships it as bytes).
#pragma once

#include <algorithm>
#include <cstdint>

namespace fabricsim::core {

class fine_histogram {
 public:
  static constexpr unsigned sub_bits = 5;            // 32 sub-buckets per power of two
  static constexpr unsigned exact = 2u << sub_bits;  // values below 64: a bucket each
  static constexpr unsigned buckets = exact + (64 - (sub_bits + 1)) * (1u << sub_bits);  // 1,920

  static unsigned index(uint64_t v) {
    if (v < exact) return unsigned(v);
    const unsigned k = 63 - unsigned(__builtin_clzll(v));  // 2^k <= v < 2^(k+1), k >= 6
    const unsigned sub = unsigned(v >> (k - sub_bits)) - (1u << sub_bits);
    return exact + (k - (sub_bits + 1)) * (1u << sub_bits) + sub;
  }
  // The smallest and the largest value that index() puts in bucket i.
  static uint64_t lower(unsigned i) {
    if (i < exact) return i;
    const unsigned k = (i - exact) / (1u << sub_bits) + sub_bits + 1, sub = (i - exact) % (1u << sub_bits);
    return (uint64_t((1u << sub_bits) + sub)) << (k - sub_bits);
  }
  static uint64_t upper(unsigned i) { return i + 1 < buckets ? lower(i + 1) - 1 : UINT64_MAX; }

  void add(uint64_t v) {
    ++m_buckets[index(v)];
    ++m_count;
    m_sum += v;
    m_min = std::min(m_min, v);
    m_max = std::max(m_max, v);
  }
  uint64_t count() const { return m_count; }
  uint64_t sum() const { return m_sum; }
  uint64_t min() const { return m_count ? m_min : 0; }
  uint64_t max() const { return m_max; }
  double mean() const { return m_count ? double(m_sum) / double(m_count) : 0.0; }
  uint64_t bucket(unsigned i) const { return m_buckets[i]; }

  // The q-quantile (0 < q <= 1) as an upper bound: the largest value of the bucket holding the
  // ceil(q * count)-th smallest value, capped at the largest value added; 0 when empty.
  uint64_t quantile(double q) const {
    if (m_count == 0) return 0;
    const double want = q * double(m_count);
    uint64_t rank = uint64_t(want);
    if (double(rank) < want) ++rank;
    rank = std::max<uint64_t>(1, std::min(rank, m_count));
    uint64_t seen = 0;
    for (unsigned i = 0; i < buckets; ++i) {
      seen += m_buckets[i];
      if (seen >= rank) return std::min(upper(i), m_max);
    }
    return m_max;
  }

  void merge(const fine_histogram& o) {
    for (unsigned i = 0; i < buckets; ++i) m_buckets[i] += o.m_buckets[i];
    m_count += o.m_count;
    m_sum += o.m_sum;
    m_min = std::min(m_min, o.m_min);
    m_max = std::max(m_max, o.m_max);
  }

 private:
  uint64_t m_buckets[buckets] = {};
  uint64_t m_count = 0, m_sum = 0, m_min = UINT64_MAX, m_max = 0;
};

}  // namespace fabricsim::core
