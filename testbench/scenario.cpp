// A scenario: the YAML file of one run mapped onto the per-block params structs, with `--set` overrides.
#include "testbench/scenario.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "sc_models/topology/graph_file.h"
#include "testbench/cli_errors.h"
#include "testbench/config_yaml.h"
#include "testbench/explain.h"
#include "testbench/failed_cables.h"
#include "testbench/jobs.h"

namespace fabricsim::testbench {

using core::config_error;

// 2^40 bytes: a message size limit far above any real one (RoCE allows 2 GiB) that keeps byte offsets and
// buffer sums of many messages far from overflow.
constexpr double k_max_message_bytes = 1099511627776.0;
// 1000 s of simulated time in ns: far beyond any run, far below the 2^64 ps the simulated clock holds.
constexpr double k_max_time_ns = 1e12;

void run_params::visit(core::param_visitor& v) {
  v.field({"duration_us", "us", "simulated time to run; 0 runs until every operation of the workload has completed",
           0.0, k_max_time_ns / 1e3},
          duration_us);
  v.field({"limit_us", "us", "when duration_us is 0: simulated time after which an unfinished run stops", 0.0,
           k_max_time_ns / 1e3},
          limit_us);
  v.field({"warmup_us", "us",
           "start of the measurement window of the `fabric` report: payload delivered before it is not counted",
           0.0, k_max_time_ns / 1e3},
          warmup_us);
  v.field({"sample_us", "us",
           "time-series sampling period: every period, one sample per sending queue pair (DCQCN rate, alpha, "
           "queues, delivered bytes; docs/report.md); 0: off. The simulation is stopped and resumed at each "
           "sample, no model event is added, so results do not change",
           0.0, k_max_time_ns / 1e3},
          sample_us);
  v.field({"convergence_window_us", "us",
           "fair_share_convergence_ns: each sender's goodput is averaged over this window (whole sample periods) "
           "before it is compared with the fair share; DCQCN's rates saw-tooth on a few-us scale",
           0.0, k_max_time_ns / 1e3},
          convergence_window_us);
  v.field({"timeseries_csv", "",
           "write the samples as CSV to this file (relative paths: to the current directory; --timeseries "
           "sets it); needs sample_us"},
          timeseries_csv);
  v.field({"record_rtl_dir", "",
           "record every transaction each RTL block instance (reorder tracker, DCQCN reaction point, CNP "
           "generator; RTL or reference model alike) saw, one file per block type in this directory, for "
           "`fabricsim verify-rtl --block NAME --replay DIR/NAME.txt` (--record-rtl sets it; empty: off)"},
          record_rtl_dir);
  v.field({"rtl_wave_dir", "",
           "where a lockstep block (nic.reorder, nic.cnp_model or nic.dcqcn_model lockstep) that diverges from its "
           "reference model writes an FST waveform of its last transactions, <nic>.<qp>.<block>.fst (--wave sets "
           "it; empty: none; docs/verification.md)"},
          rtl_wave_dir);
  v.field({"memory_limit_mib", "MiB",
           "refuse a run whose model would need more memory than this: the build measures the memory its first "
           "256 hosts take (and again at every doubling) and stops, naming the projection and the topology keys, "
           "before the rest is taken; dense buffers (workload.memory) are checked against it before the build. "
           "0: 3/4 of this machine's physical memory (docs/performance.md)",
           0.0, 1e9},
          memory_limit_mib);
}

void write_op::visit(core::param_visitor& v) {
  v.field({"src", "", "requester host, h0 .. h(n-1) (required)"}, src);
  v.field({"dst", "", "responder host whose memory is written (required)"}, dst);
  v.field({"bytes", "bytes", "message size (required)", 0.0, k_max_message_bytes}, bytes);
  v.field({"start_ns", "ns", "simulated time at which the work request is posted", 0.0, k_max_time_ns}, start_ns);
  v.field({"op", "",
           "operation: write (src -> dst), write_imm (also consumes a receive at dst), read (dst's memory -> src's), "
           "send or send_imm (into a receive buffer the testbench posts at dst)",
           0.0, 0.0, {"write", "write_imm", "read", "send", "send_imm"}},
          op);
}

void fault_entry::visit(core::param_visitor& v) {
  v.field({"kind",
           "",
           "link_down: the cable's carrier goes for an interval (both directions); flap: down for down_us every "
           "period_us; loss: frames lost at random on one direction; bit_errors: frames corrupted at a bit error "
           "ratio on one direction, dropped by the receiver's FCS check; port_down: a switch port fails (its cable "
           "down, both directions); links_down: a seeded choice of a fraction of a tier's cables has failed before the "
           "run (the fabric is built and routed without them); misplace: a NIC's DMA writes one received payload "
           "offset_bytes off (a planted "
           "placement bug the byte check must catch)",
           0.0,
           0.0,
           {"link_down", "flap", "loss", "bit_errors", "port_down", "links_down", "misplace"}},
          kind);
  v.field({"link", "", "link_down, flap, loss, bit_errors: the link, <from>_to_<to>[_k] (or <from>-><to>), e.g. "
                       "leaf0_to_spine1 (docs/topology.md)"},
          link);
  v.field({"switch", "", "port_down: the switch, e.g. leaf0"}, switch_name);
  v.field({"port", "", "port_down: the switch's port", 0.0, 65535.0}, port);
  v.field({"at_us", "us", "link_down, port_down: when the carrier goes", 0.0, k_max_time_ns / 1e3}, at_us);
  v.field({"for_us", "us", "link_down, port_down: how long it stays down; 0: for the rest of the run", 0.0,
           k_max_time_ns / 1e3},
          for_us);
  v.field({"period_us", "us", "flap: one down-up cycle", 0.0, k_max_time_ns / 1e3}, period_us);
  v.field({"down_us", "us", "flap: the down part of each cycle (below period_us)", 0.0, k_max_time_ns / 1e3}, down_us);
  v.field({"from_us", "us", "flap, loss, bit_errors: start of the fault", 0.0, k_max_time_ns / 1e3}, from_us);
  v.field({"until_us", "us", "flap, loss, bit_errors: end of the fault; 0: the end of the run", 0.0,
           k_max_time_ns / 1e3},
          until_us);
  v.field({"probability", "", "loss: chance that a frame is lost (PFC frames too)", 0.0, 1.0}, probability);
  v.field({"ber", "", "bit_errors: bit error ratio; a frame of n bits is lost with probability 1 - (1 - ber)^n",
           0.0, 1.0},
          ber);
  v.field({"host", "", "misplace: the host whose NIC misplaces a payload, e.g. h1"}, host);
  v.field({"after_packets", "packets",
           "misplace: payload-carrying packets (WRITE and SEND data, READ responses) the NIC places correctly "
           "before the one it misplaces",
           0.0, 1e15},
          after_packets);
  v.field({"offset_bytes", "bytes",
           "misplace: how far past its address that payload is written (at least 1; less when memory ends first)", 0.0,
           double(1u << 30)},
          offset_bytes);
  v.field({"fraction", "",
           "links_down: the share of the tier's cables that fail, rounded to the nearest whole cable (at least one "
           "must be chosen); which ones is drawn from the run seed and the entry's index",
           0.0, 1.0},
          fraction);
  v.field({"tier",
           "",
           "links_down: which cables may fail: leaf_spine (a switch with hosts to one without), spine_core (two "
           "switches without hosts) or switch (every switch-to-switch cable)",
           0.0,
           0.0,
           {"leaf_spine", "spine_core", "switch"}},
          tier);
}

void workload_params::visit(core::param_visitor& v) {
  v.field(
      {"kind",
       "",
       "writes: the explicit `writes` list; permutation: every host writes to one other host, each host "
       "receiving once; all_to_all: every host writes to every other host; incast: incast_senders hosts "
       "write to incast_target; flows: the CSV flow_file; generated: flow sizes drawn from `distribution`, "
       "Poisson arrivals per host at `load` (docs/workloads.md); collective: the `collective` section (an "
       "nccl-tests style sweep, docs/collectives.md); training: one training step of the `training` section's model "
       "(docs/workloads.md)",
       0.0,
       0.0,
       {"writes", "permutation", "all_to_all", "incast", "flows", "generated", "collective", "training"}},
      kind);
  v.field({"message_bytes", "bytes", "permutation, all_to_all, incast: size of every message", 0.0,
           k_max_message_bytes},
          message_bytes);
  v.field({"pattern", "",
           "permutation: random (seeded by `seed`; with more than one leaf every destination is behind another "
           "leaf), shift (host i writes to host (i + offset) mod n) or leaf_pairs (every leaf's hosts write to "
           "the hosts of one other leaf, seeded)",
           0.0, 0.0, {"random", "shift", "leaf_pairs"}},
          pattern);
  v.field({"offset", "hosts", "permutation with pattern shift: destination offset (not a multiple of the host count)",
           1.0},
          offset);
  v.field({"messages", "messages",
           "permutation, all_to_all, incast: messages posted back to back by each sender to each destination",
           1.0, 1e6},
          messages);
  v.field({"incast_senders", "hosts", "incast: senders, the hosts after incast_target in index order (wrapping)",
           1.0},
          incast_senders);
  v.field({"incast_target", "", "incast: the host every sender writes to"}, incast_target);
  v.field({"flow_file", "",
           "flows: CSV file with header src,dst,bytes,start_ns (hosts by index), or src,dst,bytes,start_ns,op "
           "with an operation per row (write, write_imm, read, send, send_imm), relative to the scenario file"},
          flow_file);
  v.field({"distribution", "",
           "generated: flow-size distribution: websearch (DCTCP web search), hadoop (Facebook Hadoop) or the name "
           "of a CDF file (lines `bytes fraction`, fraction 0..1 or percent; relative to the scenario file)"},
          distribution);
  v.field({"load", "",
           "generated: offered load of every host as a fraction of its link rate, above 0 and at most 1 (payload "
           "bytes; sets the Poisson arrival rate from the distribution's mean size)",
           0.0, 1.0},
          load);
  v.field({"flow_count", "flows", "generated: flows in all, over every host (0: arrival_window_us decides)", 0.0,
           1e7},
          flow_count);
  v.field({"arrival_window_us", "us", "generated: the flows that arrive before this time (0: flow_count decides)",
           0.0, k_max_time_ns / 1e3},
          arrival_window_us);
  v.field({"max_flow_bytes", "bytes", "generated: cap on a flow's size (larger draws are cut to it); 0: none", 0.0,
           k_max_message_bytes},
          max_flow_bytes);
  v.field({"destinations", "",
           "generated: a flow's destination: uniform over every other host, or off_leaf (uniform over the hosts "
           "of other leaves)",
           0.0, 0.0, {"uniform", "off_leaf"}},
          destinations);
  v.field({"write_flow_file", "",
           "any kind: write the planned WRITEs as a flow list (src,dst,bytes,start_ns) to this file, relative to "
           "the current directory, so that `kind: flows` or another tool can replay them; empty: off"},
          write_flow_file);
  v.field({"queue_pairs", "",
           "any kind: per_pair, one RC queue pair per (requester, responder) pair of hosts, its WRITEs served in "
           "post order (a WRITE waits behind the one before it); per_flow, a queue pair per WRITE, as a "
           "flow-level workload (generated, flows) assumes: the NIC round-robins between them",
           0.0, 0.0, {"per_pair", "per_flow"}},
          queue_pairs);
  v.field({"memory",
           "",
           "transfers: generated, each source buffer's bytes a function of (seed, host, address) never stored, "
           "each payload checked as it lands and not kept, so memory grows with what is in flight; dense, "
           "buffers in host memory (sources filled, payloads written there, completed operations read back at "
           "the end) for reading memory after a run or nic.placement pcie; auto: dense when any NIC has "
           "nic.placement pcie, else generated",
           0.0,
           0.0,
           {"auto", "generated", "dense"}},
          memory);
}

namespace {

// The scalar keys at the top of the file.
visit_fn header_visitor(scenario& s) {
  return [&s](core::param_visitor& v) {
    v.field({"name", "", "scenario name, shown in reports"}, s.name);
    v.field({"description", "", "what the scenario shows, one line"}, s.description);
    v.field({"seed", "", "seed of every random stream (initial PSNs, ECMP hashing): same seed, same run"}, s.seed);
  };
}

// The sections that map straight onto one params struct, in file order.
struct section {
  const char* key;
  const char* summary;  // for the documentation
  visit_fn visit;
};

std::vector<section> plain_sections(scenario& s) {
  return {
      {"run", "How long to simulate.", visitor_of(s.run)},
      {"topology",
       "The fabric's shape (hosts, switches and the cables between them), the line rate of each tier and the "
       "cable lengths; kinds, wiring and naming in [topology.md](topology.md).",
       visitor_of(s.topology)},
      {"link",
       "What every cable has in common: propagation per metre and FEC latency. Line rates and lengths are in "
       "`topology`.",
       visitor_of(s.link)},
      {"switch", "Every switch: its model, and the Spectrum-4 pipeline's keys.",
       [&s](core::param_visitor& v) {
         s.switch_model.visit(v);  // first, as the section has always listed it
         s.switch_.visit(v);
       }},
      {"quantum",
       "The Quantum-X800 InfiniBand switch, used when `switch.model` is `quantum_x800`: ports, VLs, VL "
       "arbitration, routing and credit flow control ([quantum_x800.md](quantum_x800.md)).",
       visitor_of(s.quantum)},
      {"oq",
       "The plain output-queued Ethernet switch, used when `switch.model` is `oq`: one pipeline latency and a "
       "tail-drop FIFO per egress port, ECMP by a seeded 5-tuple hash; no PFC, ECN or telemetry "
       "([extending_switch.md](extending_switch.md)).",
       visitor_of(s.oq)},
      {"sharp",
       "SHARP in-network reduction on a `quantum_x800` fabric, used by `collective.algo: sharp`: each tree "
       "switch's aggregation ALU, latency and slots ([quantum_x800.md](quantum_x800.md#sharp-in-network-allreduce)).",
       visitor_of(s.sharp)},
      {"nic", "Every host's SuperNIC; `nic_overrides` changes single hosts.", visitor_of(s.nic)},
      {"pcie",
       "Each host's PCIe tray when `nic.placement` is `pcie`: the ConnectX-8 switch, GPU memory, the root complex "
       "and host memory, GPUDirect or a bounce buffer ([pcie.md](pcie.md)).",
       visitor_of(s.pcie)},
      {"workload", "What the hosts send.", visitor_of(s.workload)},
      {"collective",
       "A collective benchmark, run when `workload.kind` is `collective`: nccl-tests sizes, op, algorithm, "
       "ranks and their placement ([collectives.md](collectives.md)).",
       visitor_of(s.collective)},
      {"training",
       "A training step, run when `workload.kind` is `training`: the transformer, its parallelism and the GPU "
       "([workloads.md](workloads.md#training-a-step-as-the-workload)).",
       visitor_of(s.training)},
      {"fault",
       "What every fault injector shares; the faults themselves are the `faults` list ([faults.md](faults.md)).",
       visitor_of(s.fault)},
      // NVLink scale-up domain (issue 21): its own block, for an easy merge.
      {"nvlink",
       "The NVLink scale-up domain built by `topology.kind: nvl72`: GPUs, NVLink switch chips, link rate, flits, "
       "credits, NVLS ([systems.md](systems.md)).",
       visitor_of(s.nvlink)},
      {"system",
       "A whole cluster in one key: GB200 / GB300 NVL72 racks or HGX B200 / B300 nodes with their scale-out "
       "NICs and rail-optimized fabric; it sets keys of the sections above, which the file overrides "
       "([systems.md](systems.md#system-presets)).",
       visitor_of(s.system)},
  };
}

// Every top-level key that names a section, in the order the documentation lists them.
const std::vector<std::string>& top_level_sections() {
  static const std::vector<std::string> keys = {
      "run",     "topology", "link",          "switch",    "quantum",    "oq",       "sharp",
      "nic",     "pcie",     "nic_overrides", "workload",  "collective", "training", "writes",
      "compare", "fault",    "faults",        "partition", "nvlink",     "jobs",     "system"};
  return keys;
}

void load_nic_overrides(const YAML::Node& node, const yaml_source& source, scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    throw config_error(source.message("nic_overrides", node.Mark(),
                                      "expected a mapping of host name to NIC keys, e.g. {h1: {reorder: ref}}, got " +
                                          yaml_kind(node)));
  }
  std::set<std::string> seen;
  for (const auto& pair : node) {
    const YAML::Node host = pair.first;
    if (!host.IsScalar()) {
      throw config_error(source.message("nic_overrides", host.Mark(),
                                        "keys must be host names such as h1, got " + yaml_kind(host)));
    }
    const std::string path = join_key("nic_overrides", host.Scalar());
    if (!seen.insert(host.Scalar()).second) {
      throw config_error(source.message(path, host.Mark(), "duplicate host (each host may appear once)"));
    }
    // An override starts from the shared `nic` section, so it only lists what differs.
    nic::supernic_params p = s.nic;
    apply_yaml(pair.second, visitor_of(p), source, path);
    s.nic_overrides[host.Scalar()] = p;
  }
}

void load_writes(const YAML::Node& node, const yaml_source& source, scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    throw config_error(source.message("writes", node.Mark(),
                                      "expected a sequence of writes, e.g. [{src: h0, dst: h1, bytes: 4096}], got " +
                                          yaml_kind(node)));
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string path = "writes." + std::to_string(i);
    if (!entry.IsMap()) {
      throw config_error(source.message(path, entry.Mark(),
                                        "expected a mapping with src, dst and bytes, got " + yaml_kind(entry)));
    }
    for (const char* required : {"src", "dst", "bytes"}) {
      if (!entry[required]) {
        throw config_error(source.message(path, entry.Mark(),
                                          std::string("missing required key ") + required +
                                              " (every write needs src, dst and bytes)"));
      }
    }
    write_op op;
    apply_yaml(entry, visitor_of(op), source, path);
    s.writes.push_back(op);
  }
}

