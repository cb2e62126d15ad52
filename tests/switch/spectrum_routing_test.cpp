// Egress choice of the Spectrum-4 switch among equal-cost ports: ECMP is a fixed function of the 5-tuple
// that spreads flows uniformly; adaptive routing takes the least-loaded port that is not paused, and keeps
// the hashed port while it is under the threshold.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/sc_fork.h"
#include "tests/support/spectrum_rig.h"

namespace fabricsim::test {
namespace spectrum_routing_test {

using nlohmann::json;

const core::ip_address anycast = core::ip_address::v4(0x0a010001);  // reached over several ports

struct flow {
  uint32_t src;
  uint16_t sport;
};

// ---- ECMP ----------------------------------------------------------------------------------------------

constexpr unsigned ecmp_ports = 16;  // ports 0-15 are the equal-cost group, frames enter on port 16

// Sends the frames (one per entry, in order) to `anycast` and returns the egress port of each, in order.
std::vector<unsigned> run_ecmp(const std::vector<flow>& frames) {
  const child_result c = run_in_child([&] {
    spectrum_rig rig(sw::spectrum_params{}, ecmp_ports + 1);
    std::vector<unsigned> group;
    for (unsigned i = 0; i < ecmp_ports; ++i) group.push_back(i);
    rig.sw.add_route(anycast, group);
    for (size_t i = 0; i < frames.size(); ++i) {
      core::packet* p = rig.frame(anycast, 0, 0, 0, frames[i].sport, core::ip_address::v4(frames[i].src));
      p->id = i;  // the sink reports frames by this index
      rig.sw.receive(p, ecmp_ports);
    }
    rig.run();
    std::vector<unsigned> port(frames.size(), ~0u);
    for (const arrival& a : rig.sink.log) port.at(a.frame.id) = a.port;
    return json(port).dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  return c.ok ? json::parse(c.output).get<std::vector<unsigned>>() : std::vector<unsigned>(frames.size(), ~0u);
}

std::vector<flow> random_flows(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<flow> f(n);
  for (auto& x : f) x = {uint32_t(0x0a000000 | (g() & 0xffffff)), uint16_t(g())};
  return f;
}

TEST(spectrum_ecmp, egress_is_a_function_of_the_five_tuple_whatever_the_order) {
  const std::vector<flow> flows = random_flows(300, 7);
  std::vector<flow> frames;
  for (int rep = 0; rep < 6; ++rep) frames.insert(frames.end(), flows.begin(), flows.end());
  std::shuffle(frames.begin(), frames.end(), std::mt19937_64(11));
  std::vector<flow> reordered = frames;
  std::reverse(reordered.begin(), reordered.end());
  const std::vector<unsigned> a = run_ecmp(frames), b = run_ecmp(reordered);
  std::map<std::pair<uint32_t, uint16_t>, unsigned> port_of;
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_LT(a[i], ecmp_ports);
    const auto [it, fresh] = port_of.emplace(std::make_pair(frames[i].src, frames[i].sport), a[i]);
    EXPECT_EQ(it->second, a[i]) << "frame " << i << " of a flow left by another port";
  }
  for (size_t i = 0; i < reordered.size(); ++i)
    EXPECT_EQ(port_of.at({reordered[i].src, reordered[i].sport}), b[i]) << "arrival order changed the port";
}

TEST(spectrum_ecmp, the_udp_source_port_moves_a_flow) {
  // One address pair, 256 source ports: a uniform hash misses one of 16 ports with probability
  // 16 (15/16)^256 < 1e-6, and keeps the port of the previous source port about 1/16 of the time.
  std::vector<flow> frames;
  for (unsigned s = 0; s < 256; ++s) frames.push_back({0x0a000001, uint16_t(49152 + s)});
  const std::vector<unsigned> port = run_ecmp(frames);
  EXPECT_EQ(std::set<unsigned>(port.begin(), port.end()).size(), ecmp_ports);
  unsigned same = 0;
  for (size_t i = 1; i < port.size(); ++i) same += port[i] == port[i - 1];
  EXPECT_LT(same, 40u);  // mean 255/16 = 16, sd 3.9
}

TEST(spectrum_ecmp, random_flows_spread_uniformly_by_chi_square) {
  const size_t n = 16000;
  const std::vector<unsigned> port = run_ecmp(random_flows(n, 2024));
  std::vector<double> count(ecmp_ports, 0);
  for (unsigned p : port) {
    ASSERT_LT(p, ecmp_ports);
    ++count[p];
  }
  const double expected = double(n) / ecmp_ports;
  double chi2 = 0;
  for (double c : count) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 37.70);  // chi-square, 15 degrees of freedom, p = 0.001
}

// ---- adaptive routing ----------------------------------------------------------------------------------

// Ports 1-4 are the adaptive group; frames enter on port 0; host k is behind port k alone, so frames to it
// preload port k. The kernel never runs: nothing drains, and the port a probe took is the one whose depth
// grew.
constexpr unsigned first_ar = 1, ar_ports = 4;
constexpr uint64_t preload_wire = 82 + 1000, probe_wire = 84;

struct ar_setup {
  std::string routing = "adaptive";
  uint64_t threshold_bytes = 0;
  std::array<unsigned, ar_ports> preload_frames{};
  std::vector<std::pair<unsigned, unsigned>> paused;  // (port, class) frozen before the probes
  unsigned probes = 200;
};

struct ar_result {
  std::vector<unsigned> chosen;                          // per probe
  std::vector<std::array<uint64_t, ar_ports>> before;  // class-0 depths of ports 1-4 before each probe
  uint64_t decisions = 0, rerouted = 0;
};

ar_result run_ar(const ar_setup& s) {
  const child_result c = run_in_child([&] {
    sw::spectrum_params sp;
    sp.routing = s.routing;
    sp.ar_threshold_bytes = s.threshold_bytes;
    spectrum_rig rig(sp, first_ar + ar_ports);
    rig.route_each_host();
    std::vector<unsigned> group;
    for (unsigned k = 0; k < ar_ports; ++k) group.push_back(first_ar + k);
    rig.sw.add_route(anycast, group);
    for (unsigned k = 0; k < ar_ports; ++k)
      for (unsigned i = 0; i < s.preload_frames[k]; ++i) rig.sw.receive(rig.frame(rig.host(first_ar + k), 0, 1000), 0);
    for (auto [port, tc] : s.paused) rig.sw.port(port).pause(tc, frozen);
    json out;
    for (unsigned i = 0; i < s.probes; ++i) {
      std::array<uint64_t, ar_ports> d{};
      for (unsigned k = 0; k < ar_ports; ++k) d[k] = rig.sw.port(first_ar + k).depth(0);
      rig.sw.receive(rig.frame(anycast, 0, 0, 0, uint16_t(1000 + i)), 0);
      int chosen = -1;
      for (unsigned k = 0; k < ar_ports; ++k)
        if (rig.sw.port(first_ar + k).depth(0) != d[k]) chosen = int(first_ar + k);
      out["chosen"].push_back(chosen);
      out["before"].push_back(d);
    }
    out["decisions"] = rig.counter("sw0", "ar_decisions");
    out["rerouted"] = rig.counter("sw0", "ar_rerouted");
    return out.dump();
  });
  if (!c.ok) ADD_FAILURE() << c.output;
  if (!c.ok) return {};
  const json r = json::parse(c.output);
  ar_result res;
  for (const auto& x : r["chosen"]) res.chosen.push_back(x.get<int>() < 0 ? ~0u : x.get<unsigned>());
  for (const auto& x : r["before"]) res.before.push_back(x.get<std::array<uint64_t, ar_ports>>());
  res.decisions = r["decisions"];
  res.rerouted = r["rerouted"];
  return res;
}

// The ECMP choice for each probe: the same switch name, seed and group, routed by hash.
std::vector<unsigned> ecmp_choices(unsigned probes) {
  ar_setup s;
  s.routing = "ecmp";
  s.preload_frames = {10, 3, 7, 5};  // ignored by ECMP
  s.probes = probes;
  return run_ar(s).chosen;
}

bool is_paused(const ar_setup& s, unsigned port) {
  return std::find(s.paused.begin(), s.paused.end(), std::make_pair(port, 0u)) != s.paused.end();
}

// Checks every probe took the least-loaded port among the eligible ones; returns how many left the ECMP port.
unsigned expect_least_loaded(const ar_setup& s, const ar_result& r, const std::vector<unsigned>& hashed) {
  unsigned moved = 0;
  for (size_t i = 0; i < r.chosen.size(); ++i) {
    uint64_t least = UINT64_MAX;
    for (unsigned k = 0; k < ar_ports; ++k)
      if (!is_paused(s, first_ar + k)) least = std::min(least, r.before[i][k]);
    const unsigned c = r.chosen[i];
    EXPECT_TRUE(c >= first_ar && c < first_ar + ar_ports) << "probe " << i << " went nowhere";
    if (!(c >= first_ar && c < first_ar + ar_ports)) continue;
    EXPECT_FALSE(is_paused(s, c)) << "probe " << i << " sent to port " << c << ", paused for its class";
    EXPECT_EQ(r.before[i][c - first_ar], least) << "probe " << i << " sent to port " << c;
    moved += c != hashed.at(i);
  }
  return moved;
}

TEST(spectrum_adaptive, picks_the_least_loaded_port) {
  ar_setup s;
  s.preload_frames = {10, 3, 7, 5};
  const ar_result r = run_ar(s);
  ASSERT_EQ(r.chosen.size(), s.probes);
  // The first probes fill port 2 (3 frames) up to port 4's depth (5 frames): 2164 / 84 = 26 probes.
  for (unsigned i = 0; i < (2 * preload_wire) / probe_wire; ++i) EXPECT_EQ(r.chosen[i], 2u) << "probe " << i;
  const unsigned moved = expect_least_loaded(s, r, ecmp_choices(s.probes));
  EXPECT_EQ(r.decisions, s.probes);  // four eligible ports each time
  EXPECT_EQ(r.rerouted, moved);
  EXPECT_GT(moved, 0u);
}

TEST(spectrum_adaptive, never_picks_a_port_paused_for_the_class) {
  ar_setup s;
  s.preload_frames = {10, 3, 7, 5};
  s.paused = {{2, 0}, {4, 0}, {3, 3}};  // port 3 paused for another class stays eligible
  const ar_result r = run_ar(s);
  ASSERT_EQ(r.chosen.size(), s.probes);
  expect_least_loaded(s, r, ecmp_choices(s.probes));
  EXPECT_EQ(r.chosen[0], 3u);  // 7 frames against port 1's 10
  EXPECT_EQ(r.decisions, s.probes);
}

TEST(spectrum_adaptive, a_single_eligible_port_takes_everything_however_deep) {
  ar_setup s;
  s.preload_frames = {10, 3, 7, 5};
  s.paused = {{2, 0}, {3, 0}, {4, 0}};
  const ar_result r = run_ar(s);
  const std::vector<unsigned> hashed = ecmp_choices(s.probes);
  unsigned off_hash = 0;
  for (size_t i = 0; i < r.chosen.size(); ++i) {
    EXPECT_EQ(r.chosen[i], 1u);
    off_hash += hashed[i] != 1u;
  }
  EXPECT_EQ(r.decisions, 0u);  // no choice was made among two or more
  EXPECT_EQ(r.rerouted, off_hash);
}

TEST(spectrum_adaptive, the_hashed_port_is_kept_while_under_the_threshold) {
  ar_setup s;
  s.threshold_bytes = 40'000;
  // Port 1 above the threshold; ports 2-4 stay below it even if every probe joined one of them.
  s.preload_frames = {50, 3, 7, 5};
  ASSERT_GT(50 * preload_wire, s.threshold_bytes);
  ASSERT_LE(7 * preload_wire + s.probes * probe_wire, s.threshold_bytes);
  const ar_result r = run_ar(s);
  const std::vector<unsigned> hashed = ecmp_choices(s.probes);
  ASSERT_EQ(r.chosen.size(), s.probes);
  unsigned hashed_to_deep = 0;
  for (size_t i = 0; i < r.chosen.size(); ++i) {
    if (hashed[i] != 1u) {
      EXPECT_EQ(r.chosen[i], hashed[i]) << "probe " << i << " left a hashed port under the threshold";
      continue;
    }
    ++hashed_to_deep;
    const auto& d = r.before[i];
    EXPECT_EQ(d[r.chosen[i] - first_ar], std::min({d[0], d[1], d[2], d[3]})) << "probe " << i;
  }
  EXPECT_GT(hashed_to_deep, 0u);
  EXPECT_EQ(r.decisions, hashed_to_deep);  // only those went past the threshold test
  EXPECT_EQ(r.rerouted, hashed_to_deep);
}

// ---- bad route tables ------------------------------------------------------------------------------------

// A route the switch cannot use is refused with core::require's form, "instance: message", naming the switch:
// no egress port, a port past the switch's last, a second route for one destination.
TEST(SpectrumRouting, a_bad_route_is_refused_naming_the_switch_and_the_fault) {
  const child_result c = run_in_child([&] {
    spectrum_rig rig(sw::spectrum_params{}, 4);
    std::string caught;
    const auto attempt = [&](const core::ip_address& dst, std::vector<unsigned> ports) {
      try {
        rig.sw.add_route(dst, std::move(ports));
        caught += "accepted\n";
      } catch (const core::config_error& e) {
        caught += std::string(e.what()) + "\n";
      }
    };
    attempt(anycast, {});
    attempt(anycast, {1, 99});
    attempt(anycast, {0, 1});
    attempt(anycast, {2});
    return caught;
  });
  ASSERT_TRUE(c.ok) << c.output;
  EXPECT_EQ(c.output,
            "sw0: route with no egress port\n"
            "sw0: route to unconnected port 99\n"
            "accepted\n"
            "sw0: two routes for one destination\n");
}

// Routes to the fabric's hosts (10.0.0.1 on) are kept by host number and every other destination hashed
// (spectrum_switch::lookup): both kinds route, both refuse a second route, and an address of neither
// (a host number in a gap of the table, one past its end, one past the number limit, an address below
// 10.0.0.1, an IPv6 address) has no route. Each destination's port is set by hand below.
TEST(SpectrumRouting, host_routes_by_number_and_other_routes_hashed_both_route_and_refuse_a_second) {
  const child_result c = run_in_child([&] {
    spectrum_rig rig(sw::spectrum_params{}, 8);
    core::ip_address v6{};
    v6.octets = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x07};
    const core::ip_address past_limit = core::ip_address::v4(0x0a000001 + (1u << 20));  // host number 2^20
    const core::ip_address below = core::ip_address::v4(0x09000001);
    const std::vector<std::pair<core::ip_address, unsigned>> routed = {
        {spectrum_rig::host(0), 1}, {spectrum_rig::host(5), 2}, {past_limit, 3}, {below, 4}, {v6, 5}};
    std::string out;
    for (const auto& [dst, port] : routed) rig.sw.add_route(dst, {port});
    for (const auto& [dst, port] : routed) {
      try {
        rig.sw.add_route(dst, {6});
        out += "accepted\n";
      } catch (const core::config_error& e) {
        out += std::string(e.what()) + "\n";
      }
    }
    // Frames to the routed destinations (ids 0-4), then to host 3 (a gap below host 5), host 6 (past the
    // table's last host) and host 2^20 + 1 (past the limit, not routed): ids 5-7.
    std::vector<core::ip_address> dsts;
    dsts.reserve(routed.size() + 3);
    for (const auto& r : routed) dsts.push_back(r.first);
    dsts.push_back(spectrum_rig::host(3));
    dsts.push_back(spectrum_rig::host(6));
    dsts.push_back(core::ip_address::v4(0x0a000002 + (1u << 20)));
    for (size_t i = 0; i < dsts.size(); ++i) {
      core::packet* p = rig.frame(dsts[i], 0, 0);
      p->id = i;
      rig.sw.receive(p, 7);
    }
    rig.run();
    std::map<uint64_t, unsigned> port_of;  // by frame id: the ports' arrivals may come in any order
    for (const arrival& a : rig.sink.log) port_of[a.frame.id] = a.port;
    for (const auto& [id, port] : port_of) out += std::to_string(id) + "->" + std::to_string(port) + "\n";
    return out;
  });
  ASSERT_TRUE(c.ok) << c.output;
  std::string expected;  // each of the five second routes refused, then each routed frame at its own port
  for (int k = 0; k < 5; ++k) expected += "sw0: two routes for one destination\n";
  EXPECT_EQ(c.output, expected + "0->1\n1->2\n2->3\n3->4\n4->5\n");
}

}  // namespace spectrum_routing_test
}  // namespace fabricsim::test
