// `fabricsim replay`: a capture's messages as work requests on a modelled fabric.
#include "testbench/replay.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "sc_models/core/params.h"
#include "sc_models/core/units.h"
#include "sc_models/topology/fabric.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/workload.h"

namespace fabricsim::testbench {
namespace {

using traces::captured_message;
using traces::flow_key;
using traces::message_op;

// The latest post time: the scenario's own time limit (run.duration_us, run.limit_us: 1000 s).
constexpr double k_max_post_ns = 1e12;

std::string ip_string(const core::ip_address& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.is_v4_mapped()) {
    const uint32_t v = a.v4_value();
    return fmt::format("{}.{}.{}.{}", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
  }
  inet_ntop(AF_INET6, a.octets.data(), buf, sizeof buf);
  return buf;
}

bool ip_less(const core::ip_address& a, const core::ip_address& b) { return a.octets < b.octets; }

// Every address that sends or receives RoCEv2 in the capture, in address order: endpoint i becomes host i.
std::vector<core::ip_address> capture_endpoints(const traces::capture_trace& t) {
  std::vector<core::ip_address> v;
  for (const auto& [key, stats] : t.summary.flows) {
    v.push_back(key.src);
    v.push_back(key.dst);
  }
  std::sort(v.begin(), v.end(), ip_less);
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

size_t endpoint_index(const std::vector<core::ip_address>& eps, const core::ip_address& a) {
  return size_t(std::lower_bound(eps.begin(), eps.end(), a, ip_less) - eps.begin());
}

// The fabric host whose own address each endpoint is, when every endpoint is one (a capture of a fabricsim
// run, --tap): host k has topology::host_ip(k). Empty when any endpoint is another address.
std::vector<size_t> hosts_by_address(const std::vector<core::ip_address>& eps) {
  std::vector<size_t> host;
  const uint32_t first = topology::host_ip(0).v4_value();
  for (const core::ip_address& a : eps) {
    if (!a.is_v4_mapped() || a.v4_value() < first || a.v4_value() - first >= topology::k_max_hosts) return {};
    host.push_back(a.v4_value() - first);
  }
  return host;
}

// A flow's PSN figures of one PSN space (docs/report.md, trace.flows[].psn); null when it has none.
nlohmann::json psn_json(const traces::psn_stats& p) {
  if (p.packets == 0) return nullptr;
  return {{"first", p.first},
          {"last", p.last},
          {"span", ((p.last - p.first) & core::psn_mask) + 1},
          {"distinct", p.seen.size()},
          {"out_of_order", p.out_of_order},
          {"duplicates", p.duplicates}};
}

nlohmann::json flow_id(const flow_key& k) {
  return {{"src", ip_string(k.src)}, {"dst", ip_string(k.dst)}, {"dest_qp", k.dest_qp}};
}

// One function per operation: each turns a captured message into a work request of the replay, or returns
// why it cannot be posted. The captured flow runs requester -> responder, so `src` is the requester in all
// three: a WRITE or SEND moves its bytes to `dst`, a READ brings the responder's bytes back to `src`.
std::string plan_common(const captured_message& m, size_t src, size_t dst, uint32_t qp_group,
                        core::picoseconds post_at, nic::rdma_op op, planned_flow& out) {
  out.src = src;
  out.dst = dst;
  out.bytes = m.length;
  out.post_at = post_at;
  out.qp_group = qp_group;
  out.op = op;
  return "";
}
// A zero-length WRITE is one ONLY packet without payload: the NIC model posts it like any other.
std::string plan_write(const captured_message& m, size_t src, size_t dst, uint32_t qp_group,
                       core::picoseconds post_at, planned_flow& out) {
  return plan_common(m, src, dst, qp_group, post_at, m.immediate ? nic::rdma_op::write_imm : nic::rdma_op::write,
                     out);
}
// The length is the payload seen from FIRST to LAST; the run posts a receive of that size at the responder
// (testbench/simulation.cpp) before the SEND can arrive.
std::string plan_send(const captured_message& m, size_t src, size_t dst, uint32_t qp_group,
                      core::picoseconds post_at, planned_flow& out) {
  return plan_common(m, src, dst, qp_group, post_at, m.immediate ? nic::rdma_op::send_imm : nic::rdma_op::send,
                     out);
}
// The request's RETH length; the READ RESPONSE packets of the capture are the responder's answer, which the
// modelled responder makes itself.
std::string plan_read(const captured_message& m, size_t src, size_t dst, uint32_t qp_group,
                      core::picoseconds post_at, planned_flow& out) {
  return plan_common(m, src, dst, qp_group, post_at, nic::rdma_op::read, out);
}

bool supported_mtu(uint64_t m) { return m == 256 || m == 512 || m == 1024 || m == 2048 || m == 4096; }

// The path MTU of each endpoint from the capture: every flow's (its FIRST and MIDDLE payloads), the smallest
// over each group of endpoints that talk to each other, since both ends of a queue pair run one path MTU;
// 0 where the capture shows none the NIC supports. A group whose flows differ gets a line in `warnings`.
std::vector<uint64_t> endpoint_mtus(const traces::capture_trace& t, const std::vector<core::ip_address>& eps,
                                    const std::string& trace, std::vector<std::string>& warnings) {
  std::vector<size_t> group(eps.size());
  for (size_t i = 0; i < group.size(); ++i) group[i] = i;
  auto root = [&](size_t i) {
    while (group[i] != i) i = group[i] = group[group[i]];
    return i;
  };
  for (const auto& [key, mtu] : t.path_mtu_by_flow)
    if (supported_mtu(mtu)) group[root(endpoint_index(eps, key.src))] = root(endpoint_index(eps, key.dst));
  std::map<size_t, std::set<uint64_t>> mtus;  // group root -> the flows' MTUs
  for (const auto& [key, mtu] : t.path_mtu_by_flow)
    if (supported_mtu(mtu)) mtus[root(endpoint_index(eps, key.src))].insert(mtu);
  std::vector<uint64_t> out(eps.size(), 0);
  for (size_t i = 0; i < eps.size(); ++i) {
    auto it = mtus.find(root(i));
    if (it != mtus.end()) out[i] = *it->second.begin();
  }
  for (const auto& [r, set] : mtus)
    if (set.size() > 1)
      warnings.push_back(
          fmt::format("{}: queue pairs of path MTUs {} share endpoints (with {}): they all run at the "
                      "smallest, {} bytes",
                      trace, fmt::join(set, ", "), ip_string(eps[r]), *set.begin()));
  return out;
}

// The fabric used without --scenario: one Spectrum switch with `hosts` ports (at least two), at the
// capture's path MTU when it is one the NIC supports; `host_mtu` gives hosts whose queue pairs run another.
std::string default_scenario_yaml(const std::string& trace, size_t hosts, uint64_t mtu,
                                  const std::map<std::string, uint64_t>& host_mtu) {
  hosts = std::max<size_t>(2, hosts);
  const bool breakout = hosts > 128;  // 128 x 400G, else 256 x 200G (the same 51.2 Tb/s ASIC)
  std::string overrides;
  for (const auto& [host, m] : host_mtu)
    overrides += fmt::format("{}{}: {{mtu_bytes: {}}}", overrides.empty() ? "" : ", ", host, m);
  return fmt::format(
      "name: replay\n"
      "description: \"replay of {} on one Spectrum switch with a port per endpoint\"\n"
      "run: {{duration_us: 0, limit_us: 100000}}\n"
      "topology: {{kind: single_switch, hosts: {}, link_gbps: {}}}\n"
      "switch: {{port_config: {}}}\n"
      "nic: {{mtu_bytes: {}}}\n{}",
      trace, hosts, breakout ? 200 : 400, breakout ? "256x200" : "128x400", mtu,
      overrides.empty() ? "" : "nic_overrides: {" + overrides + "}\n");
}

}  // namespace

replay_timing parse_replay_timing(const std::string& value) {
  replay_timing t;
  t.text = value;
  if (value == "captured") return t;
  if (value == "asap") {
    t.kind = replay_timing::mode::asap;
    return t;
  }
  const std::string expected =
      "--timing " + value +
      ": expected captured (the capture's own gaps), asap (every message at time 0, in capture order) or "
      "scale=X (the gaps multiplied by X, a number above 0, e.g. scale=0.5)";
  if (value.compare(0, 6, "scale=") != 0) throw core::config_error(expected);
  const std::string number = value.substr(6);
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(number.c_str(), &end);
  if (number.empty() || *end != '\0' || errno != 0 || !std::isfinite(x) || x <= 0 || x > 1e6)
    throw core::config_error(expected + "; '" + number + "' is not such a number (at most 1e6)");
  t.kind = replay_timing::mode::scale;
  t.factor = x;
  return t;
}

nlohmann::json trace_json(const traces::capture_trace& t, const std::vector<std::string>& hosts) {
  const traces::capture_summary& s = t.summary;
  nlohmann::json j;
  j["file"] = s.path;
  j["frames"] = s.frames;
  j["roce_packets"] = s.roce_packets;
  nlohmann::json by_reason = nlohmann::json::object();
  for (const auto& [reason, n] : s.skipped_by_reason) by_reason[reason] = n;
  j["skipped_frames"] = {{"total", s.skipped_frames + s.malformed_frames}, {"by_reason", by_reason}};
  j["malformed"] = s.malformed_messages;
  j["header_only_frames"] = s.header_only_frames;  // cut by the snapshot length: headers decoded, payload not kept
  nlohmann::json cm = nlohmann::json::object();
  for (const auto& [name, n] : t.connection_management.by_message) cm[name] = n;
  j["connection_management"] = {{"packets", t.connection_management.packets}, {"by_message", cm}};
  j["atomic_acks"] = t.atomic_acks;
  j["warning"] = s.warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.warning);
  j["duration_ns"] = s.last_frame_ns - s.first_frame_ns;
  j["path_mtu_bytes"] = t.path_mtu_bytes ? nlohmann::json(t.path_mtu_bytes) : nlohmann::json(nullptr);