void load_partition(const YAML::Node& node, const yaml_source& source, scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string example = "e.g. [[leaf0, leaf1, spine0], [leaf2, leaf3, spine1]], one list per rank";
  if (!node.IsSequence() || node.size() == 0)
    throw config_error(source.message("partition", node.Mark(),
                                      "expected a sequence of device lists, " + example + ", got " + yaml_kind(node)));
  // The names the topology has: its switches and hosts (a topology error is left to the run, which names it).
  std::optional<topology::fabric_layout> layout;
  try {
    layout = topology::plan_fabric(s.topology, s.link);
  } catch (const config_error&) {
  }
  std::map<std::string, std::string> seen;  // name -> where it was listed
  for (size_t r = 0; r < node.size(); ++r) {
    const std::string path = "partition." + std::to_string(r);
    const YAML::Node ranks = node[r];
    if (!ranks.IsSequence())
      throw config_error(source.message(path, ranks.Mark(),
                                        "expected the list of devices rank " + std::to_string(r) + " simulates, " +
                                            example + ", got " + yaml_kind(ranks)));
    std::vector<std::string> names;
    for (size_t k = 0; k < ranks.size(); ++k) {
      const std::string at = path + "." + std::to_string(k);
      const YAML::Node n = ranks[k];
      if (!n.IsScalar())
        throw config_error(source.message(at, n.Mark(), "expected a switch or host name, got " + yaml_kind(n)));
      const std::string name = n.Scalar();
      if (layout) {
        bool known = topology::host_index(name, layout->hosts).has_value();
        for (const auto& sw : layout->switches) known = known || sw.name == name;
        if (!known)
          throw config_error(source.message(at, n.Mark(),
                                            "no switch or host named '" + name + "' in this topology (switches " +
                                                layout->switches.front().name + " .. " +
                                                layout->switches.back().name + ", hosts " +
                                                topology::host_names(layout->hosts) + ")"));
      }
      if (!seen.emplace(name, path).second)
        throw config_error(source.message(at, n.Mark(),
                                          "'" + name + "' is already in " + seen[name] +
                                              " (a device is simulated by one rank)"));
      names.push_back(name);
    }
    s.partition.push_back(std::move(names));
  }
}

