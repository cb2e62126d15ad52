// The scenario's `faults` list put on the fabric.
#include "testbench/faults.h"

#include <algorithm>
#include <optional>

#include "sc_models/ib/credit_link.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/switch/quantum/reachability.h"
#include "sc_models/switch/switch_device.h"

namespace fabricsim::testbench {

using core::config_error;
using core::picoseconds;

namespace {

constexpr picoseconds forever{UINT64_MAX};

picoseconds us(double v) { return picoseconds::from_ns(v * 1e3); }

// Links are named <from>_to_<to>[_k]; the "leaf0->spine1" is accepted as leaf0_to_spine1.
std::string canonical_link_name(std::string name) {
  const size_t arrow = name.find("->");
  if (arrow != std::string::npos) name.replace(arrow, 2, "_to_");
  return name;
}

// Whether this process simulates the device that transmits on link `k` (a scale-out rank builds only its
// own devices: docs/scale_out.md; one process builds all).
bool transmitter_built(topology::fabric& fab, size_t k) {
  const size_t from = fab.layout().link_from(k);
  if (from < fab.layout().hosts) return fab.hosts()[from].built();
  return fab.switches()[from - fab.layout().hosts] != nullptr;
}

bool is_carrier(const std::string& kind) { return kind == "link_down" || kind == "flap" || kind == "port_down"; }

}  // namespace

// The reachability tables of a fabric (sc_models/switch/quantum/reachability.h), from the fault schedule of
// every link: the table for each stretch between two changes of some link's known state is computed and set
// in the switches before the stretch begins (the first two at construction, then one more at each change), so
// a switch reads the table in force at a packet's time whatever the order of simultaneous events. A Quantum
// fabric's subnet manager reroutes at detection (`delay` 0); on a Spectrum fabric the switches away from the
// failure learn of it from a fault notification `delay` (fault.notification_us) after detection, so each
// table comes into force that much after the change it follows. Every rank holds every link's schedule
// (fault_set::injector_of) and computes the whole fabric's tables alike: the route groups of the switches it
// builds are read from them, those of the others from the routes the fabric gave them on their own rank
// (fabric::remote_route); only its own switches get rows (Quantum, and Spectrum's notification alike).
class fault_set::fabric_reachability : public core::calendar_client {
 public:
  fabric_reachability(topology::fabric& fab, std::vector<sw::reachability_user*> switches,
                      const std::map<size_t, std::unique_ptr<core::fault_injector>>& injectors, picoseconds delay,
                      core::sim_context& ctx)
      : m_switches(std::move(switches)), m_injectors(injectors), m_delay(delay), m_ctx(ctx) {
    const topology::fabric_layout& lay = fab.layout();
    m_remote.resize(m_switches.size());
    for (size_t s = 0; s < m_switches.size(); ++s) {
      m_in.peer.emplace_back(lay.switches[s].ports, sw::reach_inputs::no_switch);
      m_link.emplace_back(lay.switches[s].ports, SIZE_MAX);
      if (m_switches[s] != nullptr) continue;
      for (size_t h = 0; h < fab.hosts().size(); ++h) {  // LID h + 1 (sw::ib::host_lid)
        const uint16_t lid = uint16_t(sw::ib::host_lid(fab.hosts()[h].ip));
        if (m_remote[s].size() <= lid) m_remote[s].resize(size_t(lid) + 1);
        m_remote[s][lid] = fab.remote_route(s, h);
      }
    }
    for (size_t c = 0; c < lay.cables.size(); ++c) {
      const auto& cab = lay.cables[c];
      wire(lay, cab.a, cab.a_port, cab.b, 2 * c);
      wire(lay, cab.b, cab.b_port, cab.a, 2 * c + 1);
    }
    for (const topology::host& h : fab.hosts())
      m_in.lids = std::max<uint16_t>(m_in.lids, uint16_t(sw::ib::host_lid(h.ip) + 1));
    m_in.group = [this](size_t s, uint16_t dlid) {
      if (m_switches[s] == nullptr) {
        if (dlid >= m_remote[s].size()) return sw::equal_cost_group{};
        const std::vector<unsigned>& ports = m_remote[s][dlid];
        return sw::equal_cost_group{ports.data(), uint32_t(ports.size())};
      }
      return m_switches[s]->lft(dlid) < 0 ? sw::equal_cost_group{} : m_switches[s]->ar_group(dlid);
    };
    install(picoseconds{0});
    const picoseconds first = next_change(picoseconds{0});
    if (first.value == UINT64_MAX) return;
    install(first);
    m_ctx.calendar.schedule(this, first + m_delay);
  }