  const std::vector<core::ip_address> eps = capture_endpoints(t);
  nlohmann::json endpoints = nlohmann::json::array();
  for (size_t i = 0; i < eps.size(); ++i) {
    nlohmann::json e = {{"ip", ip_string(eps[i])}};
    if (i < hosts.size()) e["host"] = hosts[i];
    endpoints.push_back(std::move(e));
  }
  j["endpoints"] = std::move(endpoints);

  std::map<flow_key, uint64_t> messages_per_flow;
  std::map<std::string, uint64_t> by_op;
  uint64_t incomplete = 0, immediate = 0;
  for (const captured_message& m : t.messages) {
    ++messages_per_flow[m.flow];
    ++by_op[traces::to_string(m.op)];
    incomplete += !m.unreplayable.empty();
    immediate += m.immediate;
  }
  j["messages"] = {
      {"total", t.messages.size()},  {"WRITE", by_op["WRITE"]},       {"SEND", by_op["SEND"]},
      {"READ", by_op["READ"]},       {"CMP_SWAP", by_op["CMP_SWAP"]}, {"FETCH_ADD", by_op["FETCH_ADD"]},
      {"UD_SEND", by_op["UD_SEND"]}, {"with_immediate", immediate},   {"first_packet_missing", incomplete}};

  nlohmann::json flows = nlohmann::json::array();
  for (const auto& [key, f] : s.flows) {
    nlohmann::json o = flow_id(key);
    o["packets"] = f.packets;
    o["payload_bytes"] = f.payload_bytes;
    o["ecn_ce_packets"] = f.ecn_ce_packets;
    nlohmann::json ops = nlohmann::json::object();
    for (const auto& [opcode, n] : f.packets_by_opcode) ops[traces::opcode_name(opcode)] = n;
    o["opcodes"] = std::move(ops);
    o["psn"] = psn_json(f.requests);  // null: CNPs or responses only
    o["response_psn"] = psn_json(f.responses);
    auto mtu = t.path_mtu_by_flow.find(key);
    o["path_mtu_bytes"] = mtu == t.path_mtu_by_flow.end() ? nlohmann::json(nullptr) : nlohmann::json(mtu->second);
    auto it = messages_per_flow.find(key);
    o["messages"] = it == messages_per_flow.end() ? 0 : it->second;
    auto a = t.acks.find(key);
    const traces::ack_counts acks = a == t.acks.end() ? traces::ack_counts{} : a->second;
    o["acks"] = acks.acks;
    o["naks"] = acks.naks;
    o["rnr_naks"] = acks.rnr_naks;
    flows.push_back(std::move(o));
  }
  j["flows"] = std::move(flows);
  return j;
}

namespace {

// The capture's messages as work requests: each captured requester QP (source, destination, destination
// QP) gets its own queue pair in the model; what cannot be posted is listed with its reason (and warned of).
struct replay_plan {
  std::vector<planned_flow> planned;
  std::vector<size_t> message_of;  // planned[i] replays t.messages[message_of[i]]
  nlohmann::json unreplayable = nlohmann::json::array(), not_replayed = nlohmann::json::array();
  nlohmann::json notes = nlohmann::json::array();  // posted messages the capture holds only in part
};

replay_plan plan_messages(const traces::capture_trace& t, const std::vector<core::ip_address>& eps,
                          const std::vector<size_t>& host_index, const replay_options& opts,
                          std::vector<std::string>& warnings) {
  replay_plan out;
  std::vector<planned_flow>& planned = out.planned;
  std::vector<size_t>& message_of = out.message_of;
  nlohmann::json &unreplayable = out.unreplayable, &not_replayed = out.not_replayed, &notes = out.notes;
  std::map<flow_key, uint32_t> qp_group;
  std::map<std::pair<std::string, std::string>, uint64_t> not_replayed_ops;  // (op, reason) -> messages
  for (size_t i = 0; i < t.messages.size(); ++i) {
    const captured_message& m = t.messages[i];
    nlohmann::json id = flow_id(m.flow);
    id["op"] = traces::to_string(m.op);
    id["psn"] = m.first_psn;
    id["frame"] = m.first_frame;
    if (!m.unreplayable.empty()) {
      id["reason"] = m.unreplayable;
      unreplayable.push_back(std::move(id));
      continue;
    }
    const double gap_ns = double(m.first_seen_ns - t.summary.first_frame_ns);
    const double post_ns = opts.timing.kind == replay_timing::mode::asap    ? 0.0
                           : opts.timing.kind == replay_timing::mode::scale ? gap_ns * opts.timing.factor
                                                                             : gap_ns;
    if (post_ns > k_max_post_ns)
      throw core::config_error(fmt::format("--timing {}: frame {} of {} would be posted at {:.3f} s, beyond the {:.0f} s "
                                           "a run can simulate; use asap or a smaller scale",
                                           opts.timing.text, m.first_frame, opts.trace, post_ns * 1e-9,
                                           k_max_post_ns * 1e-9));
    const core::picoseconds post_at = core::picoseconds::from_ns(post_ns);
    const size_t src = host_index[endpoint_index(eps, m.flow.src)], dst = host_index[endpoint_index(eps, m.flow.dst)];
    const uint32_t group = qp_group.emplace(m.flow, uint32_t(qp_group.size())).first->second;
    planned_flow f;
    std::string why;
    if (src == dst) {
      why = "source and destination are the same endpoint";
    } else {
      switch (m.op) {
        case message_op::write: why = plan_write(m, src, dst, group, post_at, f); break;
        case message_op::send: why = plan_send(m, src, dst, group, post_at, f); break;
        case message_op::read: why = plan_read(m, src, dst, group, post_at, f); break;
        case message_op::cmp_swap:
        case message_op::fetch_add:
          why = "atomics are decoded and counted but not replayed: the NIC model has no atomic operation";
          break;
        case message_op::ud_send:
          why = "UD datagrams are decoded and counted but not replayed: the NIC model runs RC queue pairs";
          break;
      }
    }
    if (!why.empty()) {
      id["reason"] = why;
      ++not_replayed_ops[{traces::to_string(m.op), why}];
      not_replayed.push_back(std::move(id));
      continue;
    }
    planned.push_back(f);
    message_of.push_back(i);
    if (!m.note.empty()) {
      id["note"] = m.note;
      notes.push_back(std::move(id));
    }
  }
  for (const auto& [op_reason, n] : not_replayed_ops)
    warnings.push_back(
        fmt::format("{}: {} {} message(s) not replayed: {}", opts.trace, n, op_reason.first, op_reason.second));
  if (!unreplayable.empty())
    warnings.push_back(
        fmt::format("{}: {} message(s) cannot be replayed, their FIRST packet is not in the "
                    "capture (replay.unreplayable)",
                    opts.trace, unreplayable.size()));

  return out;
}

// Per captured flow: what the model made of its messages (the run's flows are indexed like plan.planned).
nlohmann::json replayed_flows(const traces::capture_trace& t, const replay_plan& plan, const nlohmann::json& run_flows,
                              const std::vector<core::ip_address>& eps, const std::vector<std::string>& host_of) {
  struct per_flow {
    uint64_t posted = 0, completed = 0, posted_bytes = 0, completed_bytes = 0;
    double first_post_ns = INFINITY, last_completion_ns = 0, latency_sum_ns = 0, latency_max_ns = 0;
    std::map<std::string, uint64_t> ops;  // posted work requests by operation (write, write_imm, send, ...)
  };
  std::map<flow_key, per_flow> pf;
  const std::vector<planned_flow>& planned = plan.planned;
  const std::vector<size_t>& message_of = plan.message_of;
  for (size_t i = 0; i < planned.size(); ++i) {
    per_flow& p = pf[t.messages[message_of[i]].flow];
    const nlohmann::json& r = run_flows.at(i);
    ++p.posted;
    ++p.ops[nic::to_string(planned[i].op)];
    p.posted_bytes += planned[i].bytes;
    p.first_post_ns = std::min(p.first_post_ns, r.at("posted_ns").get<double>());
    if (!r.at("completed").get<bool>()) continue;
    ++p.completed;
    p.completed_bytes += planned[i].bytes;
    p.last_completion_ns = std::max(p.last_completion_ns, r.at("completed_ns").get<double>());
    const double fct = r.at("fct_ns").get<double>();
    p.latency_sum_ns += fct;
    p.latency_max_ns = std::max(p.latency_max_ns, fct);
  }
  nlohmann::json flows = nlohmann::json::array();
  for (const auto& [key, p] : pf) {
    nlohmann::json o = flow_id(key);
    o["src_host"] = host_of[endpoint_index(eps, key.src)];
    o["dst_host"] = host_of[endpoint_index(eps, key.dst)];
    o["posted"] = p.posted;
    o["ops"] = p.ops;
    o["completed"] = p.completed;
    o["posted_bytes"] = p.posted_bytes;
    o["completed_bytes"] = p.completed_bytes;
    o["first_post_ns"] = p.first_post_ns;
    if (p.completed > 0) {
      const double span = p.last_completion_ns - p.first_post_ns;
      o["last_completion_ns"] = p.last_completion_ns;
      o["throughput_gbps"] = span > 0 ? double(p.completed_bytes) * 8.0 / span : 0.0;
      o["mean_latency_ns"] = p.latency_sum_ns / double(p.completed);
      o["max_latency_ns"] = p.latency_max_ns;
    } else {
      o["last_completion_ns"] = nullptr;
      o["throughput_gbps"] = nullptr;
      o["mean_latency_ns"] = nullptr;
      o["max_latency_ns"] = nullptr;
    }
    flows.push_back(std::move(o));
  }
  return flows;
}

// The path MTU the capture shows, when it is an IB one; else 4096.
uint64_t capture_mtu(const traces::capture_trace& t) {
  for (uint64_t m : {256, 512, 1024, 2048, 4096})
    if (t.path_mtu_bytes == m) return m;
  return 4096;
}

core::picoseconds last_post(const std::vector<planned_flow>& planned) {
  core::picoseconds last{0};
  for (const planned_flow& f : planned) last = std::max(last, f.post_at);
  return last;
}

}  // namespace

replay_result run_replay(const replay_options& opts) {
  replay_result result;
  const traces::capture_trace t = traces::analyze_capture(opts.trace);
  // A RETH length the capture contradicts would size a buffer of up to 4 GiB: refused before anything exists.
  for (const captured_message& m : t.messages)
    if (!m.length_error.empty())
      throw core::config_error(opts.trace + ": " + m.length_error +
                               " (a replay posts the RETH length; nothing was run)");
  if (!t.summary.warning.empty()) result.warnings.push_back(t.summary.warning);
  for (const std::string& m : t.summary.malformed_messages) result.warnings.push_back(m + " (skipped)");

  const std::vector<core::ip_address> eps = capture_endpoints(t);
  const uint64_t mtu = capture_mtu(t);
  constexpr size_t k_one_switch_ports = 256;  // the most ports the default fabric's one switch has
  // Endpoints that are all fabric addresses keep their hosts; otherwise endpoint i (address order) is host i.
  std::vector<size_t> by_address = hosts_by_address(eps);
  const size_t by_address_hosts = by_address.empty() ? 0 : *std::max_element(by_address.begin(), by_address.end()) + 1;
  if (opts.scenario_file.empty() && by_address_hosts > k_one_switch_ports) by_address.clear();
  if (opts.scenario_file.empty() && by_address.empty() && eps.size() > k_one_switch_ports)
    throw core::config_error(opts.trace + ": the capture has " + std::to_string(eps.size()) +
                             " endpoints, more than one switch holds (256); give a fabric with --scenario");

  std::vector<std::string> overrides = opts.sets;
  if (!opts.seed.empty()) overrides.push_back("seed=" + opts.seed);
  const size_t default_hosts = by_address.empty() ? eps.size() : by_address_hosts;
  // Each queue pair's path MTU from the capture, unless a scenario or a --set gives one.
  std::map<std::string, uint64_t> host_mtu;
  const bool mtu_given = !opts.scenario_file.empty() ||
                         std::any_of(opts.sets.begin(), opts.sets.end(),
                                     [](const std::string& o) { return o.find("mtu_bytes=") != std::string::npos; });
  if (!mtu_given) {
    const std::vector<uint64_t> by_endpoint = endpoint_mtus(t, eps, opts.trace, result.warnings);
    for (size_t i = 0; i < eps.size(); ++i)
      if (by_endpoint[i] != 0 && by_endpoint[i] != mtu)
        host_mtu[topology::host_name(by_address.empty() ? i : by_address[i])] = by_endpoint[i];
  }
  scenario s = opts.scenario_file.empty()
                   ? load_scenario_text(default_scenario_yaml(opts.trace, default_hosts, mtu, host_mtu),
                                        "<replay default fabric>", overrides)
                   : load_scenario_file(opts.scenario_file, overrides);
  const size_t hosts = s.topology.host_count();
  if (by_address_hosts > hosts) by_address.clear();
  if (by_address.empty() && eps.size() > hosts) {
    std::string list;
    for (const core::ip_address& a : eps) list += (list.empty() ? "" : ", ") + ip_string(a);
    throw core::config_error(s.source + ": the capture " + opts.trace + " has " + std::to_string(eps.size()) +
                             " endpoints (" + list + ") but the fabric has " + std::to_string(hosts) +
                             " hosts; endpoint i (in address order) is mapped onto host hi");
  }
  std::vector<size_t> host_index(eps.size());
  std::vector<std::string> host_of(eps.size());
  for (size_t i = 0; i < eps.size(); ++i) {
    host_index[i] = by_address.empty() ? i : by_address[i];
    host_of[i] = topology::host_name(host_index[i]);
  }

  // Messages -> work requests.
  replay_plan plan = plan_messages(t, eps, host_index, opts, result.warnings);
  std::vector<planned_flow>& planned = plan.planned;

  nlohmann::json replay;
  replay["timing"] = opts.timing.text;
  replay["scale"] = opts.timing.kind == replay_timing::mode::scale ? opts.timing.factor : 1.0;
  replay["fabric"] = opts.scenario_file.empty() ? "<replay default fabric>" : opts.scenario_file;
  replay["mapping"] = by_address.empty() ? "address_order" : "by_address";
  replay["path_mtu"] = {
      {"source", mtu_given ? "scenario" : "capture"}, {"nic_mtu_bytes", s.nic.mtu_bytes}, {"by_host", host_mtu}};
  replay["messages_posted"] = planned.size();
  replay["unreplayable"] = std::move(plan.unreplayable);
  replay["not_replayed"] = std::move(plan.not_replayed);
  replay["partial_in_capture"] = std::move(plan.notes);

  if (planned.empty()) {
    result.warnings.push_back(opts.trace + ": no message of the capture can be posted; nothing was simulated");
    replay["flows"] = nlohmann::json::array();
    replay["warnings"] = result.warnings;
    result.report["trace"] = trace_json(t, host_of);
    result.report["replay"] = std::move(replay);
    return result;
  }

  // Captured times can lie beyond the scenario's safety stop: it counts from the last post instead.
  if (s.run.duration_us == 0) s.run.limit_us += last_post(planned).ns() / 1e3;

  run_options ro;
  ro.scenario_file = opts.scenario_file.empty() ? "<replay default fabric>" : opts.scenario_file;
  ro.taps = opts.taps;
  ro.workload = &planned;
  result.report = run_scenario(s, ro);
  result.simulated = true;

  replay["flows"] = replayed_flows(t, plan, result.report.at("flows"), eps, host_of);
  replay["warnings"] = result.warnings;
  result.report["trace"] = trace_json(t, host_of);
  result.report["replay"] = std::move(replay);
  return result;
}

std::string format_replay_table(const nlohmann::json& r) {
  const nlohmann::json& t = r.at("trace");
  const nlohmann::json& rp = r.at("replay");
  std::string out;
  out += fmt::format("capture {}: {} frames, {} RoCEv2 packets, {} skipped", t.at("file").get<std::string>(),
                     t.at("frames").get<uint64_t>(), t.at("roce_packets").get<uint64_t>(),
                     t.at("skipped_frames").at("total").get<uint64_t>());
  std::string reasons;
  for (const auto& [reason, n] : t.at("skipped_frames").at("by_reason").items())
    reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ", reason, n.get<uint64_t>());
  if (!reasons.empty()) out += " (" + reasons + ")";
  out += fmt::format(", {} flows\n", t.at("flows").size());
  std::string map;
  for (const auto& e : t.at("endpoints"))
    map += fmt::format("{}{} -> {}", map.empty() ? "" : ", ", e.at("ip").get<std::string>(),
                       e.value("host", std::string("-")));
  out += "endpoints: " + map + "\n";
  out += fmt::format("messages: {} captured, {} posted (timing {}), {} unreplayable, {} not replayed\n",
                     t.at("messages").at("total").get<uint64_t>(), rp.at("messages_posted").get<uint64_t>(),
                     rp.at("timing").get<std::string>(), rp.at("unreplayable").size(), rp.at("not_replayed").size());
  if (rp.at("flows").empty()) return out;
  out += fmt::format("\n{:>16} {:>16} {:>8} {:>6} {:>6} {:>12} {:>10} {:>12} {:>12}\n", "src", "dst", "dest_qp",
                     "posted", "done", "bytes", "Gb/s", "mean_lat_ns", "max_lat_ns");
  for (const auto& f : rp.at("flows")) {
    auto num = [&](const char* k, const char* fmtspec) {
      return f.at(k).is_null() ? std::string("-") : fmt::format(fmt::runtime(fmtspec), f.at(k).get<double>());
    };
    out += fmt::format("{:>16} {:>16} {:>#8x} {:>6} {:>6} {:>12} {:>10} {:>12} {:>12}\n",
                       f.at("src").get<std::string>() + "/" + f.at("src_host").get<std::string>(),
                       f.at("dst").get<std::string>() + "/" + f.at("dst_host").get<std::string>(),
                       f.at("dest_qp").get<uint32_t>(), f.at("posted").get<uint64_t>(),
                       f.at("completed").get<uint64_t>(), f.at("completed_bytes").get<uint64_t>(),
                       num("throughput_gbps", "{:.1f}"), num("mean_latency_ns", "{:.1f}"),
                       num("max_latency_ns", "{:.1f}"));
  }
  return out;
}

}  // namespace fabricsim::testbench