// Which keys each fault kind takes besides `kind`: the first group is required.
struct fault_kind_keys {
  const char* kind;
  std::vector<std::string> required, optional;
};
const std::vector<fault_kind_keys>& fault_kinds() {
  static const std::vector<fault_kind_keys> kinds = {
      {"link_down", {"link", "at_us"}, {"for_us"}},
      {"flap", {"link", "period_us", "down_us"}, {"from_us", "until_us"}},
      {"loss", {"link", "probability"}, {"from_us", "until_us"}},
      {"bit_errors", {"link", "ber"}, {"from_us", "until_us"}},
      {"port_down", {"switch", "port", "at_us"}, {"for_us"}},
      {"links_down", {"fraction"}, {"tier"}},
      {"misplace", {"host", "offset_bytes"}, {"after_packets"}},
  };
  return kinds;
}

// A misplace entry's host is one of the topology's (known now: --set has been applied), and it moves the
// payload by at least a byte.
void check_misplace(const fault_entry& f, const YAML::Node& entry, const yaml_source& source, const std::string& path,
                    const scenario& s) {
  const size_t hosts = s.topology.host_count();
  if (!topology::host_index(f.host, hosts))
    throw config_error(
        source.message(join_key(path, "host"), entry["host"].Mark(),
                       "no host '" + f.host + "' in this topology (hosts " + topology::host_names(hosts) + ")"));
  if (f.offset_bytes == 0)
    throw config_error(source.message(join_key(path, "offset_bytes"), entry["offset_bytes"].Mark(),
                                      "expected at least 1 byte: an offset of 0 places the payload where it belongs"));
}

