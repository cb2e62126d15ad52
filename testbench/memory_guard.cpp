// Refuses a run whose model would not fit in memory, from the memory its first hosts took and from what its
// traffic and report can add (memory_guard.h).
#include "testbench/memory_guard.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sc_models/core/packet.h"
#include "sc_models/core/packet_pool.h"
#include "sc_models/core/params.h"
#include "sc_models/core/stats.h"
#include "sc_models/topology/fabric.h"
#include "sc_models/topology/multi_site.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

namespace {

uint64_t physical_bytes() { return uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)); }

// The keys that set the host count of each topology kind (topology_params::host_count).
std::string host_keys(const std::string& kind) {
  if (kind == "leaf_spine") return "topology.leaves x topology.hosts_per_leaf";
  if (kind == "three_tier") return "topology.pods x topology.leaves x topology.hosts_per_leaf";
  if (kind == "rail_optimized") return "topology.groups x topology.hosts_per_leaf x topology.rails";
  if (kind == "multi_site") return "topology.sites x topology.leaves x topology.hosts_per_leaf";
  if (kind == "dragonfly") return "topology.dragonfly_groups x topology.routers_per_group x topology.hosts_per_router";
  if (kind == "graph") return "the hosts of topology.graph_file";
  return "topology.hosts";
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

const char* const advice =
    "simulate fewer hosts, split the fabric across MPI ranks (docs/scale_out.md), or raise run.memory_limit_mib";

}  // namespace

uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

uint64_t memory_limit_bytes(const scenario& s) {
  return s.run.memory_limit_mib > 0 ? uint64_t(s.run.memory_limit_mib) << 20 : physical_bytes() / 4 * 3;
}

std::string memory_limit_text(const scenario& s) {
  if (s.run.memory_limit_mib > 0) return "run.memory_limit_mib (" + std::to_string(s.run.memory_limit_mib) + " MiB)";
  return "3/4 of this machine's " + mib(physical_bytes()) + " (run.memory_limit_mib 0)";
}

memory_guard::memory_guard(const scenario& s, size_t to_build)
    : m_s(s), m_to_build(to_build), m_start(resident_bytes()), m_limit(memory_limit_bytes(s)) {}

void memory_guard::host_built(size_t built) {
  if (built < m_next || built >= m_to_build || m_start == 0) return;
  m_next = built * 2;
  const uint64_t now = resident_bytes();
  const uint64_t per_host = now > m_start ? (now - m_start) / built : 0;
  m_projected = m_start + per_host * m_to_build;
  if (m_projected <= m_limit) return;
  const std::string& kind = m_s.topology.kind;
  throw core::config_error(m_s.source + ": building " + std::to_string(m_to_build) + " hosts (" + host_keys(kind) +
                           ") would take at least " + mib(m_projected) + " (" + std::to_string(per_host >> 10) +
                           " KiB per host over the first " + std::to_string(built) +
                           " built; switches, links and queue pairs not counted), more than " + memory_limit_text(m_s) +
                           "; " + advice);
}

void memory_guard::check_run(const scenario& s, size_t hosts, std::vector<memory_term> terms) {
  const uint64_t now = resident_bytes();
  const uint64_t limit = memory_limit_bytes(s);
  const std::string run = std::to_string(hosts) + " hosts (" + host_keys(s.topology.kind) + ")";
  if (now > limit)
    throw core::config_error(s.source + ": the set-up of " + run + " took " + mib(now) +
                             " before the first event, more than " + memory_limit_text(s) + "; " + advice);
  uint64_t total = now;
  for (const memory_term& t : terms) total += t.bytes;
  if (total <= limit) return;
  std::stable_sort(terms.begin(), terms.end(),
                   [](const memory_term& a, const memory_term& b) { return a.bytes > b.bytes; });
  std::string parts;
  uint64_t small = 0;
  for (const memory_term& t : terms) {
    if (t.bytes >= (uint64_t(1) << 20))
      parts += ", " + mib(t.bytes) + " for " + t.what + " (" + t.key + ")";
    else
      small += t.bytes;
  }
  if (small > 0) parts += ", " + std::to_string((small + 1023) >> 10) + " KiB for the rest";
  throw core::config_error(s.source + ": the run of " + run + " would need up to " + mib(total) + ": " + mib(now) +
                           " held once set up" + parts + "; more than " + memory_limit_text(s) +
                           "; the largest term is " + terms.front().key + ": lower it, or " + advice);
}

