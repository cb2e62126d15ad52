// The congestion figures of a flow run's report.
#include "testbench/congestion_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "sc_models/switch/spectrum/spectrum_switch.h"

namespace fabricsim::testbench {

using core::picoseconds;

namespace {

// Jain's fairness index (sum x)^2 / (n sum x^2): 1 when every x is equal, 1/n when one takes everything.
// Null for no values, 1 when every value is zero (all equally starved).
nlohmann::json jain_index(const std::vector<double>& x) {
  if (x.empty()) return nullptr;
  double sum = 0.0, sq = 0.0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  return sq > 0 ? sum * sum / (double(x.size()) * sq) : 1.0;
}

// The first sample time from which, while every sender is active, the largest value stays within 10 % of
// the smallest ((max - min) <= 0.1 max), less the time the last sender started; null when it never settles
// or no sample has every sender active. `value(sample)` picks what is compared.
template <class F>
nlohmann::json convergence_ns(const std::vector<qp_sample>& samples, const std::vector<sender_qp>& senders, F value) {
  if (senders.size() < 2 || samples.empty()) return nullptr;
  picoseconds last_start{0};
  for (const sender_qp& q : senders) last_start = std::max(last_start, q.first_post);
  std::optional<picoseconds> settled;
  for (size_t i = 0; i + senders.size() <= samples.size(); i += senders.size()) {
    bool all_active = true;
    double lo = INFINITY, hi = 0.0;
    for (size_t k = i; k < i + senders.size(); ++k) {
      all_active = all_active && samples[k].active;
      lo = std::min(lo, value(samples[k]));
      hi = std::max(hi, value(samples[k]));
    }
    if (!all_active) {
      if (samples[i].t >= last_start && settled) break;  // a sender finished: judge up to here
      continue;
    }
    if (hi - lo <= 0.1 * hi) {
      if (!settled) settled = samples[i].t;
    } else {
      settled.reset();
    }
  }
  if (!settled) return nullptr;
  return (*settled - std::min(*settled, last_start)).ns();
}

// The tier of a device by its name (topology.md naming): h<N> a host's NIC, *leaf* and the single switch sw0
// a leaf, *spine* a spine, core* a core; anything else "switch".
std::string device_tier(const std::string& name) {
  if (name.size() > 1 && name[0] == 'h' && std::all_of(name.begin() + 1, name.end(), ::isdigit)) return "nic";
  if (name.find("spine") != std::string::npos) return "spine";
  if (name.find("leaf") != std::string::npos || name == "sw0") return "leaf";
  if (name.rfind("core", 0) == 0) return "core";
  return "switch";
}

// The figures that show congestion control at work (docs/report.md, `fabric`): per-sender goodput in the
// window and Jain's index over it, the bottleneck port of a run whose WRITEs all go to one host, PFC pauses
// per switch port and CNPs.
// Fair-share convergence: from the samples where every sender is active, each sender's goodput averaged over
// the last `k` sample periods (delivered bytes over k periods) is compared with the fair share, the mean of
// those averages (the bottleneck's delivered capacity split evenly). The first sample time from which every
// sender stays within 10 % of it, less the time the last sender started; null when it never settles.
nlohmann::json fair_share_convergence_ns(const std::vector<qp_sample>& samples, const std::vector<sender_qp>& senders,
                                         size_t k) {
  const size_t n = senders.size();
  if (n < 2 || samples.empty() || k == 0) return nullptr;
  picoseconds last_start{0};
  for (const sender_qp& q : senders) last_start = std::max(last_start, q.first_post);
  std::optional<picoseconds> settled;
  for (size_t i = k * n; i + n <= samples.size(); i += n) {
    bool all_active = true;
    std::vector<double> avg(n);
    double sum = 0.0;
    for (size_t s = 0; s < n; ++s) {
      const qp_sample& now = samples[i + s];
      const qp_sample& then = samples[i + s - k * n];  // the same sender k periods before
      all_active = all_active && now.active && then.t >= last_start;
      avg[s] = double(now.st.placed_bytes - then.st.placed_bytes);
      sum += avg[s];
    }
    if (!all_active) {
      if (samples[i].t >= last_start && settled) break;  // a sender finished: judge up to here
      continue;
    }
    const double fair = sum / double(n);
    bool within = fair > 0;
    for (double a : avg) within = within && std::abs(a - fair) <= 0.1 * fair;
    if (within) {
      if (!settled) settled = samples[i].t;
    } else {
      settled.reset();
    }
  }
  if (!settled) return nullptr;
  return (*settled - std::min(*settled, last_start)).ns();
}

// The PFC pause timeline: every switch's XOFF intervals, merged in start order and held to the first
// spectrum_switch::pause_log_limit of the run. A switch that hit the limit stopped recording at some time;
// the merged log is complete only before the earliest such time, so later intervals are cut and
// `complete_until_ns` says where (null: every XOFF of the run is here).
nlohmann::json pause_intervals_report(const core::sim_context& ctx, topology::fabric& fab, scale_out& so) {
  // Every switch's log (its `pause_log` probe), from the process that simulated it (one process: all), in
  // switch order.
  nlohmann::json mine = nlohmann::json::array();
  for (size_t i = 0; i < fab.switches().size(); ++i) {
    const sw::switch_device* sw = fab.switches()[i].get();
    if (!sw || !ctx.stats.has_probe(sw->device_name(), "pause_log")) continue;
    nlohmann::json rec = ctx.stats.probe_record_value(sw->device_name(), "pause_log");
    mine.push_back({{"switch", i}, {"complete_until", rec["complete_until"]}, {"log", std::move(rec["log"])}});
  }
  std::vector<nlohmann::json> switches;
  for (nlohmann::json& part : so.gather(mine))
    for (nlohmann::json& e : part) switches.push_back(std::move(e));
  std::stable_sort(switches.begin(), switches.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["switch"].get<size_t>() < b["switch"].get<size_t>();
  });
  struct entry {
    const nlohmann::json* iv;  // [port name, link name, priority, start ps, end ps]
    picoseconds start;
  };
  std::vector<entry> all;
  picoseconds complete_until{UINT64_MAX};
  uint64_t total = 0;
  for (const nlohmann::json& sw : switches) {
    for (const nlohmann::json& iv : sw["log"]) all.push_back({&iv, picoseconds(iv[3].get<uint64_t>())});
    complete_until = std::min(complete_until, picoseconds(sw["complete_until"].get<uint64_t>()));
  }
  std::stable_sort(all.begin(), all.end(), [](const entry& a, const entry& b) { return a.start < b.start; });
  std::vector<entry> kept;
  for (const entry& e : all) {
    if (e.start >= complete_until) break;
    if (kept.size() == sw::spectrum_switch::pause_log_limit) {
      complete_until = e.start;
      break;
    }
    kept.push_back(e);
  }
  total = kept.size();
  nlohmann::json list = nlohmann::json::array();
  for (const entry& e : kept) {
    const nlohmann::json& iv = *e.iv;
    const picoseconds end(iv[4].get<uint64_t>());
    nlohmann::json o = {{"port", iv[0]}, {"link", iv[1]}, {"priority", iv[2]}, {"start_ns", e.start.ns()}};
    o["end_ns"] = end.value == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(end.ns());
    list.push_back(std::move(o));
  }
  nlohmann::json j;
  j["limit"] = sw::spectrum_switch::pause_log_limit;
  j["recorded"] = total;
  j["complete_until_ns"] =
      complete_until.value == UINT64_MAX ? nlohmann::json(nullptr) : nlohmann::json(complete_until.ns());
  j["intervals"] = std::move(list);
  return j;
}

// The bottleneck: the last hop to the one host every WRITE goes to (incast, two flows into one host); null
// for any other pattern.
nlohmann::json bottleneck_report(core::sim_context& ctx, topology::fabric& fab, scale_out& so,
                                 const std::map<size_t, uint64_t>& per_target, double window_s,
                                 picoseconds window_start, picoseconds window_end, double queue_integral) {
  if (per_target.size() != 1) return nullptr;
  const size_t target = per_target.begin()->first;
  nlohmann::json b;
  b["host"] = fab.hosts()[target].name;
  const double line_bps = double(fab.hosts()[target].line_rate.value);
  b["delivered_payload_bytes"] = per_target.begin()->second;
  b["utilization"] = window_s > 0 ? double(per_target.begin()->second) * 8.0 / (line_bps * window_s) : 0.0;
  // The port from the process that simulated the leaf (one process: this one).
  nlohmann::json port_name = leaf_port_towards(ctx, fab, target);
  for (const nlohmann::json& n : so.gather(port_name))
    if (n.is_string()) port_name = n;
  if (port_name.is_string()) {
    b["port"] = port_name;
    const std::string port = port_name.get<std::string>();  // (under mpirun, merged on rank 0 only)
    b["queue_max_bytes"] =
        ctx.stats.has(port, "max_queue_bytes") ? ctx.stats.counter_value(port, "max_queue_bytes") : 0;
    b["queue_mean_bytes"] =
        window_end > window_start ? queue_integral / double((window_end - window_start).value) : 0.0;
  }
  return b;
}

// The tiers at the two ends of a link named <from>_to_<to> ("leaf_to_spine"), or "" for another name.
std::string hop_kind(const std::string& link) {
  const size_t cut = link.find("_to_");
  if (cut == std::string::npos) return "";
  return device_tier(link.substr(0, cut)) + "_to_" + device_tier(link.substr(cut + 4));
}

// PFC pauses per switch port: where they are sent shows how far back-pressure spread.
void pfc_pause_figures(nlohmann::json& j, core::sim_context& ctx, topology::fabric& fab, scale_out& so) {
  // Each switch from the process that simulated it (one process: all of them), in switch order.
  nlohmann::json mine = nlohmann::json::array();
  for (size_t k = 0; k < fab.switches().size(); ++k) {
    const sw::switch_device* sw = fab.switches()[k].get();
    if (!sw || !ctx.stats.has_probe(sw->device_name(), "egress_ports")) continue;
    uint64_t total = 0;
    nlohmann::json ports = nlohmann::json::array();
    for (const nlohmann::json& p : ctx.stats.probe_record_value(sw->device_name(), "egress_ports")) {
      if (p.is_null()) continue;  // not connected
      const std::string port = p[0].get<std::string>();
      const uint64_t n = ctx.stats.counter_value(port, "pause_frames_sent");
      total += n;
      if (n > 0) ports.push_back({{"port", port}, {"link", p[1]}, {"pause_frames_sent", n}});
    }
    mine.push_back({{"switch", k}, {"name", sw->device_name()}, {"total", total}, {"ports", std::move(ports)}});
  }
  std::vector<nlohmann::json> switches;
  for (nlohmann::json& part : so.gather(mine))
    for (nlohmann::json& e : part) switches.push_back(std::move(e));
  std::stable_sort(switches.begin(), switches.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["switch"].get<size_t>() < b["switch"].get<size_t>();
  });
  nlohmann::json by_port = nlohmann::json::array();
  nlohmann::json by_switch = nlohmann::json::object();
  for (nlohmann::json& sw : switches) {
    for (nlohmann::json& p : sw["ports"]) by_port.push_back(std::move(p));
    by_switch[sw["name"].get<std::string>()] = sw["total"];
  }
  // The same by hop kind: the tiers at the two ends of the cable the frames went down (`leaf_to_spine`:
  // a leaf paused a spine's port towards it), which shows how many hops back-pressure travelled.
  nlohmann::json by_hop = nlohmann::json::object();
  for (const auto& e : by_port) {
    const std::string key = hop_kind(e["link"].get<std::string>());
    if (key.empty()) continue;
    by_hop[key] = by_hop.value(key, uint64_t{0}) + e["pause_frames_sent"].get<uint64_t>();
  }
  j["pfc_pauses_by_port"] = std::move(by_port);
  j["pfc_pauses_by_switch"] = std::move(by_switch);
  j["pfc_pauses_by_hop"] = std::move(by_hop);
  j["pfc_pause_intervals"] = pause_intervals_report(ctx, fab, so);
}