void load_faults(const YAML::Node& node, const yaml_source& source, scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence())
    throw config_error(source.message("faults", node.Mark(),
                                      "expected a sequence of faults, e.g. [{kind: link_down, link: leaf0_to_spine1, "
                                      "at_us: 20, for_us: 30}], got " + yaml_kind(node)));
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    const std::string path = "faults." + std::to_string(i);
    if (!entry.IsMap())
      throw config_error(source.message(path, entry.Mark(), "expected a mapping with kind, got " + yaml_kind(entry)));
    if (!entry["kind"])
      throw config_error(source.message(path, entry.Mark(),
                                        "missing required key kind (link_down, flap, loss, bit_errors, port_down, "
                                        "links_down, misplace)"));
    fault_entry f;
    apply_yaml(entry, visitor_of(f), source, path);  // types, ranges and the kind's spelling
    const fault_kind_keys* k = nullptr;
    for (const fault_kind_keys& c : fault_kinds())
      if (f.kind == c.kind) k = &c;
    for (const auto& pair : entry) {
      const std::string key = pair.first.Scalar();
      if (key == "kind") continue;
      if (std::find(k->required.begin(), k->required.end(), key) == k->required.end() &&
          std::find(k->optional.begin(), k->optional.end(), key) == k->optional.end())
        throw config_error(source.message(
            join_key(path, key), pair.first.Mark(),
            "does not apply to kind " + f.kind + " (it takes " + fmt::format("{}", fmt::join(k->required, ", ")) +
                (k->optional.empty() ? "" : "; optional " + fmt::format("{}", fmt::join(k->optional, ", "))) + ")"));
    }
    for (const std::string& key : k->required)
      if (!entry[key])
        throw config_error(source.message(path, entry.Mark(),
                                          "missing required key " + key + " (kind " + f.kind + " needs " +
                                              fmt::format("{}", fmt::join(k->required, ", ")) + ")"));
    if (f.kind == "flap" && (f.period_us <= 0 || f.down_us <= 0 || f.down_us >= f.period_us))
      throw config_error(source.message(join_key(path, "down_us"), entry["down_us"].Mark(),
                                        "flap needs 0 < down_us < period_us, got down_us " +
                                            entry["down_us"].Scalar() + " and period_us " +
                                            entry["period_us"].Scalar()));
    if (f.until_us > 0 && f.until_us <= f.from_us)
      throw config_error(source.message(join_key(path, "until_us"), entry["until_us"].Mark(),
                                        "until_us must be above from_us (or 0: the end of the run)"));
    if (f.kind == "loss" && f.probability <= 0)
      throw config_error(source.message(join_key(path, "probability"), entry["probability"].Mark(),
                                        "expected a probability above 0 and at most 1"));
    if (f.kind == "bit_errors" && f.ber <= 0)
      throw config_error(source.message(join_key(path, "ber"), entry["ber"].Mark(),
                                        "expected a bit error ratio above 0 and at most 1, e.g. 1e-7"));
    if (f.kind == "links_down" && f.fraction <= 0)
      throw config_error(source.message(join_key(path, "fraction"), entry["fraction"].Mark(),
                                        "expected a share of the tier's cables above 0 and at most 1, e.g. 0.05"));
    if (f.kind == "misplace") check_misplace(f, entry, source, path, s);
    if (f.kind == "links_down")
      fail_cables(f, s.seed, i, source.where(path, entry.Mark()) + ": " + path, s.topology, s.link);
    s.faults.push_back(f);
  }
}