  // When a change's table comes into force: the table after the next one (the one for now was set before).
  void on_due(picoseconds t) override {
    const picoseconds next = next_change(t - m_delay);
    if (next.value == UINT64_MAX) return;
    install(next);
    m_ctx.calendar.schedule(this, next + m_delay);
  }

 private:
  // The cable end at device `from`, port `port`, sends on `link` towards device `to`.
  void wire(const topology::fabric_layout& lay, size_t from, unsigned port, size_t to, size_t link) {
    if (from < lay.hosts) return;
    const size_t s = from - lay.hosts;
    m_in.peer[s][port] = to < lay.hosts ? sw::reach_inputs::no_switch : to - lay.hosts;
    m_link[s][port] = link;
  }
  bool known_down(size_t link, picoseconds t) const {
    const auto it = m_injectors.find(link);
    return it != m_injectors.end() && it->second->known_down(t);
  }
  picoseconds next_change(picoseconds t) const {
    picoseconds best{UINT64_MAX};
    for (const auto& [k, inj] : m_injectors) best = std::min(best, inj->next_known_change(t));
    return best;
  }
  // The tables for the known state at `t`, given to every switch, in force from t + delay.
  void install(picoseconds t) {
    m_in.down = [this, t](size_t s, unsigned port) {
      const size_t k = port < m_link[s].size() ? m_link[s][port] : SIZE_MAX;
      return k != SIZE_MAX && known_down(k, t);
    };
    std::vector<sw::reach_rows> rows = sw::reach_beyond(m_in);
    for (size_t s = 0; s < m_switches.size(); ++s)
      if (m_switches[s] != nullptr) m_switches[s]->set_reachability(t + m_delay, std::move(rows[s]));
  }

  std::vector<sw::reachability_user*> m_switches;
  const std::map<size_t, std::unique_ptr<core::fault_injector>>& m_injectors;
  picoseconds m_delay;
  core::sim_context& m_ctx;
  sw::reach_inputs m_in;
  std::vector<std::vector<size_t>> m_link;                   // [switch][port]: the link leaving it there (layout index)
  std::vector<std::vector<std::vector<unsigned>>> m_remote;  // [switch][dlid]: route ports, unbuilt switches
};

fault_set::~fault_set() = default;

fault_set::fault_set(const scenario& s, topology::fabric& fab, core::sim_context& ctx, picoseconds run_end)
    : m_scenario(s), m_ctx(ctx), m_detect(us(s.fault.detect_us)) {
  m_counters.resize(s.faults.size());
  const topology::fabric_layout& lay = fab.layout();
  for (size_t k = 0; k < lay.links(); ++k) m_link_names.push_back(lay.link_name(k));
  // Names resolve against the layout, which every scale-out rank has whole: the same entries, the same
  // errors on every rank, whichever devices it builds.
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const fault_entry& f = s.faults[i];
    const std::string where = s.source + ": faults." + std::to_string(i);
    entry e{&f, "", {}, {}, {}, nullptr};
    if (f.kind == "misplace") {  // a NIC's, not a link's: its host was checked at load
      const size_t h = *topology::host_index(f.host, lay.hosts);
      e.target = f.host;
      if (fab.hosts()[h].built()) {  // under mpirun, on the host's rank
        e.misplace = &fab.hosts()[h].nic->misplace_fault();
        e.misplace->arm(f.after_packets, f.offset_bytes);
      }
      m_entries.push_back(std::move(e));
      continue;
    }
    if (f.kind == "links_down") {  // its cables are not in the fabric (testbench/failed_cables.h): no injector
      e.target = f.target;
      e.end = forever;
      m_entries.push_back(std::move(e));
      continue;
    }
    if (f.kind == "port_down") {
      try {
        e.links.push_back(fab.egress_link_index(f.switch_name, unsigned(f.port)));
      } catch (const config_error& err) {
        throw config_error(where + (f.switch_name.empty() ? ".switch" : ".port") + ": " + err.what());
      }
      e.target = f.switch_name + ".port" + std::to_string(f.port);
    } else {
      const std::string name = canonical_link_name(f.link);
      const std::optional<size_t> k = fab.link_index(name);
      if (!k)
        throw config_error(where + ".link: no link named '" + f.link + "'; links are named <from>_to_<to>, with _<k> " +
                           "for parallel cables (docs/topology.md), from " + m_link_names.front() + " to " +
                           m_link_names.back());
      e.links.push_back(*k);
      e.target = name;
    }
    // A carrier fault takes the whole cable (both directions: cable c is links 2c and 2c + 1, fabric_layout);
    // loss and bit errors hit the one direction named.
    if (is_carrier(f.kind)) {
      const size_t named = e.links.size();
      for (size_t k = 0; k < named; ++k) e.links.push_back(e.links[k] ^ 1);
    }
    if (f.kind == "link_down" || f.kind == "port_down") {
      e.start = us(f.at_us);
      e.end = f.for_us > 0 ? us(f.at_us + f.for_us) : forever;
      for (size_t k : e.links) injector_of(fab, k).add_down(e.start, e.end, i);
    } else if (f.kind == "flap") {
      e.start = us(f.from_us);
      e.end = f.until_us > 0 ? us(f.until_us) : run_end;
      const picoseconds period = us(f.period_us), down = us(f.down_us);
      const uint64_t windows = (e.end.value - std::min(e.end, e.start).value + period.value - 1) / period.value;
      if (windows > 1'000'000)
        throw config_error(where + ".period_us: " + std::to_string(windows) +
                           " flap periods in the run; at most 1000000 (lengthen period_us or shorten the span)");
      for (picoseconds t = e.start; t < e.end; t = t + period)
        for (size_t k : e.links) injector_of(fab, k).add_down(t, std::min(t + down, e.end), i);
    } else {
      e.start = us(f.from_us);
      e.end = f.until_us > 0 ? us(f.until_us) : run_end;
      core::fault_injector& inj = injector_of(fab, e.links.front());
      if (f.kind == "loss" ? inj.has_loss() : inj.has_ber())
        throw config_error(where + ".link: " + e.target + " already has a " + f.kind + " entry; one per link");
      // Faults that run to the end of the run have no end of their own: the window stays open.
      const picoseconds until = f.until_us > 0 ? e.end : forever;
      if (f.kind == "loss") inj.set_loss(f.probability, i, e.start, until);
      else inj.set_ber(f.ber, i, e.start, until);
    }
    m_entries.push_back(std::move(e));
  }
  install_reachability(fab);
}