// InfiniBand (switch.model quantum_x800): time a ready packet waited for credit, per sending port and VL,
// and summed by hop kind like the pauses -- where credit back-pressure reached.
void credit_stall_figures(nlohmann::json& j, const core::sim_context& ctx, topology::fabric& fab, scale_out& so) {
  nlohmann::json stall_ports = nlohmann::json::array();
  nlohmann::json stall_hops = nlohmann::json::object();
  const core::picoseconds t_end = core::now();
  // Each device's stalls come from the rank that simulates it (docs/scale_out.md): [device, [[port, link, vl,
  // ps], ...]] for the devices this rank owns, gathered, then listed in fabric order (switches, then hosts).
  nlohmann::json stalls_here = nlohmann::json::array();
  auto add_stall = [&](nlohmann::json& dev, const std::string& link, const std::string& port, unsigned vl,
                       uint64_t ps) {
    if (ps != 0) dev.push_back({port, link, vl, ps});
  };
  // A switch's from its `credit_stalls` probe (an InfiniBand switch registers one).
  for (size_t s = 0; s < fab.switches().size(); ++s) {
    const sw::switch_device* q = so.owns_switch(s) ? fab.switches()[s].get() : nullptr;
    if (!q || !ctx.stats.has_probe(q->device_name(), "credit_stalls")) continue;
    stalls_here.push_back({s, ctx.stats.probe_record_value(q->device_name(), "credit_stalls")});
  }
  for (size_t k = 0; k < fab.hosts().size(); ++k) {
    const topology::host& h = fab.hosts()[k];
    if (!so.owns_host(k) || !h.nic || !h.nic->out_link()) continue;
    nlohmann::json dev = nlohmann::json::array();
    add_stall(dev, h.nic->out_link()->name(), h.nic->name(), 0, h.nic->ib_sender().stall_ps(0, t_end));
    stalls_here.push_back({fab.switches().size() + k, std::move(dev)});
  }
  std::map<uint64_t, nlohmann::json> by_device;
  for (auto& from_rank : so.gather(stalls_here))
    for (auto& d : from_rank) by_device[d[0].get<uint64_t>()] = std::move(d[1]);
  for (const auto& [device, entries] : by_device)
    for (const auto& e : entries) {
      const std::string link = e[1].get<std::string>();
      const double us = double(e[3].get<uint64_t>()) / 1e6;
      stall_ports.push_back({{"port", e[0]}, {"link", link}, {"vl", e[2]}, {"stall_us", us}});
      const std::string key = hop_kind(link);
      if (key.empty()) continue;
      stall_hops[key] = stall_hops.value(key, 0.0) + us;
    }
  j["credit_stalls_by_port"] = std::move(stall_ports);
  j["credit_stall_us_by_hop"] = std::move(stall_hops);
}

}  // namespace

