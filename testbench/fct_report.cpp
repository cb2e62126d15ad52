// FCT slowdown: ideal FCT from the scenario's parameters, per-bucket percentiles of FCT / ideal.
#include "testbench/fct_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/units.h"
#include "sc_models/topology/fabric.h"

namespace fabricsim::testbench {

namespace {

using core::picoseconds;

// One link of the path as the model builds it (topology::tier_link, core::link).
struct path_link {
  core::bits_per_second rate;
  picoseconds latency;  // propagation + FEC
  uint64_t ser_ps(uint64_t wire_bytes) const {
    return core::serialization_time(core::bytes(wire_bytes), rate).value;
  }
};

// Bytes a RoCEv2 RDMA WRITE packet with `payload` bytes takes on the wire, as the SuperNIC frames it
// (core::packet::wire_size): Ethernet, IPv4, UDP, BTH, the RETH on the first packet, the payload padded to
// 4 bytes, ICRC, FCS, at least the minimum frame, then preamble/SFD and the inter-frame gap. On an
// InfiniBand fabric (switch.model quantum_x800, the NICs are HCAs): LRH, BTH, the RETH on the first packet,
// the padded payload, ICRC and VCRC, and nothing between packets (no preamble, gap or minimum size).
uint64_t write_wire_bytes(uint64_t payload, bool first, bool ib) {
  namespace h = core::header_bytes;
  const uint64_t pad = (4 - payload % 4) % 4;
  if (ib) return h::ib_lrh + h::bth + (first ? h::reth : 0) + payload + pad + h::icrc + h::ib_vcrc;
  const uint64_t frame = h::ethernet + h::ipv4 + h::udp + h::bth + (first ? h::reth : 0) + payload + pad + h::icrc + h::fcs;
  return std::max(frame, h::min_frame) + h::preamble_sfd + h::inter_frame_gap;
}

uint64_t ack_wire_bytes(bool ib) {
  namespace h = core::header_bytes;
  if (ib) return h::ib_lrh + h::bth + h::aeth + h::icrc + h::ib_vcrc;
  const uint64_t frame = h::ethernet + h::ipv4 + h::udp + h::bth + h::aeth + h::icrc + h::fcs;
  return std::max(frame, h::min_frame) + h::preamble_sfd + h::inter_frame_gap;
}

// What every switch of the path does with a frame on an idle fabric: its pipeline delay, and whether and
// after how many bytes an idle egress starts cut-through. Spectrum (sw::spectrum_switch): the five pipeline
// stages, `switch.forwarding`, `switch.cut_through_bytes`. Quantum-X800 (sw::quantum_switch::receive):
// `quantum.pipeline_ns`, `quantum.cut_through`, after the LRH and BTH (20 bytes); its ready time is never
// before the frame's last bit came in (`clamp`), which matters only for a pipeline shorter than a frame.
struct switch_timing {
  uint64_t pipeline_ps;
  bool cut_through;
  uint64_t cut_through_bytes;
  bool clamp;
};

switch_timing timing_of(const scenario& s) {
  if (s.switch_model.name == "quantum_x800")
    return {picoseconds::from_ns(s.quantum.pipeline_ns).value, s.quantum.cut_through,
            core::header_bytes::ib_lrh + core::header_bytes::bth, true};
  if (s.switch_model.name == "oq")  // sw::oq_switch::receive: store-and-forward, one pipeline latency
    return {picoseconds::from_ns(s.oq.latency_ns).value, false, 0, false};
  const sw::spectrum_params& sp = s.switch_;
  return {picoseconds::from_ns(sp.parse_ns + sp.classify_ns + sp.lookup_ns + sp.admit_ns + sp.schedule_ns).value,
          sp.forwarding == "cut_through", sp.cut_through_bytes, false};
}

// When the last bit of the last of `packets` frames reaches the far end of `path`, frame j put on the first
// link no earlier than `release(j)` and behind the frame before it (a NIC's transmitter: back to back when
// every release is 0), `wire(j)` the wire size of frame j. Every switch does what sw::spectrum_switch::receive
// (or sw::quantum_switch::receive) and its egress port do with an idle fabric: the pipeline delays the
// frame's departure; a frame that finds the egress idle (nothing queued, nothing on the wire) leaves
// cut-through when the egress is no faster than the ingress and the frame is longer than the bytes the
// parser needs; otherwise it waits for the frame before it. One pass per frame over the switches, keeping
// when each egress last ends: a second implementation of those rules, without queues, for one flow alone.
// `arrived(j, t)` is called with the time frame j's last bit reaches the far end.
template <class Wire, class Release, class Arrived>
uint64_t train_ps(const std::vector<path_link>& path, uint64_t packets, Wire wire, Release release,
                  const switch_timing& sw, Arrived arrived) {
  std::vector<uint64_t> busy_until(path.size(), 0);  // [k]: when link k's transmitter finishes its last frame
  uint64_t at = 0;
  for (uint64_t j = 0; j < packets; ++j) {
    const uint64_t w = wire(j);
    uint64_t end = std::max(busy_until[0], uint64_t(release(j))) + path[0].ser_ps(w);
    busy_until[0] = end;
    at = end + path[0].latency.value;  // last bit in at the next device
    for (size_t k = 1; k < path.size(); ++k) {
      const bool idle = busy_until[k] <= at;
      uint64_t ready = at + sw.pipeline_ps;
      if (sw.cut_through && idle && path[k].rate.value <= path[k - 1].rate.value && w > sw.cut_through_bytes) {
        const uint64_t early = path[k - 1].ser_ps(w - sw.cut_through_bytes);
        ready = sw.clamp ? std::max(ready - std::min(ready, early), at) : ready - early;
      }
      end = std::max(ready, busy_until[k]) + path[k].ser_ps(w);
      busy_until[k] = end;
      at = end + path[k].latency.value;
    }
    arrived(j, at);
  }
  return at;
}

const nic::supernic_params& nic_of(const scenario& s, size_t host) {
  const auto it = s.nic_overrides.find(topology::host_name(host));
  return it != s.nic_overrides.end() ? it->second : s.nic;
}

// Nearest-rank percentile of sorted values: the smallest value with at least q of them at or below it.
double percentile(const std::vector<double>& sorted, double q) {
  const size_t rank = size_t(std::ceil(q * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

std::string size_label(uint64_t b) {
  if (b >= 1000000 && b % 1000000 == 0) return std::to_string(b / 1000000) + "MB";
  if (b >= 1000 && b % 1000 == 0) return std::to_string(b / 1000) + "KB";
  return std::to_string(b) + "B";
}

struct bucket {
  uint64_t flows = 0;
  std::vector<double> slowdowns;
  double fct_sum_ns = 0.0;
};

nlohmann::json summarise(bucket& b) {
  nlohmann::json j;
  j["flows"] = b.flows;
  j["completed"] = b.slowdowns.size();
  if (b.slowdowns.empty()) {
    for (const char* k : {"p50_slowdown", "p95_slowdown", "p99_slowdown", "mean_slowdown", "min_slowdown",
                          "max_slowdown", "mean_fct_ns"})
      j[k] = nullptr;
    return j;
  }
  std::sort(b.slowdowns.begin(), b.slowdowns.end());
  double sum = 0.0;
  for (double x : b.slowdowns) sum += x;
  const double n = double(b.slowdowns.size());
  j["p50_slowdown"] = percentile(b.slowdowns, 0.50);
  j["p95_slowdown"] = percentile(b.slowdowns, 0.95);
  j["p99_slowdown"] = percentile(b.slowdowns, 0.99);
  j["mean_slowdown"] = sum / n;
  j["min_slowdown"] = b.slowdowns.front();
  j["max_slowdown"] = b.slowdowns.back();
  j["mean_fct_ns"] = b.fct_sum_ns / n;
  return j;
}

}  // namespace

std::vector<topology::tier> path_tiers(const topology::topology_params& topo, size_t src, size_t dst) {
  using topology::tier;
  const size_t a = topology::leaf_of(topo, src), b = topology::leaf_of(topo, dst);
  if (a == b) return {tier::host, tier::host};
  if (topo.kind == "three_tier" && a / topo.leaves != b / topo.leaves)  // leaves are numbered pod by pod
    return {tier::host, tier::leaf_spine, tier::spine_core, tier::spine_core, tier::leaf_spine, tier::host};
  if (topo.kind == "multi_site" && a / topo.leaves != b / topo.leaves)  // leaves are numbered site by site
    return {tier::host,       tier::leaf_spine, tier::spine_core, tier::inter_site,
            tier::spine_core, tier::leaf_spine, tier::host};
  return {tier::host, tier::leaf_spine, tier::leaf_spine, tier::host};
}

namespace {

std::vector<core::link_params> graph_path_links(const topology::fabric_layout& layout, size_t src, size_t dst) {
  // The fewest hops (the switches route on shortest paths, docs/topology.md) and, among paths of that many
  // hops, the least cable latency (propagation + FEC), never through another host: the fastest path the
  // routes allow, so that no flow alone beats its ideal whichever equal-cost port it hashes to. Ties: the
  // first found. Dijkstra on (hops, latency), compared lexicographically.
  const size_t devices = layout.hosts + layout.switches.size();
  std::vector<std::vector<size_t>> out(devices);
  for (size_t l = 0; l < layout.links(); ++l) out[layout.link_from(l)].push_back(l);
  using cost = std::pair<size_t, double>;  // hops, latency ns
  std::vector<cost> best(devices, {SIZE_MAX, 0.0});
  std::vector<size_t> via(devices, SIZE_MAX);  // the link of the best path into each device
  std::priority_queue<std::pair<cost, size_t>, std::vector<std::pair<cost, size_t>>, std::greater<>> queue;
  best[src] = {0, 0.0};
  queue.push({best[src], src});
  while (!queue.empty()) {
    const auto [c, u] = queue.top();
    queue.pop();
    if (c != best[u]) continue;  // a stale entry: u was reached more cheaply since
    if (u == dst) break;
    for (size_t l : out[u]) {
      const size_t to = layout.link_to(l);
      if (to < layout.hosts && to != dst) continue;
      const core::link_params& lp = layout.link_params(l);
      const cost next{c.first + 1, c.second + lp.propagation_ns + lp.fec_latency_ns};
      if (next < best[to]) {
        best[to] = next;
        via[to] = l;
        queue.push({next, to});
      }
    }
  }
  std::vector<core::link_params> path;
  for (size_t d = dst; d != src && via[d] != SIZE_MAX; d = layout.link_from(via[d]))
    path.push_back(layout.link_params(via[d]));
  std::reverse(path.begin(), path.end());
  return path;  // the graph reader refused a pair of hosts with no path between them
}

std::vector<core::link_params> path_links(const scenario& s, size_t src, size_t dst) {
  if (s.topology.kind == "graph" && s.topology.graph) return graph_path_links(*s.topology.graph, src, dst);
  // A dragonfly's shortest paths cross one to four routers (local, global, local; or two global cables
  // through a third group when that is fewer hops) and differ in length: taken from its wiring, as a graph's.
  if (s.topology.kind == "dragonfly" || s.topology.kind == "multi_site")
    return graph_path_links(topology::plan_fabric(s.topology, s.link), src, dst);
  std::vector<core::link_params> links;
  for (topology::tier t : path_tiers(s.topology, src, dst)) links.push_back(topology::tier_link(s.topology, s.link, t));
  return links;
}

}  // namespace

double ideal_fct_ns(const scenario& s, size_t src, size_t dst, uint64_t bytes, double posted_ns) {
  std::vector<path_link> path;
  for (const core::link_params& lp : path_links(s, src, dst))
    path.push_back(
        {core::bits_per_second::from_gbps(lp.rate_gbps), picoseconds::from_ns(lp.propagation_ns + lp.fec_latency_ns)});
  const switch_timing sw = timing_of(s);
  const bool ib = s.switch_model.name == "quantum_x800";
  const nic::supernic_params& tx = nic_of(s, src);
  const nic::supernic_params& rx = nic_of(s, dst);

  // The message's packets: path-MTU payloads, the remainder last; a zero-byte WRITE is one empty packet.
  // The path MTU, as fabric_setup::path_mtu picks it (a run whose ends disagree was refused at set-up).
  const uint64_t mtu = tx.path_mtu_bytes   ? tx.path_mtu_bytes
                       : rx.path_mtu_bytes ? rx.path_mtu_bytes
                                           : std::min(tx.mtu_bytes, rx.mtu_bytes);
  const uint64_t packets = std::max<uint64_t>(1, (bytes + mtu - 1) / mtu);
  const uint64_t last_payload = bytes - (packets - 1) * mtu;

  // The responder queues an ACK at every nic.ack_every_packets-th in-order packet and at the message's last,
  // to leave rx_latency after the packet that queued it; an ACK covers only the packets placed by the time it
  // is built, each rx_latency after it came in (supernic::queue_ack, next_ack). A trigger that finds an ACK
  // still queued does not queue another; it moves the QP's ACK due time, and when the queued ACK leaves
  // before that time another is queued for it: so the ACK that covers the last packet leaves rx_latency after
  // it came in. The ACKs before it matter too: one still in a switch's pipeline keeps that egress busy, and
  // the last ACK then cannot cut through (the Quantum switch's 30-byte ACKs are longer than its 20 cut-through
  // bytes; Spectrum's never are). `acks`: every ACK's departure from the responder, in order.
  const uint64_t rx_ps = picoseconds::from_ns(rx.rx_latency_ns).value;
  const uint64_t every = std::max<uint64_t>(1, rx.ack_every_packets);
  // The responder's reorder block (nic.clock_mhz, sc_models/nic/block_clock.h) takes an in-order packet at
  // the first edge at or after its arrival at which it is free, for one cycle, and the packet is processed
  // (its ACK queued) at the end of that cycle. Edge k is at ceil(k * 1e9 / kHz) ps.
  const uint64_t khz = uint64_t(std::llround(rx.clock_mhz * 1000.0));
  // Times below count from the first packet ready (posted + wqe latency); the edges from time 0.
  const uint64_t origin = uint64_t(std::llround(posted_ns * 1000.0)) + picoseconds::from_ns(tx.wqe_latency_ns).value;
  uint64_t free_edge = 0;
  auto processed = [&](uint64_t arrival_ps) {
    const uint64_t first = uint64_t(((unsigned __int128)(origin + arrival_ps) * khz + 999'999'999) / 1'000'000'000);
    const uint64_t start = std::max(first, free_edge);
    free_edge = start + 1;
    return uint64_t(((unsigned __int128)free_edge * 1'000'000'000 + khz - 1) / khz) - origin;
  };
  std::vector<uint64_t> acks;
  bool queued = false;
  uint64_t queued_ready = 0, due = 0;
  auto leave_until = [&](uint64_t now) {  // the queued ACK leaves when it is ready (the responder sends nothing else)
    while (queued && queued_ready <= now) {
      acks.push_back(queued_ready);
      queued = queued_ready < due;  // requeued for the due time
      queued_ready = due;
    }
  };
  train_ps(
      path, packets, [&](uint64_t j) { return write_wire_bytes(j + 1 < packets ? mtu : last_payload, j == 0, ib); },
      [](uint64_t) { return 0; }, sw,
      [&](uint64_t j, uint64_t arrived) {
        const uint64_t at = processed(arrived);
        if ((j + 1) % every != 0 && j + 1 != packets) return;
        leave_until(at);
        due = std::max(due, at + rx_ps);
        if (!queued) {
          queued = true;
          queued_ready = at + rx_ps;
        }
      });
  leave_until(UINT64_MAX);
  const std::vector<path_link> back(path.rbegin(), path.rend());
  const uint64_t ack_arrives = train_ps(
      back, acks.size(), [&](uint64_t) { return ack_wire_bytes(ib); }, [&](uint64_t j) { return acks[j]; }, sw,
      [](uint64_t, uint64_t) {});
  const uint64_t total = picoseconds::from_ns(tx.wqe_latency_ns).value + ack_arrives;
  return double(total) / 1000.0;
}

const std::vector<uint64_t>& fct_bucket_bounds() {
  static const std::vector<uint64_t> bounds = {10000, 100000, 1000000, 10000000, UINT64_MAX};
  return bounds;
}

void add_fct_report(const scenario& s, nlohmann::json& report) {
  const std::vector<uint64_t>& bounds = fct_bucket_bounds();
  std::vector<bucket> buckets(bounds.size());
  bucket all;
  const size_t hosts = s.topology.host_count();
  for (nlohmann::json& f : report["flows"]) {
    // The ideal is a WRITE's: an entry that names another operation is left out.
    if (f.contains("op") && f["op"].is_string() && f["op"].get<std::string>() != "write") continue;
    const uint64_t bytes = f["bytes"].get<uint64_t>();
    const size_t bi = size_t(std::lower_bound(bounds.begin(), bounds.end(), bytes) - bounds.begin());
    bucket& b = buckets[std::min(bi, bounds.size() - 1)];
    ++b.flows;
    ++all.flows;
    if (!f.value("completed", false) || !f.contains("fct_ns")) continue;
    const auto src = topology::host_index(f["src"].get<std::string>(), hosts);
    const auto dst = topology::host_index(f["dst"].get<std::string>(), hosts);
    if (!src || !dst) continue;
    const double ideal = ideal_fct_ns(s, *src, *dst, bytes, f.value("posted_ns", 0.0));
    const double fct = f["fct_ns"].get<double>();
    const double slowdown = fct / ideal;
    f["ideal_fct_ns"] = ideal;
    f["slowdown"] = slowdown;
    b.slowdowns.push_back(slowdown);
    b.fct_sum_ns += fct;
    all.slowdowns.push_back(slowdown);
    all.fct_sum_ns += fct;
  }
  nlohmann::json out;
  nlohmann::json list = nlohmann::json::array();
  uint64_t lower = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    nlohmann::json j = summarise(buckets[i]);
    const bool open = bounds[i] == UINT64_MAX;
    j["bucket"] = open ? ">" + size_label(lower) : i == 0 ? "<=" + size_label(bounds[i])
                                                         : size_label(lower) + "-" + size_label(bounds[i]);
    j["min_bytes"] = lower + (i > 0 ? 1 : 0);
    j["max_bytes"] = open ? nlohmann::json(nullptr) : nlohmann::json(bounds[i]);
    list.push_back(std::move(j));
    lower = bounds[i];
  }
  out["buckets"] = std::move(list);
  out["overall"] = summarise(all);
  report["fct"] = std::move(out);
}

std::string format_fct_table(const nlohmann::json& r, uint64_t min_completed) {
  if (!r.contains("fct") || r["fct"]["overall"]["completed"].get<uint64_t>() < min_completed) return "";
  auto num = [](const nlohmann::json& v) { return v.is_null() ? std::string("-") : fmt::format("{:.2f}", v.get<double>()); };
  std::string out = fmt::format("{:<12} {:>7} {:>9} {:>8} {:>8} {:>8} {:>12}\n", "FCT slowdown", "flows", "completed",
                                "p50", "p95", "p99", "mean fct us");
  auto row = [&](const std::string& label, const nlohmann::json& b) {
    out += fmt::format("{:<12} {:>7} {:>9} {:>8} {:>8} {:>8} {:>12}\n", label, b["flows"].get<uint64_t>(),
                       b["completed"].get<uint64_t>(), num(b["p50_slowdown"]),
                       num(b["p95_slowdown"]), num(b["p99_slowdown"]),
                       b["mean_fct_ns"].is_null() ? std::string("-")
                                                  : fmt::format("{:.2f}", b["mean_fct_ns"].get<double>() / 1e3));
  };
  for (const nlohmann::json& b : r["fct"]["buckets"]) row(b["bucket"].get<std::string>(), b);
  row("overall", r["fct"]["overall"]);
  return out + "(slowdown: FCT over the same WRITE alone on the idle fabric; docs/report.md, `fct`)\n\n";
}

}  // namespace fabricsim::testbench