void fault_set::install_reachability(topology::fabric& fab) {
  bool carrier = false;
  for (const fault_entry& f : m_scenario.faults)
    carrier = carrier || f.kind == "link_down" || f.kind == "flap" || f.kind == "port_down";
  if (!carrier) return;
  // Under mpirun a switch another rank builds is nullptr here.
  std::vector<sw::reachability_user*> switches;
  bool any = false, subnet_managed = true;
  for (auto& d : fab.switches()) {
    any = any || d != nullptr;
    switches.push_back(d ? d->reachability() : nullptr);
    subnet_managed =
        subnet_managed && (d == nullptr || (switches.back() != nullptr && switches.back()->subnet_managed()));
  }
  if (!any) return;
  if (subnet_managed) {  // Quantum-X800: the subnet manager's reroute, at detection
    m_reach = std::make_unique<fabric_reachability>(fab, std::move(switches), m_injectors, picoseconds{0}, m_ctx);
    return;
  }
  if (!m_scenario.fault.remote_notification) return;  // only the cable's ends learn
  // Every switch routes by the table (Spectrum, or a mix with Quantum); a model without one (the output-queued
  // reference switch) keeps the ends-only view. Under mpirun a switch another rank builds is nullptr here:
  // the notification is a timed change of the table, not a frame, and every rank computes the whole fabric's
  // tables from the schedule and the routes (fabric::remote_route), so each gives its own switches their rows
  // at the times one process does (one switch model per fabric: every rank decides alike).
  for (size_t i = 0; i < switches.size(); ++i)
    if (fab.switches()[i] != nullptr && switches[i] == nullptr) return;
  m_reach = std::make_unique<fabric_reachability>(fab, std::move(switches), m_injectors,
                                                  us(m_scenario.fault.notification_us), m_ctx);
}