// The name of the port of `host`'s leaf towards it, from the leaf's `egress_ports` probe: null where this
// process did not build the leaf or the leaf registers no such probe (a switch without a PFC pipeline).
nlohmann::json leaf_port_towards(const core::sim_context& ctx, topology::fabric& fab, size_t host,
                                 std::map<size_t, nlohmann::json>* records) {
  const size_t leaf_index = fab.hosts()[host].leaf;
  const sw::switch_device* leaf = fab.switches()[leaf_index].get();
  if (!leaf || !ctx.stats.has_probe(leaf->device_name(), "egress_ports")) return nullptr;
  nlohmann::json own;
  nlohmann::json& ports = records ? (*records)[leaf_index] : own;
  if (ports.is_null()) ports = ctx.stats.probe_record_value(leaf->device_name(), "egress_ports");
  const nlohmann::json& port = ports.at(fab.host_port(host));
  return port.is_null() ? nlohmann::json() : port.at(0);
}

void congestion_figures(nlohmann::json& j, core::sim_context& ctx, topology::fabric& fab, scale_out& so,
                        const std::vector<sender_qp>& senders, const std::vector<qp_sample>& samples,
                        picoseconds window_start, picoseconds window_end, double queue_byte_ps_at_window_start,
                        double queue_byte_ps_at_window_end, size_t convergence_samples) {
  const double window_s = double((window_end - window_start).value) * 1e-12;
  std::map<size_t, uint64_t> per_host;  // sending host -> payload placed for it in the window
  std::map<size_t, uint64_t> per_target;
  for (const sender_qp& q : senders) {
    const uint64_t b = q.placed_at_end - q.placed_at_window_start;
    per_host[q.src] += b;
    per_target[q.dst] += b;
  }
  nlohmann::json goodput = nlohmann::json::object();
  std::vector<double> x;
  for (const auto& [h, b] : per_host) {
    const double gbps = window_s > 0 ? double(b) * 8.0 / window_s / 1e9 : 0.0;
    goodput[fab.hosts()[h].name] = gbps;
    x.push_back(gbps);
  }
  j["sender_goodput_gbps"] = goodput;
  j["jain_fairness"] = jain_index(x);

  j["bottleneck"] = bottleneck_report(ctx, fab, so, per_target, window_s, window_start, window_end,
                                      queue_byte_ps_at_window_end - queue_byte_ps_at_window_start);
  pfc_pause_figures(j, ctx, fab, so);
  credit_stall_figures(j, ctx, fab, so);
  j["cnps_sent"] = ctx.stats.counter_total("tx_cnps");
  j["cnps_received"] = ctx.stats.counter_total("rx_cnps");
  j["samples"] = senders.empty() ? 0 : samples.size() / senders.size();
  j["rate_convergence_ns"] = convergence_ns(samples, senders, [](const qp_sample& q) { return q.st.rate_mbps; });
  // How far apart the DCQCN rates ended: (max - min) / max over the last sample with every sender active.
  j["rate_spread_at_end"] = nullptr;
  for (size_t i = samples.size(); senders.size() >= 2 && i >= senders.size(); i -= senders.size()) {
    bool all_active = true;
    double lo = INFINITY, hi = 0.0;
    for (size_t k = i - senders.size(); k < i; ++k) {
      all_active = all_active && samples[k].active;
      lo = std::min(lo, samples[k].st.rate_mbps);
      hi = std::max(hi, samples[k].st.rate_mbps);
    }
    if (all_active) {
      j["rate_spread_at_end"] = hi > 0 ? (hi - lo) / hi : 0.0;
      break;
    }
  }
  j["goodput_convergence_ns"] = convergence_ns(samples, senders, [](const qp_sample& q) { return q.goodput_mbps; });
  j["fair_share_convergence_ns"] = fair_share_convergence_ns(samples, senders, convergence_samples);
}