// Keys that moved when rates and cable lengths became per tier: say where they went, rather than only
// "unknown key".
void reject_moved_keys(const YAML::Node& top, const yaml_source& source) {
  const YAML::Node link = top["link"];
  if (!link.IsDefined() || !link.IsMap()) return;
  const std::pair<const char*, const char*> moved[] = {
      {"rate_gbps", "topology.link_gbps (host links) and topology.uplink_gbps (switch-to-switch links)"},
      {"propagation_ns", "cable lengths per tier (topology.host_cable_m, topology.leaf_spine_cable_m, "
                         "topology.spine_core_cable_m) times link.ns_per_metre"},
  };
  for (const auto& [key, now] : moved) {
    const YAML::Node node = link[key];
    if (node) throw config_error(source.message(join_key("link", key), node.Mark(), std::string("moved to ") + now));
  }
}

void load_compare(const YAML::Node& node, const yaml_source& source, scenario& s) {
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string example = "e.g. {key: nic.path_entropy, values: [fixed, per_packet]}";
  if (!node.IsMap())
    throw config_error(source.message("compare", node.Mark(),
                                      "expected a mapping with key and values, " + example + ", got " +
                                          yaml_kind(node)));
  for (const auto& pair : node) {
    const std::string name = pair.first.IsScalar() ? pair.first.Scalar() : yaml_kind(pair.first);
    if (name != "key" && name != "values")
      throw config_error(source.message(join_key("compare", name), pair.first.Mark(),
                                        "unknown key. Known keys of compare: key, values"));
  }
  const YAML::Node key = node["key"], values = node["values"];
  if (!key || !values)
    throw config_error(source.message("compare", node.Mark(),
                                      std::string("missing required key ") + (!key ? "key" : "values") + " (" +
                                          example + ")"));
  if (!key.IsScalar() || key.Scalar().empty())
    throw config_error(source.message("compare.key", key.Mark(),
                                      "expected a scenario key such as nic.path_entropy, got " + yaml_kind(key)));
  if (!values.IsSequence() || values.size() == 0)
    throw config_error(source.message("compare.values", values.Mark(),
                                      "expected a non-empty sequence of values, e.g. [fixed, per_packet], got " +
                                          yaml_kind(values)));
  s.compare.key = key.Scalar();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].IsScalar())
      throw config_error(source.message("compare.values." + std::to_string(i), values[i].Mark(),
                                        "expected a single value, got " + yaml_kind(values[i])));
    s.compare.values.push_back(values[i].Scalar());
  }
}

