// Flow generator: empirical flow-size CDFs, inverse-CDF sampling and Poisson arrivals per host.
#include "traces/flow_generator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <queue>
#include <sstream>

#include <fmt/format.h>

#include "sc_models/core/params.h"

namespace fabricsim::traces {

using core::config_error;

flow_size_cdf::flow_size_cdf(std::vector<cdf_point> points, const std::string& where) : m_points(std::move(points)) {
  if (m_points.size() < 2)
    throw config_error(where + ": a flow-size CDF needs at least two points, got " + std::to_string(m_points.size()));
  for (size_t i = 0; i < m_points.size(); ++i) {
    const cdf_point& p = m_points[i];
    const std::string at = where + ": point " + std::to_string(i + 1) + " (" + fmt::format("{} {}", p.bytes, p.fraction) + ")";
    if (!(p.bytes >= 0.0) || !std::isfinite(p.bytes)) throw config_error(at + ": size must be a number >= 0");
    if (!(p.fraction >= 0.0 && p.fraction <= 1.0)) throw config_error(at + ": fraction must be in 0 .. 1");
    if (i > 0 && p.bytes < m_points[i - 1].bytes) throw config_error(at + ": sizes must not decrease");
    if (i > 0 && p.fraction < m_points[i - 1].fraction) throw config_error(at + ": fractions must not decrease");
  }
  if (m_points.back().fraction != 1.0)
    throw config_error(where + ": the last point's fraction must be 1 (100 %), got " +
                       fmt::format("{}", m_points.back().fraction));
  if (m_points.back().bytes <= 0.0) throw config_error(where + ": the largest size must be above 0");
}

double flow_size_cdf::quantile(double u) const {
  // The mass at the first point (fraction above 0 there) maps to its size.
  if (u <= m_points.front().fraction) return m_points.front().bytes;
  for (size_t i = 1; i < m_points.size(); ++i) {
    const cdf_point& a = m_points[i - 1];
    const cdf_point& b = m_points[i];
    if (u <= b.fraction) {
      if (b.fraction == a.fraction) return b.bytes;
      return a.bytes + (b.bytes - a.bytes) * (u - a.fraction) / (b.fraction - a.fraction);
    }
  }
  return m_points.back().bytes;
}

double flow_size_cdf::mean(double cap) const {
  // The density is uniform on each segment: its share of the mean is its probability times the mean of
  // min(x, cap) for x uniform on [a, b].
  const double c = cap > 0.0 ? cap : INFINITY;
  double sum = m_points.front().fraction * std::min(m_points.front().bytes, c);
  for (size_t i = 1; i < m_points.size(); ++i) {
    const double a = m_points[i - 1].bytes, b = m_points[i].bytes;
    const double w = m_points[i].fraction - m_points[i - 1].fraction;
    if (w <= 0.0) continue;
    double m;
    if (c >= b) m = (a + b) / 2.0;
    else if (c <= a) m = c;
    else m = ((c - a) * (a + c) / 2.0 + (b - c) * c) / (b - a);  // the part above the cap counts as cap
    sum += w * m;
  }
  return sum;
}

uint64_t flow_size_cdf::sample(core::rng_stream& rng, uint64_t cap) const {
  const double u = double(rng() >> 11) * 0x1.0p-53;  // uniform in [0, 1), 53 bits
  uint64_t bytes = uint64_t(std::llround(quantile(u)));
  bytes = std::max<uint64_t>(bytes, 1);
  if (cap > 0) bytes = std::min(bytes, cap);
  return bytes;
}

// Web search (DCTCP, Alizadeh et al., SIGCOMM 2010, fig. 4 "background flows"), in the points the HPCC
// (Li et al., SIGCOMM 2019) and Homa evaluations use: bytes, cumulative percent.
flow_size_cdf websearch_cdf() {
  const double t[][2] = {{0, 0},          {10000, 15},     {20000, 20},     {30000, 30},
                         {50000, 40},     {80000, 53},     {200000, 60},    {1000000, 70},
                         {2000000, 80},   {5000000, 90},   {10000000, 97},  {30000000, 100}};
  std::vector<cdf_point> p;
  for (const auto& r : t) p.push_back({r[0], r[1] / 100.0});
  return flow_size_cdf(std::move(p), "websearch");
}

// Facebook Hadoop (Roy et al., "Inside the Social Network's (Datacenter) Network", SIGCOMM 2015, fig. 6),
// as the HPCC evaluation's FbHdp table: bytes, cumulative percent.
flow_size_cdf hadoop_cdf() {
  const double t[][2] = {{0, 0},         {100, 1},        {200, 2},         {300, 5},       {350, 15},
                         {400, 20},      {500, 30},       {600, 40},        {700, 50},      {1000, 60},
                         {2000, 67},     {7000, 70},      {30000, 72},      {50000, 82},    {80000, 87},
                         {120000, 90},   {300000, 95},    {1000000, 97.5},  {2000000, 99},  {10000000, 100}};
  std::vector<cdf_point> p;
  for (const auto& r : t) p.push_back({r[0], r[1] / 100.0});
  return flow_size_cdf(std::move(p), "hadoop");
}

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

bool parse_double(const std::string& s, double& out) {
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, out);
  return r.ec == std::errc() && r.ptr == end && std::isfinite(out);
}

}  // namespace

