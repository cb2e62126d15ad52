// The set-up every run shares (flows, collectives, and so replays): the checks made before anything is
// sized, the memory budget, the NICs' link layer for the switch model, the RTL transaction log, the
// scale-out partition, the fabric, taps, faults, scale-out attachment, and the queue-pair numbers of hosts
// another MPI rank simulates. Each kind of run then wires its own workload onto it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sc_models/core/rng.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/core/transaction_log.h"
#include "sc_models/topology/fabric.h"
#include "testbench/faults.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"
#include "testbench/simulation.h"
#include "testbench/taps.h"

namespace fabricsim::testbench {

// Before anything is sized by the host count: the SystemC time resolution (1 ps), the topology, and that
// every nic_overrides entry names a host of it. Throws core::config_error naming the scenario file.
void check_run_basics(const scenario& s);

// Whether every NIC (`all`) or any NIC places payloads in memory (nic.place_data and its overrides).
bool every_nic_places_data(const scenario& s);
bool any_nic_places_data(const scenario& s);
// workload.memory as a run takes it: true for generated payloads (auto: unless a NIC uses the PCIe tray);
// config_error for generated with nic.placement pcie.
bool resolve_memory_mode(const scenario& s);
// nic.reorder_rtl (and --user-rtl, which sets it): registers the user's reorder tracker for every NIC, or
// clears a registration of an earlier run in this process. config_error for a nic_overrides entry that sets
// it, or nic.reorder ref.
void configure_user_rtl(const scenario& s);

// Where payloads are placed, host memory is real memory (every byte is written and checked): refuses a
// run whose buffers (`mem_bytes`, per host) need more than the memory limit (run.memory_limit_mib, or 3/4 of
// this machine: memory_guard.h), rather than let it swap or be killed. Timing-only runs and generated payloads map the
// buffers without touching them (MAP_NORESERVE), so they may be larger, up to half a process's address space (2^46
// bytes: "need N MiB of address space"). The message is "<source>: <what> need N MiB of memory<detail>, more than <the
// limit>; <advice>".
void check_memory_budget(const scenario& s, const std::vector<uint64_t>& mem_bytes, bool placing,
                         const std::string& what, const std::string& detail, const std::string& advice);

class fabric_setup {
 public:
  // The simulation context (seeded), the NIC parameters for the switch model, the RTL log (when
  // run.record_rtl_dir is set and the run simulates) and this rank's part of the fabric.
  fabric_setup(const scenario& s, const run_options& opts);
  fabric_setup(const fabric_setup&) = delete;
  fabric_setup& operator=(const fabric_setup&) = delete;

  // Builds this rank's part of the fabric (`mem_bytes` of host memory each, `pcie` for the trays), then the
  // taps (their files created now, so a bad tap fails before the run), the faults (docs/faults.md), touches
  // the memory when `placing`, and attaches the scale-out links.
  void build(const std::vector<uint64_t>& mem_bytes, const pcie::host_tray_params& pcie, bool placing);

  // What a host's NIC hands out at set-up, by the NIC itself where this rank simulates the host, else by
  // the NIC's own rules (docs/scale_out.md), so that queue pairs connected to it agree with its rank.
  uint32_t create_qp(size_t host);
  uint32_t initial_psn(size_t host);
  uint32_t register_region(size_t host, uint64_t va, uint64_t bytes);
  // The path MTU of a queue pair between hosts `a` and `b` (IBTA: one per QP, both ends): nic.path_mtu_bytes
  // where set (and equal at both ends), else the smaller of the two ends' nic.mtu_bytes. A path MTU larger
  // than either end's MTU, or two ends asking for different ones, is a config_error naming the hosts and keys.
  uint64_t path_mtu(size_t a, size_t b);

  topology::fabric& fab() { return *m_fab; }
  tap_set& taps() { return *m_taps; }
  fault_set& faults() { return *m_faults; }
  // The end of the run: run.duration_us, else run.limit_us.
  core::picoseconds run_end() const { return m_run_end; }
  // After the run: the RTL transaction log's records on disk (no log: nothing).
  void flush_rtl_log();

  core::sim_context ctx;

 private:
  // A NIC another rank simulates: its parameters and the counters of what it handed out.
  struct remote_nic {
    nic::supernic_params params;
    core::rng_stream stream;
    size_t qps = 0, regions = 0;
  };
  remote_nic& remote(size_t host);
  const nic::supernic_params& nic_params_of(size_t host);
  // "nic.<key>" or "nic_overrides.<host>.<key>", whichever gives the host its value of `key`.
  std::string key_of(size_t host, const std::string& key, bool overridden);

  const scenario& m_s;
  const run_options& m_opts;
  core::picoseconds m_run_end;
  nic::supernic_params m_nic_params;  // s.nic, with link_layer infiniband on an InfiniBand fabric
  std::map<std::string, nic::supernic_params> m_nic_overrides;
  std::unique_ptr<core::transaction_log> m_rtl_log;

 public:
  scale_out so;  // after the RTL log, before the fabric: the order the devices are built and torn down

 private:
  std::optional<topology::fabric> m_fab;
  std::optional<tap_set> m_taps;
  std::optional<fault_set> m_faults;
  std::optional<scale_out::attachment> m_attached;
  std::map<size_t, remote_nic> m_remote;
};

}  // namespace fabricsim::testbench