// The fastest port of the run's switch model, which every cable of a topology file must keep to.
topology::port_speed_limit port_limit_of(const scenario& s) {
  topology::port_speed_limit limit;
  if (s.switch_model.name == "spectrum4") {
    limit.gbps = s.switch_.port_gbps();
    limit.setting = "switch.port_config " + s.switch_.port_config;
    limit.remedy = [](double gbps) {
      const std::string fits = sw::spectrum_params::port_config_for(gbps);
      return fits.empty() ? std::string("no switch.port_config runs ports that fast (the fastest is 64x800)")
                          : "use --set switch.port_config=" + fits + " (switch: {port_config: " + fits + "})";
    };
  } else if (s.switch_model.name == "quantum_x800") {
    limit.gbps = s.quantum.port_gbps;
    limit.setting = "quantum.port_gbps";
    limit.remedy = [](double gbps) {
      return "raise quantum.port_gbps to " + std::to_string(int(std::ceil(gbps))) + " or more";
    };
  }
  return limit;
}

// topology.kind graph: the file is read now, relative to the scenario, so that every later step (workload
// planning, leaf_of, the fabric) sees the same layout.
void load_topology_file(scenario& s) {
  if (s.topology.kind != "graph") return;
  if (s.topology.file.empty())
    throw config_error(s.source +
                       ": topology.file: required with topology.kind graph (a .graphml or .dot file; "
                       "docs/topology.md)");
  const std::filesystem::path file(s.topology.file), dir = std::filesystem::path(s.source).parent_path();
  const std::string path = file.is_absolute() || dir.empty() ? s.topology.file : (dir / file).string();
  s.topology.graph = std::make_shared<const topology::fabric_layout>(
      topology::read_graph_layout(path, s.topology, s.link, port_limit_of(s)));
}