core::fault_injector& fault_set::injector_of(topology::fabric& fab, size_t k) {
  std::unique_ptr<core::fault_injector>& inj = m_injectors[k];
  if (inj) return *inj;
  inj = std::make_unique<core::fault_injector>(m_link_names[k], m_ctx.seed, m_detect, m_counters);
  // Only the rank that transmits on the link judges its frames (link::transmit) and routes by it (a switch
  // asks the link leaving it whether it is known down). A crossing link's copy on the receiving rank gets
  // the verdicts with the frames (link::inject) and needs no injector.
  core::link* l = fab.links()[k].get();
  if (l == nullptr) return *inj;
  const bool tx_here = transmitter_built(fab, k);
  if (tx_here) l->set_fault(inj.get());
  // An InfiniBand receiver at the far end (a Quantum port or an HCA): the blocks of frames lost on this
  // wire come back at the sender's next FCTBS refresh (docs/faults.md). The receiver's rank learns of the
  // loss: in one process as the frame is judged, under mpirun when its verdict arrives with the frame
  // (arrival_losses(), link_exchange::on_arrival_loss; the transmitting rank has no sink on a crossing link).
  sw::ib::credit_receiver* rx = nullptr;
  unsigned vls = 1;
  if (auto* peer = dynamic_cast<sw::ib::credit_peer*>(l->sink())) {  // an interface, not a device class
    rx = peer->receiver_at(l->sink_port());
    vls = peer->receiver_vls();
  }
  if (rx != nullptr) {
    m_recoveries.push_back(std::make_unique<sw::ib::wire_loss_recovery>(
        *rx, vls, l->latency(), picoseconds::from_ns(m_scenario.quantum.credit.fc_refresh_ns), *inj));
    if (tx_here)
      inj->set_listener(m_recoveries.back().get());
    else
      m_arrival_losses.emplace_back(k, m_recoveries.back().get());
  }
  return *inj;
}

void fault_set::merge(scale_out& so) {
  if (!so.distributed() || m_counters.empty()) return;
  // A misplacement happened on its host's rank: its record from there (zeros elsewhere), summed.
  std::vector<uint64_t> misplaced;
  for (const entry& e : m_entries)
    if (e.cfg->kind == "misplace") {
      const nic::placement_fault* m = e.misplace;
      const bool fired = m && m->fired();
      misplaced.insert(misplaced.end(), {fired ? 1u : 0u, fired ? m->va() : 0, fired ? m->length() : 0,
                                         fired ? m->applied_offset_bytes() : 0, fired ? m->fired_at().value : 0});
    }
  so.sum(misplaced);
  for (size_t i = 0, k = 0; i < m_entries.size(); ++i)
    if (m_entries[i].cfg->kind == "misplace") {
      m_misplaced[i] = {misplaced[k] != 0, misplaced[k + 1], misplaced[k + 2], misplaced[k + 3],
                        picoseconds{misplaced[k + 4]}};
      k += 5;
    }
  // Each frame is judged once, on its link's transmitter rank: the counts add up; the latest loss is the
  // latest over the ranks.
  std::vector<uint64_t> counts, last;
  for (const core::fault_counters& c : m_counters) {
    counts.insert(counts.end(), {c.frames_lost, c.fcs_errors, c.frames_judged});
    last.push_back(c.last_loss.value);
  }
  so.sum(counts);
  so.max(last);
  for (size_t i = 0; i < m_counters.size(); ++i) {
    m_counters[i].frames_lost = counts[3 * i];
    m_counters[i].fcs_errors = counts[3 * i + 1];
    m_counters[i].frames_judged = counts[3 * i + 2];
    m_counters[i].last_loss = picoseconds{last[i]};
  }
}

