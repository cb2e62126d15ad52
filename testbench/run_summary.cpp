// Lines around a run's table: the fabric's capacity and the files a run's taps wrote (testbench/run_summary.h).
#include "testbench/run_summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "sc_models/topology/dragonfly.h"
#include "testbench/nvlink_run.h"

namespace fabricsim::testbench {

fabric_capacity capacity_of(const topology::topology_params& t) {
  fabric_capacity c;
  const double up = t.uplink_rate_gbps();
  c.host_tier_gbps = double(t.host_count()) * t.link_gbps;
  c.leaf_oversubscription = t.leaf_oversubscription();
  double narrowest = c.host_tier_gbps;
  if (t.kind == "graph" && t.graph) {  // the uplinks of every switch with hosts, from the file's cables
    const topology::fabric_layout& l = *t.graph;
    std::vector<bool> leaf(l.switches.size(), false);
    for (size_t h = 0; h < l.hosts; ++h) leaf[l.host_leaf[h]] = true;
    c.leaf_uplink_gbps = 0.0;
    for (const auto& cab : l.cables)
      if (cab.a >= l.hosts)
        c.leaf_uplink_gbps += cab.ab.rate_gbps * (double(leaf[cab.a - l.hosts]) + double(leaf[cab.b - l.hosts]));
    if (c.leaf_uplink_gbps > 0.0) narrowest = std::min(narrowest, c.leaf_uplink_gbps);
  } else if (t.kind == "dragonfly") {  // every router is a leaf: its local and global cables; the global tier
    const topology::dragonfly_shape d = topology::dragonfly_of(t);
    c.leaf_uplink_gbps = double(d.routers() * (d.a - 1 + d.h)) * up;
    c.core_tier_gbps = double(d.global_cables()) * up;
    narrowest = std::min({narrowest, c.leaf_uplink_gbps, c.core_tier_gbps});
  } else if (t.kind == "multi_site") {  // the long links between sites are the narrowest tier in practice
    c.leaf_uplink_gbps = double(t.leaf_count() * t.spines * t.links_per_spine) * up;
    const double far = t.inter_site_gbps > 0.0 ? t.inter_site_gbps : up;
    c.core_tier_gbps = double(t.sites * (t.sites - 1) / 2 * t.site_edges * t.inter_site_links) * far;
    narrowest = std::min({narrowest, c.leaf_uplink_gbps, 2.0 * c.core_tier_gbps});
  } else if (t.kind != "single_switch") {
    c.leaf_uplink_gbps = double(t.leaf_count() * t.spines * t.links_per_spine) * up;
    narrowest = std::min(narrowest, c.leaf_uplink_gbps);
  }
  if (t.kind == "three_tier") {
    c.core_tier_gbps = double(t.pods * t.cores) * up;  // spine s of each pod: one cable to each core of its plane
    c.spine_oversubscription = double(t.leaves * t.links_per_spine) / (double(t.cores) / double(t.spines));
    narrowest = std::min(narrowest, c.core_tier_gbps);
  }
  c.bisection_gbps = narrowest / 2.0;
  return c;
}

namespace {
std::string rate(double gbps) {
  return gbps >= 1000.0 ? fmt::format("{:g} Tb/s", gbps / 1000.0) : fmt::format("{:g} Gb/s", gbps);
}
std::string ratio(double r) { return fmt::format("{:g}:1", r); }
}  // namespace

std::string fabric_line(const topology::topology_params& t) {
  const fabric_capacity c = capacity_of(t);
  std::string shape;
  if (t.kind == "single_switch")
    shape = fmt::format("one switch, {} hosts", t.hosts);
  else if (t.kind == "graph")
    shape = fmt::format("{}: {} switches, {} hosts", t.file, t.switch_count(), t.host_count());
  else if (t.kind == "leaf_spine")
    shape = fmt::format("{} leaves x {} hosts, {} spines", t.leaves, t.hosts_per_leaf, t.spines);
  else if (t.kind == "dragonfly")
    shape = fmt::format("{} groups of {} routers x {} hosts, {} global cables per router", topology::dragonfly_of(t).g,
                        t.routers_per_group, t.hosts_per_router, t.global_links_per_router);
  else if (t.kind == "multi_site")
    shape = fmt::format(
        "{} sites of {} leaves x {} hosts and {} spines, {} edges each, {} x {:g} km cables per "
        "pair of edges",
        t.sites, t.leaves, t.hosts_per_leaf, t.spines, t.site_edges, t.inter_site_links, t.inter_site_km);
  else if (t.kind == "three_tier")
    shape = fmt::format("{} pods of {} leaves x {} hosts and {} spines, {} cores", t.pods, t.leaves, t.hosts_per_leaf,
                        t.spines, t.cores);
  else
    shape = fmt::format("{} groups x {} rails of leaves with {} servers each, {} spines", t.groups, t.rails,
                        t.hosts_per_leaf, t.spines);
  if (t.kind != "single_switch" && t.kind != "graph" && t.kind != "dragonfly" && t.links_per_spine > 1)
    shape += fmt::format(" ({} cables each)", t.links_per_spine);
  std::string out = fmt::format("fabric: {}, {}; hosts {}", t.kind, shape, rate(t.link_gbps));
  if (t.kind != "single_switch" && t.kind != "graph") out += fmt::format(", uplinks {}", rate(t.uplink_rate_gbps()));
  out += fmt::format("; leaf oversubscription {}", ratio(c.leaf_oversubscription));
  if (t.kind == "three_tier") out += fmt::format(", spine {}", ratio(c.spine_oversubscription));
  out += fmt::format("; bisection {} (half the narrowest tier)\n", rate(c.bisection_gbps));
  return out;
}

std::string collective_fabric_header(const std::vector<scenario>& runs, const compare_params& compare) {
  if (runs.empty() || runs[0].workload.kind != "collective") return "";
  if (runs_in_nvlink_domains(runs[0])) return nvlink_fabric_line(runs[0].nvlink);
  const bool varies = !compare.empty() && compare.key.rfind("topology.", 0) == 0;
  if (!varies) return fabric_line(runs[0].topology);
  std::string out;
  for (size_t i = 0; i < runs.size() && i < compare.values.size(); ++i)
    out += compare.key + "=" + compare.values[i] + ": " + fabric_line(runs[i].topology);
  return out;
}

std::string tap_lines(const nlohmann::json& report, const std::string& prefix) {
  std::string out;
  if (!report.contains("taps")) return out;
  for (const auto& t : report.at("taps"))
    out += fmt::format("{}tap: wrote {} ({} frames leaving on {})\n", prefix, t.at("file").get<std::string>(),
                       t.at("frames").get<uint64_t>(), t.at("link").get<std::string>());
  return out;
}

}  // namespace fabricsim::testbench

namespace fabricsim::testbench {

std::string comparison_tap_lines(const nlohmann::json& comparison) {
  std::string out;
  for (const auto& run : comparison.at("runs"))
    out += tap_lines(run.at("report"),
                     comparison.at("compare").get<std::string>() + "=" + run.at("value").get<std::string>() + ": ");
  return out;
}

}  // namespace fabricsim::testbench