flow_size_cdf parse_cdf(const std::string& text, const std::string& source) {
  std::vector<cdf_point> points;
  std::vector<size_t> line_of;
  std::istringstream in(text);
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    for (char& ch : line)
      if (ch == ',' || ch == '\t') ch = ' ';
    line = trim(line);
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string a, b, extra;
    fields >> a >> b >> extra;
    const std::string at = source + ":" + std::to_string(n);
    if (b.empty() || !extra.empty())
      throw config_error(at + ": expected two columns `bytes fraction`, got '" + line + "'");
    cdf_point p;
    if (!parse_double(a, p.bytes) || p.bytes < 0)
      throw config_error(at + ": bytes: expected a size >= 0, got '" + a + "'");
    if (!parse_double(b, p.fraction) || p.fraction < 0)
      throw config_error(at + ": fraction: expected a number >= 0 (0..1 or a percentage 0..100), got '" + b + "'");
    if (!points.empty() && p.bytes < points.back().bytes)
      throw config_error(at + ": bytes: sizes must not decrease (previous " + fmt::format("{}", points.back().bytes) + ")");
    if (!points.empty() && p.fraction < points.back().fraction)
      throw config_error(at + ": fraction: must not decrease (previous " + fmt::format("{}", points.back().fraction) + ")");
    points.push_back(p);
    line_of.push_back(n);
  }
  if (points.size() < 2) throw config_error(source + ": a flow-size CDF needs at least two points `bytes fraction`");
  // Percentages when the CDF ends at 100; fractions when it ends at 1.
  const double last = points.back().fraction;
  double scale = 1.0;
  if (last == 100.0) scale = 0.01;
  else if (last != 1.0)
    throw config_error(source + ":" + std::to_string(line_of.back()) + ": fraction: the last point must be 1 (or 100 "
                       "for percentages), got " + fmt::format("{}", last));
  for (size_t i = 0; i < points.size(); ++i) {
    points[i].fraction *= scale;
    if (points[i].fraction > 1.0)
      throw config_error(source + ":" + std::to_string(line_of[i]) + ": fraction: above the last point's");
  }
  return flow_size_cdf(std::move(points), source);
}

flow_size_cdf load_cdf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw config_error(path + ": cannot read the flow-size CDF file");
  std::ostringstream text;
  text << f.rdbuf();
  return parse_cdf(text.str(), path);
}