// Under mpirun: the rows samples[first ..] as every rank took them, each holding only what it simulates (zero
// elsewhere), merged so that every rank holds the one-process rows. A value held by one rank is summed (as
// bits for the doubles: exact), the largest queue of all switches is the maximum over the ranks' own.
void merge_samples(scale_out& so, std::vector<qp_sample>& samples, size_t first) {
  constexpr size_t k_words = 10;
  const size_t n = samples.size() - first;
  std::vector<uint64_t> words(n * k_words, 0);
  auto bits = [](double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
  };
  for (size_t k = 0; k < n; ++k) {
    const qp_sample& q = samples[first + k];
    const uint64_t w[k_words] = {uint64_t(q.st.paced),   bits(q.st.rate_mbps),    bits(q.st.target_mbps),
                                 bits(q.st.alpha),       bits(q.st.window_bytes), q.st.inflight_bytes,
                                 bits(q.st.utilization), q.st.outstanding,        q.st.placed_bytes,
                                 q.dst_port_queue_bytes};
    std::memcpy(&words[k * k_words], w, sizeof w);
  }
  so.sum(words);
  std::vector<uint64_t> max_queue{n ? samples[first].max_queue_bytes : 0};
  so.max(max_queue);
  auto real = [](uint64_t b) {
    double d;
    std::memcpy(&d, &b, sizeof d);
    return d;
  };
  for (size_t k = 0; k < n; ++k) {
    qp_sample& q = samples[first + k];
    const uint64_t* w = &words[k * k_words];
    q.st.paced = w[0] != 0;
    q.st.rate_mbps = real(w[1]);
    q.st.target_mbps = real(w[2]);
    q.st.alpha = real(w[3]);
    q.st.window_bytes = real(w[4]);
    q.st.inflight_bytes = w[5];
    q.st.utilization = real(w[6]);
    q.st.outstanding = w[7];
    q.st.placed_bytes = w[8];
    q.dst_port_queue_bytes = w[9];
    q.max_queue_bytes = max_queue[0];
  }
}