nlohmann::json fault_set::report(picoseconds sim_end, const std::vector<delivered_sample>& delivered,
                                 uint64_t retransmissions) const {
  nlohmann::json out;
  out["detect_ns"] = m_detect.ns();
  out["retransmissions"] = retransmissions;
  out["sampled"] = !delivered.empty();
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < m_entries.size(); ++i) {
    const entry& e = m_entries[i];
    if (e.cfg->kind == "misplace") {
      list.push_back(misplace_report(i));
      continue;
    }
    if (e.cfg->kind == "links_down") {  // absent from the start: nothing crossed them, routes avoid them
      list.push_back({{"index", i},
                      {"kind", e.cfg->kind},
                      {"target", e.target},
                      {"links", e.cfg->absent_links},
                      {"start_ns", 0.0},
                      {"end_ns", nullptr},
                      {"frames_lost", 0},
                      {"fcs_errors", 0},
                      {"frames_exposed", 0},
                      {"time_down_ns", sim_end.ns()},
                      {"detection_ns", nullptr},
                      {"last_loss_ns", nullptr},
                      {"goodput_before_gbps", nullptr},
                      {"time_to_recover_ns", nullptr}});
      continue;
    }
    const core::fault_counters& c = m_counters[i];
    nlohmann::json j;
    j["index"] = i;
    j["kind"] = e.cfg->kind;
    j["target"] = e.target;
    nlohmann::json links = nlohmann::json::array();
    for (size_t k : e.links) links.push_back(m_link_names[k]);
    j["links"] = links;
    j["start_ns"] = e.start.ns();
    const bool open_ended = e.end == forever || ((e.cfg->kind == "loss" || e.cfg->kind == "bit_errors") &&
                                                 e.cfg->until_us == 0);
    j["end_ns"] = open_ended ? nlohmann::json(nullptr) : nlohmann::json(e.end.ns());
    j["frames_lost"] = c.frames_lost;
    j["fcs_errors"] = c.fcs_errors;
    j["frames_exposed"] = c.frames_judged;
    // One direction's carrier-down time: both directions of a cable go down together.
    j["time_down_ns"] = m_injectors.at(e.links.front())->down_time(i, sim_end).ns();
    j["detection_ns"] = is_carrier(e.cfg->kind) ? nlohmann::json(m_detect.ns()) : nlohmann::json(nullptr);
    j["last_loss_ns"] = c.frames_lost + c.fcs_errors > 0 ? nlohmann::json(c.last_loss.ns()) : nlohmann::json(nullptr);
    // Time to recover: from the fault's start until the fabric's delivered goodput, over a whole sampling
    // period that begins after the last frame this fault destroyed, is back within 10 % of its mean before
    // the fault (periods before the first delivery left out). Null without sampling, without a period
    // before the fault, or when it never comes back (the workload ended first).
    nlohmann::json recover = nullptr, baseline = nullptr;
    if (delivered.size() >= 2) {
      double before_bytes = 0, before_ps = 0;
      picoseconds prev_t{0};
      uint64_t prev_b = 0;
      for (const delivered_sample& d : delivered) {
        if (d.t > e.start) break;
        if (prev_b > 0 || d.placed_bytes > 0) {
          before_bytes += double(d.placed_bytes - prev_b);
          before_ps += double((d.t - prev_t).value);
        }
        prev_t = d.t;
        prev_b = d.placed_bytes;
      }
      if (before_ps > 0 && before_bytes > 0) {
        const double g0 = before_bytes / before_ps;
        baseline = g0 * 8.0 * 1e3;  // bytes/ps -> Gb/s
        const picoseconds quiet = std::max(e.start, c.frames_lost + c.fcs_errors > 0 ? c.last_loss : e.start);
        for (size_t k = 1; k < delivered.size(); ++k) {
          const delivered_sample &a = delivered[k - 1], &b = delivered[k];
          if (a.t < quiet) continue;
          const double g = double(b.placed_bytes - a.placed_bytes) / double((b.t - a.t).value);
          if (g >= 0.9 * g0) {
            recover = (b.t - e.start).ns();
            break;
          }
        }
      }
    }
    j["goodput_before_gbps"] = baseline;
    j["time_to_recover_ns"] = recover;
    list.push_back(std::move(j));
  }
  out["entries"] = std::move(list);
  return out;
}

// A misplace entry: which payload write went where (null fields: it never fired, the NIC placed fewer than
// after_packets + 1 payloads).
nlohmann::json fault_set::misplace_report(size_t i) const {
  const entry& e = m_entries[i];
  misplaced m;
  if (auto it = m_misplaced.find(i); it != m_misplaced.end())
    m = it->second;  // merged over the ranks
  else if (e.misplace && e.misplace->fired())
    m = {true, e.misplace->va(), e.misplace->length(), e.misplace->applied_offset_bytes(), e.misplace->fired_at()};
  nlohmann::json j;
  j["index"] = i;
  j["kind"] = e.cfg->kind;
  j["target"] = e.target;
  j["links"] = nlohmann::json::array();
  j["fired"] = m.fired;
  j["start_ns"] = m.fired ? nlohmann::json(m.at.ns()) : nlohmann::json(nullptr);
  j["address"] = m.fired ? nlohmann::json(m.va) : nlohmann::json(nullptr);
  j["payload_bytes"] = m.fired ? nlohmann::json(m.length) : nlohmann::json(nullptr);
  j["applied_offset_bytes"] = m.fired ? nlohmann::json(m.offset) : nlohmann::json(nullptr);
  return j;
}

}  // namespace fabricsim::testbench