std::vector<flow_entry> generate_flows(const flow_size_cdf& cdf, const flow_generator_params& p,
                                       const std::vector<double>& host_rate_bps,
                                       const std::vector<size_t>& leaf_of_host, uint64_t seed,
                                       const std::string& where) {
  const size_t hosts = host_rate_bps.size();
  if (!(p.load > 0.0 && p.load <= 1.0))
    throw config_error(where + ".load: " + fmt::format("{}", p.load) + " must be above 0 and at most 1 (a fraction "
                       "of each host's link rate)");
  if ((p.flow_count == 0) == (p.window_ns <= 0.0))
    throw config_error(where + ": set exactly one of flow_count and arrival_window_us (how many flows, or for how "
                       "long they arrive)");
  if (hosts < 2) throw config_error(where + ": generated flows need at least 2 hosts, the topology has " +
                                    std::to_string(hosts));
  if (p.destinations != "uniform" && p.destinations != "off_leaf")
    throw config_error(where + ".destinations: expected uniform or off_leaf, got '" + p.destinations + "'");
  const bool off_leaf = p.destinations == "off_leaf";
  if (off_leaf && leaf_of_host.size() != hosts) throw std::logic_error("generate_flows: leaf_of_host not given");

  // off_leaf: every host needs a host on another leaf. Destinations are drawn without a list per host
  // (hosts squared would not fit a large fabric): uniform over the other hosts, redrawn while on the
  // source's leaf under off_leaf (on average hosts / (hosts - leaf size) draws).
  std::map<size_t, size_t> leaf_size;
  if (off_leaf) {
    for (size_t h = 0; h < hosts; ++h) ++leaf_size[leaf_of_host[h]];
    for (size_t h = 0; h < hosts; ++h)
      if (leaf_size[leaf_of_host[h]] == hosts)
        throw config_error(where + ".destinations: off_leaf: host h" + std::to_string(h) +
                           " has no host on another leaf to send to");
  }
  auto destination = [&](size_t h, core::rng_stream& r) {
    for (;;) {
      size_t d = size_t(r() % (hosts - 1));
      if (d >= h) ++d;  // every host but h, each equally likely
      if (!off_leaf || leaf_of_host[d] != leaf_of_host[h]) return d;
    }
  };

  const double mean_bytes = cdf.mean(double(p.max_flow_bytes));
  // Mean gap between a host's arrivals: its mean flow takes mean_bytes x 8 / rate at line rate; at load L
  // flows arrive 1/L times as far apart.
  std::vector<double> mean_gap_ns(hosts);
  for (size_t h = 0; h < hosts; ++h) mean_gap_ns[h] = mean_bytes * 8.0 / (p.load * host_rate_bps[h]) * 1e9;

  std::vector<core::rng_stream> rng;
  rng.reserve(hosts);
  for (size_t h = 0; h < hosts; ++h) rng.push_back(core::make_stream(seed, "flow_generator", "h" + std::to_string(h)));
  auto gap = [&](size_t h) {
    const double u = double(rng[h]() >> 11) * 0x1.0p-53;  // [0, 1)
    return -std::log1p(-u) * mean_gap_ns[h];              // exponential, mean mean_gap_ns
  };
  // Merge the hosts' arrival streams in time order: (time, host), earliest first, ties by host.
  using next_arrival = std::pair<double, size_t>;
  std::priority_queue<next_arrival, std::vector<next_arrival>, std::greater<>> next;
  for (size_t h = 0; h < hosts; ++h) next.push({gap(h), h});
  std::vector<flow_entry> out;
  const double window = p.window_ns > 0 ? p.window_ns : INFINITY;
  const uint64_t count = p.flow_count > 0 ? p.flow_count : UINT64_MAX;
  while (out.size() < count) {
    const auto [t, h] = next.top();
    if (t >= window) break;
    if (t > k_max_flow_start_ns)
      throw config_error(where + ": the flows would arrive beyond " + fmt::format("{}", k_max_flow_start_ns / 1e3) +
                         " us of simulated time; lower flow_count or raise load");
    next.pop();
    flow_entry f;
    f.src = h;
    f.bytes = cdf.sample(rng[h], p.max_flow_bytes);
    f.dst = destination(h, rng[h]);
    f.start_ns = t;
    out.push_back(f);
    next.push({t + gap(h), h});
  }
  return out;
}

void write_flow_list(const std::string& path, const std::vector<flow_entry>& flows) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw config_error(path + ": cannot open the flow list for writing");
  f << "src,dst,bytes,start_ns\n";
  for (const flow_entry& e : flows) f << fmt::format("{},{},{},{}\n", e.src, e.dst, e.bytes, e.start_ns);
  f.flush();
  if (!f) throw config_error(path + ": writing the flow list failed");
}

}  // namespace fabricsim::traces