// system.preset: its keys applied before the file's sections, each recorded as set by the preset.
void apply_system_preset(const YAML::Node& top, const yaml_source& origin, scenario& s) {
  apply_yaml(top["system"], visitor_of(s.system), origin, "system");
  if (s.system.preset == "none") return;
  const YAML::Node preset = YAML::Load(system_preset_yaml(s.system, s.source));
  std::map<std::string, std::string> set_by_preset;
  yaml_source from_preset{"system.preset " + s.system.preset, {}};
  from_preset.provenance = &set_by_preset;
  for (section& sec : plain_sections(s)) apply_yaml(preset[sec.key], sec.visit, from_preset, sec.key);
  for (const auto& entry : set_by_preset) s.key_sources[entry.first] = "system.preset " + s.system.preset;
}

}  // namespace

scenario load_scenario_text(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {  // the parser's, with the position of the fault
    const std::string tab = yaml_tab_hint(text, e.mark.line);
    throw config_error(source + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg +
                       (tab.empty() ? "" : " (" + tab + ")"));
  }
  scenario s;
  yaml_source origin{source, {}};
  origin.provenance = &s.key_sources;  // for `fabricsim explain`
  for (const std::string& o : overrides) apply_override(root, o, origin);

  s.source = source;
  const YAML::Node& top = root;  // const: looking a key up must not insert it
  apply_yaml(top, header_visitor(s), origin, "", top_level_sections());
  if (!top.IsMap()) return s;  // an empty file: every default
  reject_moved_keys(top, origin);
  apply_system_preset(top, origin, s);  // first: the file's own keys override the preset's
  for (section& sec : plain_sections(s)) apply_yaml(top[sec.key], sec.visit, origin, sec.key);
  // After `nic`, which every override starts from.
  load_topology_file(s);
  load_nic_overrides(top["nic_overrides"], origin, s);
  load_writes(top["writes"], origin, s);
  load_compare(top["compare"], origin, s);
  load_faults(top["faults"], origin, s);
  load_partition(top["partition"], origin, s);  // after topology and link: names are checked against them
  load_jobs(top, origin, s);                    // after topology: hosts are checked against it (tenants.h)
  check_link_layer(s);
  check_system(s);
  return s;
}

scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides) {
  refuse_directory_scenario(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(path + ": cannot open the scenario file (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw config_error(path + ": cannot read the scenario file (" + std::strerror(errno) + ")");
  return load_scenario_text(text.str(), path, overrides);
}

std::vector<std::pair<std::string, visit_fn>> scenario_sections(scenario& s) {
  std::vector<std::pair<std::string, visit_fn>> out{{"", header_visitor(s)}};
  for (section& sec : plain_sections(s)) out.emplace_back(sec.key, sec.visit);
  return out;
}

namespace {

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string md_code(const std::string& s) { return "`" + (s.empty() ? std::string("\"\"") : s) + "`"; }

// "one of `a`, `b`" for choices, the range as is for numbers.
std::string md_range(const key_doc& k) {
  if (k.type != "string" || k.range.empty()) return k.range;
  std::string out = "one of ";
  size_t start = 0;
  for (;;) {
    const size_t comma = k.range.find(", ", start);
    out += md_code(k.range.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    out += ", ";
    start = comma + 2;
  }
  return out;
}

// One table of keys; `required` ones show "required" instead of a default.
std::string md_table(const std::vector<key_doc>& keys, const std::set<std::string>& required = {}) {
  std::string out = "| key | type | unit | default | range | description |\n|---|---|---|---|---|---|\n";
  for (const key_doc& k : keys) {
    const std::string def = required.count(k.name) ? "required" : md_code(k.default_value);
    out += "| `" + k.name + "` | " + k.type + " | " + md_escape(k.unit) + " | " + md_escape(def) + " | " +
           md_escape(md_range(k)) + " | " + md_escape(k.description) + " |\n";
  }
  return out;
}

}  // namespace

std::string scenario_keys_markdown() {
  scenario defaults;
  std::string out =
      "## Scenario keys\n\n"
      "Integers are plain decimal or `0x` hex and never negative; numbers may use exponents (`1.6e3`); "
      "booleans are `true` or `false`. A range in brackets is inclusive. Keys left out keep the default "
      "shown.\n\n";
  out += "### Top level\n\n";
  out += md_table(describe(header_visitor(defaults)));
  out += "\nSections: ";
  for (size_t i = 0; i < top_level_sections().size(); ++i)
    out += (i ? ", `" : "`") + top_level_sections()[i] + "`";
  out += ".\n";
  for (section& sec : plain_sections(defaults)) {
    out += std::string("\n### `") + sec.key + "`\n\n" + sec.summary + "\n\n";
    out += md_table(describe(sec.visit));
    if (std::string(sec.key) == "nic") {
      out +=
          "\n### `nic_overrides`\n\n"
          "A mapping from host name (`h0`, `h1`, ...) to a partial `nic` section for that host's SuperNIC. Each "
          "override starts from the `nic` values above and changes only the keys it lists, e.g. "
          "`nic_overrides: {h1: {reorder: ref}}`.\n";
    }
  }
  out +=
      "\n### `writes`\n\n"
      "A sequence of RDMA operations (WRITEs unless `op` says otherwise), posted when `workload.kind` is "
      "`writes`, e.g. `writes: [{src: h0, dst: h1, bytes: 4096}, {src: h0, dst: h1, bytes: 4096, op: read}]`. "
      "The testbench posts a receive buffer at `dst` for every `send`, `send_imm` and `write_imm`. Entries are "
      "numbered from 0 in messages and in `--set` paths (`writes.0.bytes`).\n\n";
  out += md_table(describe<write_op>(), {"src", "dst", "bytes"});
  out +=
      "\n### `faults`\n\n"
      "A sequence of faults injected into links, switch ports and NICs ([faults.md](faults.md)), e.g. "
      "`faults: [{kind: link_down, link: leaf0_to_spine1, at_us: 20, for_us: 30}, {kind: loss, link: "
      "h0_to_leaf0, probability: 0.01}]`. Each kind takes its own keys: link_down (link, at_us; for_us), flap "
      "(link, period_us, down_us; from_us, until_us), loss (link, probability; from_us, until_us), bit_errors "
      "(link, ber; from_us, until_us), port_down (switch, port, at_us; for_us), misplace (host, offset_bytes; "
      "after_packets). Entries are numbered from 0 in messages and in the report.\n\n";
  out += md_table(describe<fault_entry>());
  out +=
      "\n### `partition`\n\n"
      "Under N MPI ranks ([scale_out.md](scale_out.md)), which rank simulates which device: a sequence of N "
      "lists of switch and host names, list r for rank r, e.g. `partition: [[leaf0, leaf1, spine0], [leaf2, "
      "leaf3, spine1]]`. Devices not named are placed automatically (a host with its leaf). One process "
      "ignores it; a run on a different number of ranks is refused.\n";
  out +=
      "\n### `compare`\n\n"
      "Runs the scenario once per value of one key, each as its own simulation, and reports them side by side, "
      "e.g. `compare: {key: nic.path_entropy, values: [fixed, per_packet]}`. `key` is any key `--set` accepts; "
      "each value is applied as `--set key=value` after the file and the command line's `--set`s. "
      "`fabricsim run FILE --compare key=v1,v2` replaces this section; `--set key=v` of its own key runs that one "
      "value alone (no comparison), and `--no-compare` runs the file's own values.\n\n"
      "| key | type | description |\n|---|---|---|\n"
      "| `key` | string | the scenario key to vary (required) |\n"
      "| `values` | sequence | the values to run, in order (required, at least one) |\n";
  out += jobs_keys_markdown();
  return out;
}

}  // namespace fabricsim::testbench