void memory_guard::check_run(const scenario& s, topology::fabric& fab, uint64_t report_entries,
                             std::vector<memory_term> extra) {
  std::vector<memory_term> terms = in_flight_terms(s, fab);
  if (report_entries > 0) terms.push_back(report_term(report_entries));
  for (memory_term& t : extra) terms.push_back(std::move(t));
  check_run(s, fab.hosts().size(), std::move(terms));
}

uint64_t descriptor_bytes(bool telemetry) {
  const uint64_t slots = 2 * sizeof(core::packet*) + 2 * 24;
  return sizeof(core::packet) + slots +
         (telemetry ? sizeof(core::packet_pool::telemetry_records) + 2 * sizeof(uint32_t) : 0);
}

uint64_t smallest_data_frame(const scenario& s) {
  auto payload_of = [](const nic::supernic_params& n) {
    return n.path_mtu_bytes > 0 ? std::min(n.path_mtu_bytes, n.mtu_bytes) : n.mtu_bytes;
  };
  uint64_t payload = payload_of(s.nic);
  for (const auto& [host, n] : s.nic_overrides) payload = std::min(payload, payload_of(n));
  const std::string& kind = s.workload.kind;
  if (kind == "permutation" || kind == "all_to_all" || kind == "incast")
    payload = std::min(payload, s.workload.message_bytes);
  namespace hb = core::header_bytes;
  if (s.switch_model.infiniband() || s.nic.link_layer == "infiniband")
    return payload + hb::ib_lrh + hb::bth + hb::icrc + hb::ib_vcrc;
  return std::max(payload + hb::ethernet + hb::ipv4 + hb::udp + hb::bth + hb::icrc + hb::fcs, hb::min_frame);
}