// run.timeseries_csv (docs/report.md): one row per sample and sending QP. Under mpirun every rank holds the
// merged samples and rank 0 writes the file; an error there stops every rank with its message.
void write_timeseries_csv(const scenario& s, scale_out& so, topology::fabric& fab,
                          const std::vector<sender_qp>& senders, const std::vector<qp_sample>& samples) {
  std::string error;
  if (so.rank() == 0) {
    std::ofstream csv(s.run.timeseries_csv);
    if (!csv) {
      error = s.source + ": run.timeseries_csv " + s.run.timeseries_csv + ": cannot open for writing";
    } else {
      csv << "time_ns,src,dst,qpn,active,rate_mbps,target_mbps,alpha,window_bytes,inflight_bytes,hpcc_u,"
             "dst_port_queue_bytes,max_queue_bytes,delivered_bytes,goodput_mbps\n";
      for (const qp_sample& q : samples) {
        const sender_qp& sq = senders[q.sender];
        csv << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", q.t.ns(), fab.hosts()[sq.src].name,
                           fab.hosts()[sq.dst].name, sq.sq, int(q.active), q.st.rate_mbps, q.st.target_mbps, q.st.alpha,
                           q.st.window_bytes, q.st.inflight_bytes, q.st.utilization, q.dst_port_queue_bytes,
                           q.max_queue_bytes, q.st.placed_bytes, q.goodput_mbps);
      }
      if (!csv) error = s.source + ": run.timeseries_csv " + s.run.timeseries_csv + ": write failed";
    }
  }
  if (so.distributed()) error = so.first_message(error);
  if (!error.empty()) throw core::config_error(error);
}

nlohmann::json latency_summary_ns(const core::fine_histogram& h) {
  nlohmann::json j;
  j["count"] = h.count();
  const auto ns = [&](uint64_t ps) { return h.count() ? nlohmann::json(double(ps) / 1e3) : nlohmann::json(nullptr); };
  j["mean"] = h.count() ? nlohmann::json(h.mean() / 1e3) : nlohmann::json(nullptr);
  j["p50"] = ns(h.quantile(0.5));
  j["p90"] = ns(h.quantile(0.9));
  j["p99"] = ns(h.quantile(0.99));
  j["p999"] = ns(h.quantile(0.999));
  j["max"] = ns(h.max());
  return j;
}

}  // namespace fabricsim::testbench
