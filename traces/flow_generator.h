// Flow generator: datacenter flow-size distributions (empirical CDFs) sampled by inverse CDF, with Poisson
// arrivals per host at a target offered load. Produces a flow list (traces/flow_list.h rows) so that a
// generated workload can be written out and replayed by any tool that reads `src,dst,bytes,start_ns`.
// Pure C++: decided before the fabric is built. The tables and their sources: docs/workloads.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sc_models/core/rng.h"
#include "traces/flow_list.h"

namespace fabricsim::traces {

// One point of an empirical CDF: P(size <= bytes) = fraction.
struct cdf_point {
  double bytes = 0.0;
  double fraction = 0.0;  // 0 .. 1
};

// A flow-size distribution given by CDF points, linearly interpolated between them (the convention of the
// HPCC and Homa traffic generators): sizes are uniform between two consecutive points. The first point's
// fraction may be above 0 (a mass at that size); the last must be 1.
class flow_size_cdf {
 public:
  // Checks the points: at least two, sizes and fractions non-decreasing, fractions in [0, 1] ending at 1,
  // sizes >= 0. Throws core::config_error prefixed by `where` naming the point (1-based) otherwise.
  flow_size_cdf(std::vector<cdf_point> points, const std::string& where);

  // Inverse CDF at u in [0, 1): the size whose interpolated CDF is u.
  double quantile(double u) const;
  // The mean of min(size, cap) under the interpolated CDF (cap 0: no cap), exact for the piecewise-uniform
  // density.
  double mean(double cap = 0.0) const;
  // One size in bytes: quantile of a uniform draw, rounded to the nearest byte, at least 1, at most `cap`
  // (0: no cap).
  uint64_t sample(core::rng_stream& rng, uint64_t cap = 0) const;
  const std::vector<cdf_point>& points() const { return m_points; }

 private:
  std::vector<cdf_point> m_points;
};

// The published tables (docs/workloads.md): web search (Alizadeh et al., DCTCP, SIGCOMM 2010) and Facebook
// Hadoop (Roy et al., SIGCOMM 2015), as the CDF points of the HPCC/Homa evaluations.
flow_size_cdf websearch_cdf();
flow_size_cdf hadoop_cdf();

// Parses a CDF file: one point per line, `bytes fraction` separated by spaces, tabs or a comma; fraction as
// 0..1 or, when the last point is 100, as a percentage (the HPCC traffic_gen format). `#` starts a comment;
// blank lines are skipped. Throws core::config_error "source:line: what was expected".
flow_size_cdf parse_cdf(const std::string& text, const std::string& source);
flow_size_cdf load_cdf(const std::string& path);

// What to generate. Host link rates are per host (bits per second) so that an oversubscribed or mixed
// fabric gets the right arrival rate per host.
struct flow_generator_params {
  double load = 0.5;            // offered load per host as a fraction of its link rate, (0, 1]
  uint64_t flow_count = 0;      // stop after this many flows in all (0: use window_ns)
  double window_ns = 0.0;       // or: flows that arrive before this time (0: use flow_count)
  uint64_t max_flow_bytes = 0;  // cap on a flow's size (0: none); the arrival rate uses the capped mean
  std::string destinations = "uniform";  // "uniform": any other host; "off_leaf": any host on another leaf
};

// Poisson arrivals per host: exponential gaps of mean mean_bytes x 8 / (load x rate); each flow's size from
// `cdf`, its destination uniform over the allowed hosts. Host h draws from its own stream
// (make_stream(seed, "flow_generator", "h<h>")), so a host's flows do not depend on the host count's
// other streams. Flows are returned in start-time order (ties by host). `leaf_of_host` is used by
// "off_leaf" (may be empty for "uniform"). Throws core::config_error prefixed by `where` for a load outside
// (0, 1], neither or both of flow_count and window_ns, fewer than two hosts, or a host without any allowed
// destination.
std::vector<flow_entry> generate_flows(const flow_size_cdf& cdf, const flow_generator_params& p,
                                       const std::vector<double>& host_rate_bps,
                                       const std::vector<size_t>& leaf_of_host, uint64_t seed,
                                       const std::string& where);

// Writes `flows` as a flow list (header src,dst,bytes,start_ns) that load_flow_list reads back exactly:
// start times are written with enough digits to round-trip. Throws core::config_error naming the file when
// it cannot be written.
void write_flow_list(const std::string& path, const std::vector<flow_entry>& flows);

}  // namespace fabricsim::traces