namespace {

std::string format_us(double us) {
  std::ostringstream o;
  o << us << " us";
  return o.str();
}

// "1 switch", "3 switches".
std::string count(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Adds one term of `frames` data frames, plus one ACK per nic.ack_every_packets of them.
void add_frames(std::vector<memory_term>& terms, const scenario& s, uint64_t frames, std::string what, std::string key,
                uint64_t per_descriptor) {
  if (frames == 0) return;
  const uint64_t every = std::max<uint64_t>(1, s.nic.ack_every_packets);
  const uint64_t descriptors = frames + (frames + every - 1) / every;
  terms.push_back({std::move(what), std::move(key), descriptors * per_descriptor});
}

// The switches built here: bytes each can buffer, by the key that sets it.
void switch_terms(std::vector<memory_term>& terms, const scenario& s, topology::fabric& fab, uint64_t frame,
                  uint64_t per_descriptor) {
  const std::string& model = s.switch_model.name;
  uint64_t switches = 0, edges = 0, frames = 0, edge_frames = 0, ports = 0;
  for (size_t i = 0; i < fab.switches().size(); ++i) {
    if (!fab.switches()[i]) continue;
    const uint64_t n = fab.switches()[i]->ports();
    ports += n;
    if (model == "oq") {
      frames += n * ((s.oq.port_buffer_bytes + frame - 1) / frame);
    } else if (model == "quantum_x800") {
      frames += n * s.quantum.data_vls * ((s.quantum.credit.vl_buffer_bytes + frame - 1) / frame);
    } else if (topology::is_site_edge(fab.switch_name(i))) {
      ++edges;
      edge_frames += (s.topology.edge_buffer_bytes + frame - 1) / frame;
      continue;
    } else {
      frames += (s.switch_.buffer_bytes + frame - 1) / frame;
    }
    ++switches;
  }
  const std::string of = " of " + std::to_string(frame) + "-byte frames";
  if (model == "oq")
    add_frames(terms, s, frames, "packets in the buffers of " + count(ports, "switch port", "switch ports") + of,
               "oq.port_buffer_bytes", per_descriptor);
  else if (model == "quantum_x800")
    add_frames(terms, s, frames, "packets in the VL buffers of " + count(ports, "switch port", "switch ports") + of,
               "quantum.vl_buffer_bytes", per_descriptor);
  else
    add_frames(terms, s, frames, "packets in the shared buffers of " + count(switches, "switch", "switches") + of,
               "switch.buffer_bytes", per_descriptor);
  add_frames(terms, s, edge_frames, "packets in the buffers of " + count(edges, "site edge", "site edges") + of,
             "topology.edge_buffer_bytes", per_descriptor);
  if (model == "spectrum4")
    add_frames(terms, s, ports * s.switch_.tx_fifo_frames, "frames in the switch ports' transmit FIFOs",
               "switch.tx_fifo_frames", per_descriptor);
}

// The queue pairs built here and, when every work request of the run is already posted, which of them send:
// those with work requests posted (supernic::qp_state's `outstanding`).
struct qp_census {
  bool known = false;
  uint64_t senders = 0;  // queue pairs with work posted (meaningful when `known`)
};

// A flow run (workload.kind writes, flows, permutation, all_to_all, incast or generated, no jobs) posts all its
// work requests before the first event (flow_run::post_writes, before flow_run::run calls check_run) and none
// after; collectives and training steps post theirs as the run goes, and under mpirun a queue pair's peer may
// be another rank's, so there `known` is false.
qp_census census_of(const scenario& s, topology::fabric& fab) {
  qp_census c;
  const std::string& kind = s.workload.kind;
  c.known = s.jobs.empty() && (kind == "writes" || kind == "flows" || kind == "permutation" || kind == "all_to_all" ||
                               kind == "incast" || kind == "generated");
  for (topology::host& h : fab.hosts()) {
    if (!h.nic) {
      c.known = false;  // built by another rank
      continue;
    }
    for (size_t i = 0; i < h.nic->qp_count(); ++i)
      if (h.nic->qp_state(nic::supernic::qpn_of(i)).outstanding > 0) ++c.senders;
  }
  return c;
}

// The NICs' transmit FIFOs, reorder stashes and PCIe receive buffers. A responder's stash (responder::receive)
// holds request packets of its one peer queue pair only, at most nic.reorder_window of them (one per slot of
// its window), and within the peer's unacknowledged PSNs (nic.send_window_packets when set). With every work
// request known (census_of), only the peers of the queue pairs that have work can fill one: a queue pair's
// stash gets nothing when its peer posts nothing. Otherwise every queue pair's stash counts.
void stash_terms(std::vector<memory_term>& terms, const scenario& s, topology::fabric& fab, const qp_census& c,
                 uint64_t frame, uint64_t per) {
  uint64_t largest = s.nic.reorder_window;  // the peer's window: any NIC's
  for (const auto& [host, n] : s.nic_overrides) largest = std::max(largest, n.reorder_window);
  uint64_t fifo = 0, stash = 0, qps = 0, pcie = 0;
  for (topology::host& h : fab.hosts()) {
    if (!h.nic) continue;
    const nic::supernic_params& p = h.nic->params();
    fifo += p.tx_fifo_frames;
    if (p.placement == "pcie") pcie += (p.rx_buffer_bytes + frame - 1) / frame + p.tx_read_ahead_packets;
    if (!c.known) {
      const uint64_t window =
          p.send_window_packets > 0 ? std::min(p.send_window_packets, p.reorder_window) : p.reorder_window;
      stash += h.nic->qp_count() * window;
      qps += h.nic->qp_count();
      continue;
    }
    const uint64_t window = p.send_window_packets > 0 ? std::min(p.send_window_packets, largest) : largest;
    for (size_t i = 0; i < h.nic->qp_count(); ++i)
      if (h.nic->qp_state(nic::supernic::qpn_of(i)).outstanding > 0) {
        stash += window;  // the stash of this sending queue pair's peer
        ++qps;
      }
  }
  add_frames(terms, s, stash,
             "packets in the reorder stashes of " +
                 (c.known ? "the peers of " + count(qps, "sending queue pair", "sending queue pairs")
                          : count(qps, "queue pair", "queue pairs")),
             "nic.reorder_window", per);
  add_frames(terms, s, fifo, "frames in the NICs' transmit FIFOs", "nic.tx_fifo_frames", per);
  add_frames(terms, s, pcie, "packets in the NICs' PCIe receive buffers and read-ahead", "nic.rx_buffer_bytes", per);
}

// The simulated time the run may last: run.duration_us, or run.limit_us without one.
double run_us(const scenario& s) { return s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us; }

uint64_t total_bytes(const std::vector<memory_term>& terms) {
  uint64_t held = 0;
  for (const memory_term& t : terms) held += t.bytes;
  return held;
}

// No packet lives longer than the run, and every packet in flight was sent by a NIC at its line rate or is a
// pause frame of a switch port: what all the hosts' links at their rates for the whole run (run.duration_us,
// or run.limit_us without one) carry. Empty with SHARP (quantum_x800), whose switches make result packets of
// their own.
std::vector<memory_term> injection_bound(const scenario& s, topology::fabric& fab, uint64_t frame, uint64_t per) {
  std::vector<memory_term> bound;
  if (s.switch_model.infiniband()) return bound;
  const double run_ns = run_us(s) * 1e3;
  const double wire = double(frame + core::header_bytes::preamble_sfd + core::header_bytes::inter_frame_gap);
  uint64_t frames = 0;
  const topology::fabric_layout& layout = fab.layout();
  for (size_t l = 0; l < layout.links(); ++l)
    if (layout.link_from(l) < layout.hosts)  // a host's transmit link, built here or not
      frames += uint64_t(layout.link_params(l).rate_gbps * run_ns / 8.0 / wire) + 1;
  for (const topology::fabric_layout::switch_entry& sw : layout.switches) frames += 2 * sw.ports;
  add_frames(bound, s, frames,
             "packets the " + count(fab.hosts().size(), "host", "hosts") + " can send at their line rates in " +
                 format_us(run_ns / 1e3),
             s.run.duration_us > 0 ? "run.duration_us" : "run.limit_us", per);
  return bound;
}

// The fewest packets of a message the NICs built here hold when every posted work request is an RDMA WRITE
// (supernic::posted_work_kinds, read from the NICs' send queues), or 0 when one is not or none is posted.
uint64_t fewest_write_packets(topology::fabric& fab) {
  uint64_t fewest = 0;
  for (topology::host& h : fab.hosts()) {
    const nic::supernic::posted_work w = h.nic->posted_work_kinds();
    if (!w.all_writes) return 0;
    if (w.fewest_packets > 0) fewest = fewest == 0 ? w.fewest_packets : std::min(fewest, w.fewest_packets);
  }
  return fewest;
}

// The ACKs a queue pair's `window` unacknowledged packets can draw (ack_engine::advanced): one per
// nic.ack_every_packets of them (`every`, the smallest of any responder's) and one per message end within them
// (messages of `fewest` packets at least), or one per packet with HPCC (every packet asks for one) and sack
// (every out-of-order arrival is SACKed).
uint64_t window_acks(uint64_t window, uint64_t every, uint64_t fewest, bool per_packet) {
  if (per_packet) return window;
  return std::min(window, (window + every - 1) / every + (window + fewest - 1) / fewest);
}

// Every data frame in the fabric is a packet of a work request some queue pair has sent and not yet had
// acknowledged (its PSN lies in [acked, snd_max)), or a second copy of one, and requester::admits_new lets a
// queue pair's unacknowledged PSNs reach nic.send_window_packets at most (snd_max less the larger of una and
// acked; a READ may take more at once, and its responses are the responder's). Copies come only from
// resends: a timeout (loss_recovery::expire, nic.rto_us after the last progress, so none in a run shorter
// than rto_us), a NAK (ack_engine::arrival: a packet the NAK threshold, min(nic.nak_threshold_packets,
// nic.reorder_window / 2), beyond the responder's head, impossible when the window is no wider, or a
// `recovering` responder, which only a NAK or a duplicate arrival, itself a resend, makes), a SACK taken as a
// loss (sack_recovery::on_sack: nic.sack_reorder_packets beyond a hole, as impossible with a window no wider),
// an RNR NAK (SEND or WRITE with immediate without a receive) or a READ re-issued. So where every NIC has a
// send window no wider than those, the run is shorter than every rto_us, the work is all RDMA WRITEs and known
// (census_of, fewest_write_packets), and the fabric is Ethernet and built here, the data frames alive are at most the
// sending queue pairs times their windows; a dropped frame gives its descriptor back (link::deliver,
// spectrum_switch::receive), so does a delivered one (the responder places a WRITE at once or keeps it in its stash,
// one per PSN). Besides data, the frames are ACKs (window_acks), CNPs (nic.cnp_interval_ns per queue pair at most, with
// congestion control that makes them) and pause frames (two per switch port and per NIC, as the line-rate bound counts
// them). An ACK overtaken by a later one (adaptive routing) and still held in a buffer is not counted, as in the other
// bounds. Empty when the argument does not hold.
std::vector<memory_term> window_bound(const scenario& s, topology::fabric& fab, const qp_census& c, uint64_t per) {
  std::vector<memory_term> bound;
  if (!c.known || s.switch_model.infiniband() || fab.hosts().empty()) return bound;
  const uint64_t fewest = fewest_write_packets(fab);
  if (fewest == 0) return bound;
  uint64_t reorder = UINT64_MAX, nak = UINT64_MAX, every = UINT64_MAX;  // any NIC's: the peer may be any of them
  bool per_packet = false;
  for (topology::host& h : fab.hosts()) {
    const nic::supernic_params& p = h.nic->params();
    reorder = std::min(reorder, p.reorder_window);
    nak = std::min({nak, p.nak_threshold_packets, p.reorder_window / 2});
    every = std::min(every, std::max<uint64_t>(1, p.ack_every_packets));
    per_packet = per_packet || p.cc == "hpcc" || p.retransmission == "sack";
  }
  const double run = run_us(s);
  uint64_t frames = 0, acks = 0, window = 0, cnps = 0, pauses = 0;
  for (topology::host& h : fab.hosts()) {
    const nic::supernic_params& p = h.nic->params();
    const uint64_t w = p.send_window_packets;
    if (w == 0 || w > reorder || w > nak || (p.retransmission == "sack" && w > p.sack_reorder_packets) ||
        run >= p.rto_us || p.link_layer == "infiniband")
      return bound;
    window = std::max(window, w);
    pauses += 2;
    if (p.cc != "none" && p.cc != "hpcc")
      cnps += h.nic->qp_count() * (uint64_t(run * 1e3 / double(p.cnp_interval_ns)) + 1);
    for (size_t i = 0; i < h.nic->qp_count(); ++i)
      if (h.nic->qp_state(nic::supernic::qpn_of(i)).outstanding > 0) {
        frames += w;
        acks += window_acks(w, every, fewest, per_packet);
      }
  }
  if (frames == 0) return bound;
  for (const topology::fabric_layout::switch_entry& sw : fab.layout().switches) pauses += 2 * sw.ports;
  bound.push_back({"unacknowledged packets of " + count(c.senders, "sending queue pair", "sending queue pairs") +
                       " (send window " + std::to_string(window) + " PSNs) and their ACKs",
                   "nic.send_window_packets", (frames + acks) * per});
  if (cnps + pauses > 0)
    bound.push_back(
        {"CNPs and pause frames", cnps > 0 ? "nic.cnp_interval_ns" : "the switch ports", (cnps + pauses) * per});
  return bound;
}

}  // namespace

std::vector<memory_term> in_flight_terms(const scenario& s, topology::fabric& fab) {
  const uint64_t frame = smallest_data_frame(s);
  bool telemetry = s.nic.cc == "hpcc";
  for (const auto& [host, n] : s.nic_overrides) telemetry = telemetry || n.cc == "hpcc";
  const uint64_t per = descriptor_bytes(telemetry);
  const qp_census c = census_of(s, fab);
  std::vector<memory_term> terms;
  switch_terms(terms, s, fab, frame, per);
  // A cable holds what its flight time and FEC latency at its rate carry, and the frame being serialized.
  uint64_t cable_frames = 0;
  for (size_t l = 0; l < fab.links().size(); ++l) {
    if (!fab.links()[l]) continue;
    const core::link_params& lp = fab.layout().link_params(l);
    const double bytes = (lp.propagation_ns + lp.fec_latency_ns) * lp.rate_gbps / 8.0;
    cable_frames += uint64_t(bytes / double(frame)) + 2;
  }
  add_frames(terms, s, cable_frames, "frames on the cables of " + count(fab.links().size(), "link", "links"),
             "link.ns_per_metre x the topology's cable lengths", per);
  stash_terms(terms, s, fab, c, frame, per);
  // The smallest of the bounds that hold: where a packet can be, what the hosts can send, the send windows.
  std::vector<memory_term> best = std::move(terms);
  for (std::vector<memory_term> other : {injection_bound(s, fab, frame, per), window_bound(s, fab, c, per)})
    if (!other.empty() && total_bytes(other) < total_bytes(best)) best = std::move(other);
  return best;
}

uint64_t report_entries(scale_out& so, core::stats_registry& stats) {
  uint64_t entries = 0;
  stats.for_each_entry([&entries](const core::stats_registry::merge_entry&) { ++entries; });
  if (!so.distributed()) return entries;
  const uint64_t all = so.sum(entries);
  return so.rank() == 0 ? all : 0;
}

memory_term report_term(uint64_t entries) {
  return {"the report of " + std::to_string(entries) + " statistics", "the fabric's NICs and switch ports",
          entries * report_bytes_per_entry};
}

}  // namespace fabricsim::testbench
