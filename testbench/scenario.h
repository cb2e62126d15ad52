// A scenario: the whole configuration of one run, loaded from YAML with `--set` overrides applied, mapped
// onto the per-block params structs by hierarchical name.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sc_models/core/fault_injector.h"
#include "sc_models/core/params.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/nvlink/nvlink_params.h"
#include "sc_models/switch/oq_switch.h"
#include "sc_models/switch/quantum/quantum_switch.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "sc_models/switch/spectrum/spectrum_switch.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective_params.h"
#include "testbench/switch_selection.h"
#include "testbench/system_preset.h"
#include "testbench/training_model.h"

namespace fabricsim::testbench {

// How long to run and when to stop.
struct run_params {
  double duration_us = 0.0;  // 0: until every operation of the workload has completed
  double limit_us = 100000.0;
  double warmup_us = 0.0;  // start of the measurement window (fabric report)
  double sample_us = 0.0;  // time-series sampling period (0: off); sampling never adds model events
  double convergence_window_us = 50.0;  // goodput averaging window of fair_share_convergence_ns
  std::string timeseries_csv;  // per-QP samples written here (relative: to the current directory)
  std::string record_rtl_dir;  // RTL block transactions recorded here for verify-rtl --replay (empty: off)
  std::string rtl_wave_dir;    // a lockstep divergence writes the diverging block's FST here (empty: off)
  uint64_t memory_limit_mib = 0;  // refuse a build projected past this (0: 3/4 of physical memory)
  void visit(core::param_visitor& v);
};

// One operation of the workload (an RDMA WRITE unless `op` says otherwise).
struct write_op {
  std::string src;       // host name, e.g. "h0"
  std::string dst;       // host name
  uint64_t bytes = 0;    // message size
  double start_ns = 0.0; // when the work request is posted
  std::string op = "write";  // write, write_imm, read (dst's memory -> src's), send or send_imm
  void visit(core::param_visitor& v);
};

// What the hosts send: the explicit `writes` list or a generated pattern (testbench/workload.h plans it).
struct workload_params {
  std::string kind =
      "writes";  // "writes", "permutation", "all_to_all", "incast", "flows", "generated", "collective" or "training"
  uint64_t message_bytes = 1048576;  // permutation, all_to_all, incast: size of every message
  std::string pattern = "random";    // permutation: "random" (seeded, off-leaf) or "shift" (i -> i + offset)
  uint64_t offset = 1;               // permutation with pattern shift: destination offset
  uint64_t messages = 1;             // permutation, all_to_all, incast: messages back to back per pair
  uint64_t incast_senders = 1;       // incast: hosts writing to the target
  std::string incast_target = "h0";  // incast: the host every sender writes to
  std::string flow_file;             // flows: CSV src,dst,bytes,start_ns, relative to the scenario file
  // generated (traces/flow_generator.h, docs/workloads.md): flow sizes from a distribution, Poisson arrivals.
  std::string distribution = "websearch";  // "websearch", "hadoop" or a CDF file (relative to the scenario)
  double load = 0.5;                       // offered load per host, fraction of its link rate, (0, 1]
  uint64_t flow_count = 0;                 // flows in all (or arrival_window_us)
  double arrival_window_us = 0.0;          // flows arriving before this time (or flow_count)
  uint64_t max_flow_bytes = 0;             // cap on a flow's size; 0: none
  std::string destinations = "uniform";    // "uniform" (any other host) or "off_leaf"
  std::string write_flow_file;             // any kind: write the planned flows here as a flow list
  std::string queue_pairs = "per_pair";    // any kind: one RC queue pair per (src, dst) pair, or "per_flow"
  // Transfers: "generated" (source bytes generated, landed bytes checked as they land and not stored),
  // "dense" (buffers in host memory, filled and read back), "auto" (dense with nic.placement pcie).
  std::string memory = "auto";
  void visit(core::param_visitor& v);
};

// One entry of the `jobs` list (docs/workloads.md, "Tenants"): a named job, the hosts it owns and its own
// workload, run at once with the other jobs on one fabric (testbench/tenants.h).
struct job_params {
  std::string name;
  std::vector<size_t> hosts;     // host indices, in the order listed (a collective's rank i is hosts[i])
  workload_params workload;      // jobs.N.workload: starts from the defaults, not from the top-level section
  collective_params collective;  // jobs.N.collective: for workload.kind collective (a training job's engine keys)
  training_params training;      // jobs.N.training: for workload.kind training
};

// One entry of the `faults` list (docs/faults.md): which fault, where, when. Which keys a kind takes is
// checked at load; link names are checked against the fabric when it is built (testbench/faults.h).
struct fault_entry {
  std::string kind;          // link_down, flap, loss, bit_errors, port_down, links_down, misplace
  std::string link;          // link_down, flap, loss, bit_errors: a link name such as leaf0_to_spine1
  std::string switch_name;   // port_down: the switch ("switch" in YAML)
  uint64_t port = 0;         // port_down: its port
  double at_us = 0.0;        // link_down, port_down: when the carrier goes
  double for_us = 0.0;       // link_down, port_down: how long it stays down; 0: for the rest of the run
  double period_us = 0.0;    // flap: one down-up cycle
  double down_us = 0.0;      // flap: down part of each cycle
  double from_us = 0.0;      // flap, loss, bit_errors: start of the fault
  double until_us = 0.0;     // flap, loss, bit_errors: end of the fault; 0: the end of the run
  double probability = 0.0;  // loss: chance a frame is lost
  double ber = 0.0;          // bit_errors: bit error ratio
  std::string host;          // misplace: the NIC whose DMA misplaces a payload, e.g. h1
  uint64_t after_packets = 0;   // misplace: payload writes that NIC makes correctly before the misplaced one
  uint64_t offset_bytes = 0;    // misplace: how far past its address the payload is written
  double fraction = 0.0;        // links_down: the share of the tier's cables that fail (a seeded choice)
  std::string tier = "switch";  // links_down: leaf_spine, spine_core or switch (every switch-to-switch cable)
  // links_down, not keys: the cables drawn at load (testbench/failed_cables.h), as "4 of 16 leaf_spine
  // cables", and the names of their links (both directions).
  std::string target;
  std::vector<std::string> absent_links;
  void visit(core::param_visitor& v);
};

// A comparison: the same scenario run once per value of one key (`compare:` in the file, or --compare).
struct compare_params {
  std::string key;                  // any key `--set` accepts, e.g. "nic.path_entropy"
  std::vector<std::string> values;  // one run each, in this order
  bool empty() const { return key.empty(); }
};

struct scenario {
  std::string source;  // file name the scenario came from ("<default>" for the built-in one)
  std::string name = "unnamed";
  std::string description;
  uint64_t seed = 1;
  run_params run;
  topology::topology_params topology;
  topology::cable_params link;  // YAML section "link": ns per metre and FEC; rates and lengths are in topology
  switch_selection switch_model;  // YAML "switch.model": which switch model every switch is
  sw::spectrum_params switch_;    // YAML section "switch", its other keys: the Spectrum-4 pipeline
  sw::quantum_params quantum;   // YAML section "quantum": the Quantum-X800 switch (switch.model quantum_x800)
  sw::oq_switch_params oq;      // YAML section "oq": the plain output-queued switch (switch.model oq)
  sw::sharp_params sharp;       // YAML section "sharp": SHARP aggregation units (collective.algo sharp)
  nic::supernic_params nic;
  pcie::host_tray_params pcie;  // YAML "pcie": each host's PCIe tray when nic.placement is pcie
  std::map<std::string, nic::supernic_params> nic_overrides;  // YAML "nic_overrides: {h1: {reorder: ref}}"
  workload_params workload;
  collective_params collective;  // YAML "collective": workload.kind collective (testbench/collective.h)
  training_params training;      // YAML "training": workload.kind training (testbench/training_run.h)
  std::vector<write_op> writes;  // YAML "writes: [{src: h0, dst: h1, bytes: 4096}]"
  core::fault_params fault;          // YAML "fault": what every fault injector shares
  std::vector<fault_entry> faults;   // YAML "faults: [{kind: link_down, link: leaf0_to_spine1, at_us: 20}]"
  std::vector<job_params> jobs;      // YAML "jobs: [{name: a, hosts: h0-h7, workload: {kind: collective}}]"
  compare_params compare;        // YAML "compare: {key: nic.path_entropy, values: [fixed, per_packet]}"
  // YAML "partition: [[leaf0, leaf1, spine0], [leaf2, leaf3, spine1]]": under N MPI ranks, entry r names
  // devices rank r simulates (docs/scale_out.md); names are checked against the topology at load.
  std::vector<std::vector<std::string>> partition;
  nvlink::nvlink_params nvlink;  // YAML section "nvlink": the NVLink domain of topology.kind nvl72 (docs/systems.md)
  system_params system;          // YAML section "system": a cluster preset (testbench/system_preset.h)
  // Where each key set by the file or a `--set` came from: key path ("run.duration_us") -> "file:12" or
  // "--set run.duration_us=5"; keys left at their default are absent (`fabricsim explain`).
  std::map<std::string, std::string> key_sources;
};

// Loads a scenario file, then applies overrides of the form "path.to.field=value" (path as in the YAML,
// e.g. "topology.link_gbps=800", "nic_overrides.h1.reorder=ref", "writes.0.bytes=5000", "seed=7").
// Throws core::config_error naming the file (or "--set"), line, key and the allowed range or choices.
scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides = {});
// The same, from text already in memory; `source` names it in messages.
scenario load_scenario_text(const std::string& text, const std::string& source,
                            const std::vector<std::string>& overrides = {});

// A Markdown reference of every scenario section and key (type, unit, default, range or choices,
// description), generated from the visit() lists so that it cannot drift from the code. docs/scenario.md
// carries it, and a test checks that it is current; `fabricsim keys` prints it.
std::string scenario_keys_markdown();

}  // namespace fabricsim::testbench
