// The set-up every run shares.
#include "testbench/fabric_setup.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <systemc>
#include <tuple>

#include "testbench/memory_guard.h"
#include "testbench/switch_factory.h"
#include "testbench/user_rtl.h"
#include "testbench/workload.h"

namespace fabricsim::testbench {

void check_run_basics(const scenario& s) {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw std::logic_error("fabricsim needs the SystemC time resolution at 1 ps");
  try {  // before anything is sized by the host count
    s.topology.validate();
  } catch (const core::config_error& e) {
    throw core::config_error(s.source + ": " + e.what());
  }
  const size_t hosts = s.topology.host_count();
  for (const auto& override_entry : s.nic_overrides)
    if (!topology::host_index(override_entry.first, hosts))
      throw core::config_error(s.source + ": nic_overrides." + override_entry.first + ": no host '" +
                               override_entry.first + "' (hosts are " + topology::host_names(hosts) + ")");
}

bool every_nic_places_data(const scenario& s) {
  bool all = s.nic.place_data;
  for (const auto& [name, params] : s.nic_overrides) all = all && params.place_data;
  return all;
}

void configure_user_rtl(const scenario& s) {
  // One line per block a user's RTL can replace: the block, its file and top keys, the key of its kind.
  struct user_block_keys {
    const char* block;
    const char* what;  // for messages
    const char* file_key;
    const char* top_key;
    const char* kind_key;
    const std::string& file;
    const std::string& top;
    const std::string& kind;
  };
  const user_block_keys blocks[] = {
      {"reorder_tracker", "reorder tracker", "reorder_rtl", "reorder_rtl_top", "reorder", s.nic.reorder_rtl,
       s.nic.reorder_rtl_top, s.nic.reorder},
      {"cnp_gen", "CNP generator", "cnp_rtl", "cnp_rtl_top", "cnp_model", s.nic.cnp_rtl, s.nic.cnp_rtl_top,
       s.nic.cnp_model},
      {"dcqcn_rp", "DCQCN reaction point", "dcqcn_rtl", "dcqcn_rtl_top", "dcqcn_model", s.nic.dcqcn_rtl,
       s.nic.dcqcn_rtl_top, s.nic.dcqcn_model},
  };
  for (const user_block_keys& b : blocks)
    for (const auto& [host, params] : s.nic_overrides)
      for (const char* key : {b.file_key, b.top_key})
        if (s.key_sources.count("nic_overrides." + host + "." + key))
          throw core::config_error(s.source + ": nic_overrides." + host + "." + key + ": a user's " + b.what +
                                   " runs in every NIC or in none: set nic." + key);
  clear_user_rtl();
  for (const user_block_keys& b : blocks) {
    if (b.file.empty()) continue;
    const std::string origin = s.source + ": nic." + b.file_key + " " + b.file;
    if (b.kind == "ref")
      throw core::config_error(origin + ": needs nic." + b.kind_key + " rtl or lockstep (ref runs no RTL)");
    use_user_rtl_block(b.block, resolve_scenario_path(s.source, b.file), b.top, origin, std::cerr);
  }
}

bool resolve_memory_mode(const scenario& s) {
  bool pcie = s.nic.placement == "pcie";
  for (const auto& [name, params] : s.nic_overrides) pcie = pcie || params.placement == "pcie";
  if (s.workload.memory == "generated" && pcie)
    throw core::config_error(s.source +
                             ": workload.memory generated cannot go with nic.placement pcie (the PCIe "
                             "tray reads and writes host and GPU memory): use workload.memory dense or auto");
  return s.workload.memory == "generated" || (s.workload.memory == "auto" && !pcie);
}

bool any_nic_places_data(const scenario& s) {
  bool any = s.nic.place_data;
  for (const auto& [name, params] : s.nic_overrides) any = any || params.place_data;
  return any;
}

void check_memory_budget(const scenario& s, const std::vector<uint64_t>& mem_bytes, bool placing,
                         const std::string& what, const std::string& detail, const std::string& advice) {
  uint64_t total = 0;
  for (uint64_t b : mem_bytes) total += b;
  // Buffers that hold no bytes (generated payloads, timing only) still take their addresses: untouched
  // mappings cost address space, of which a process has 128 TiB on x86-64; half of it is the limit.
  constexpr uint64_t address_space = uint64_t(1) << 46;
  if (total > address_space)
    throw core::config_error(s.source + ": " + what + " need " + std::to_string(total >> 20) + " MiB of address space" +
                             detail + " even when no byte is stored, more than the " +
                             std::to_string(address_space >> 20) + " MiB a process may map; " + advice);
  if (placing && total > memory_limit_bytes(s))
    throw core::config_error(s.source + ": " + what + " need " + std::to_string(total >> 20) + " MiB of memory" +
                             detail + ", more than " + memory_limit_text(s) + "; " + advice);
}

fabric_setup::fabric_setup(const scenario& s, const run_options& opts)
    : m_s(s),
      m_opts(opts),
      m_run_end(core::picoseconds::from_ns((s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us) * 1e3)),
      m_nic_params(s.nic),
      m_nic_overrides(s.nic_overrides),
      m_rtl_log(!s.run.record_rtl_dir.empty() && !opts.elaborate_only
                    ? std::make_unique<core::transaction_log>(s.run.record_rtl_dir, mpi::world::get().rank())
                    : nullptr),
      // Under mpirun this rank builds and simulates part of the fabric (docs/scale_out.md): its hosts and
      // switches and the links with an end among them. One process: all of it.
      so(topology::plan_fabric(s.topology, s.link), s.partition) {
  ctx.seed = s.seed;
  ctx.stats.fine_hist("fabric", "data_packet_latency", "ps",
                      "one-way latency of payload-carrying packets received in the measurement window, first bit "
                      "sent to arrival at the receiving NIC",
                      &ctx.data_latency);
  configure_user_rtl(s);  // nic.reorder_rtl: the user's tracker in every NIC, or ours
  // RTL transaction recording: the NICs wrap their blocks when the log is there (docs/verification.md).
  ctx.rtl_log = m_rtl_log.get();
  // Lockstep waveforms: the directory is made now, so that a bad one fails before the run.
  ctx.lockstep.wave_dir = s.run.rtl_wave_dir;
  if (!s.run.rtl_wave_dir.empty() && !opts.elaborate_only) {
    std::error_code ec;
    std::filesystem::create_directories(s.run.rtl_wave_dir, ec);
    if (ec || !std::filesystem::is_directory(s.run.rtl_wave_dir))
      throw core::config_error("run.rtl_wave_dir " + s.run.rtl_wave_dir + ": cannot create the directory" +
                               (ec ? ": " + ec.message() : std::string()));
  }
  // An InfiniBand fabric: every NIC is an HCA (LRH/BTH, credits).
  if (s.switch_model.infiniband()) {
    m_nic_params.link_layer = "infiniband";
    for (auto& [name, params] : m_nic_overrides) params.link_layer = "infiniband";
    // An HCA's cable cannot cross processes (its initial credit limit comes from its switch, ib_endpoint):
    // refused here alike on every rank, before the run, rather than met by one rank while the others wait.
    if (so.distributed()) {
      const topology::fabric_layout lay = topology::plan_fabric(s.topology, s.link);
      for (size_t h = 0; h < lay.hosts; ++h)
        if (so.host_rank(h) != so.switch_rank(lay.host_leaf[h]))
          throw core::config_error(s.source + ": partition: host " + topology::host_name(h) + " is on rank " +
                                   std::to_string(so.host_rank(h)) + " and its switch " +
                                   lay.switches[lay.host_leaf[h]].name + " on rank " +
                                   std::to_string(so.switch_rank(lay.host_leaf[h])) +
                                   ": an InfiniBand HCA's cable cannot cross processes (its credits start from "
                                   "the switch's); keep each host with its switch (docs/scale_out.md)");
    }
  }
}

void fabric_setup::build(const std::vector<uint64_t>& mem_bytes, const pcie::host_tray_params& pcie, bool placing) {
  // The model's own memory, measured as the NICs are built (memory_guard.h); this rank's hosts only.
  size_t to_build = 0;
  const std::vector<bool>& built = so.built();
  for (size_t h = 0; h < mem_bytes.size(); ++h) to_build += built.empty() || built[h] ? 1 : 0;
  memory_guard guard(m_s, to_build);
  ctx.host_built = [&guard](size_t n) { guard.host_built(n); };
  try {
    m_fab.emplace(m_s.topology, m_s.link, make_switch_factory(m_s, ctx), m_nic_params, m_nic_overrides, mem_bytes, ctx,
                  pcie, so.built());
  } catch (...) {
    ctx.host_built = nullptr;
    throw;
  }
  ctx.host_built = nullptr;
  // Under mpirun the rank simulating a link's transmitter writes its tap file (tap_filter).
  m_taps.emplace(m_opts.taps, *m_fab, m_opts.tap_frames, so.tap_filter());
  m_faults.emplace(m_s, *m_fab, ctx, m_run_end);
  if (placing)
    for (topology::host& h : m_fab->hosts())
      if (h.mem) h.mem->prefault();
  m_attached.emplace(so.attach(*m_fab, ctx, placing));
  m_faults->connect(so);
}

// Each rank recorded the blocks of its own NICs; rank 0 writes them all, in the canonical order one process
// writes too (core::transaction_log), so the files are the same however the fabric was cut.
void fabric_setup::flush_rtl_log() {
  if (!m_rtl_log) return;
  if (!so.distributed()) {
    m_rtl_log->finish();
    return;
  }
  std::string error;
  std::vector<uint8_t> mine;
  try {
    mine = m_rtl_log->take_records();
  } catch (const core::config_error& e) {
    error = e.what();
  }
  const std::vector<std::vector<uint8_t>> all = so.gather_bytes(mine);
  if (so.rank() == 0 && error.empty()) {
    try {
      core::transaction_log::write_recording(m_rtl_log->dir(), all);
    } catch (const core::config_error& e) {
      error = e.what();
    }
  }
  error = so.first_message(error);
  if (!error.empty()) throw core::config_error(error);
}

const nic::supernic_params& fabric_setup::nic_params_of(size_t host) {
  auto ov = m_nic_overrides.find(m_fab->hosts()[host].name);
  return ov == m_nic_overrides.end() ? m_nic_params : ov->second;
}

fabric_setup::remote_nic& fabric_setup::remote(size_t host) {
  auto it = m_remote.find(host);
  if (it != m_remote.end()) return it->second;
  const std::string& name = m_fab->hosts()[host].name;
  return m_remote.emplace(host, remote_nic{nic_params_of(host), nic::supernic::nic_stream(m_s.seed, name + "_nic")})
      .first->second;
}

std::string fabric_setup::key_of(size_t host, const std::string& key, bool overridden) {
  return overridden ? "nic_overrides." + m_fab->hosts()[host].name + "." + key : "nic." + key;
}

uint64_t fabric_setup::path_mtu(size_t a, size_t b) {
  const nic::supernic_params &pa = nic_params_of(a), &pb = nic_params_of(b);
  const std::string& na = m_fab->hosts()[a].name;
  const std::string& nb = m_fab->hosts()[b].name;
  const std::string mtu_a = key_of(a, "mtu_bytes", pa.mtu_bytes != m_nic_params.mtu_bytes);
  const std::string mtu_b = key_of(b, "mtu_bytes", pb.mtu_bytes != m_nic_params.mtu_bytes);
  const std::string path_a = key_of(a, "path_mtu_bytes", pa.path_mtu_bytes != m_nic_params.path_mtu_bytes);
  const std::string path_b = key_of(b, "path_mtu_bytes", pb.path_mtu_bytes != m_nic_params.path_mtu_bytes);
  const std::string pair = "the queue pair " + na + " <-> " + nb;
  if (pa.path_mtu_bytes != 0 && pb.path_mtu_bytes != 0 && pa.path_mtu_bytes != pb.path_mtu_bytes)
    throw core::config_error(m_s.source + ": " + pair + " has one path MTU at both ends (IBTA), but " + path_a +
                             " is " + std::to_string(pa.path_mtu_bytes) + " and " + path_b + " is " +
                             std::to_string(pb.path_mtu_bytes));
  const uint64_t asked = pa.path_mtu_bytes != 0 ? pa.path_mtu_bytes : pb.path_mtu_bytes;
  if (asked == 0) return std::min(pa.mtu_bytes, pb.mtu_bytes);
  const std::string& asked_key = pa.path_mtu_bytes != 0 ? path_a : path_b;
  for (const auto& [host, mtu, key] : {std::tuple{&na, pa.mtu_bytes, &mtu_a}, std::tuple{&nb, pb.mtu_bytes, &mtu_b}})
    if (asked > mtu)
      throw core::config_error(m_s.source + ": " + asked_key + " " + std::to_string(asked) + " for " + pair +
                               " is more than " + *host + "'s " + *key + " " + std::to_string(mtu) +
                               ": a path MTU must fit both ends (lower it, or leave it 0 for " +
                               std::to_string(std::min(pa.mtu_bytes, pb.mtu_bytes)) + ")");
  return asked;
}

uint32_t fabric_setup::create_qp(size_t host) {
  topology::host& h = m_fab->hosts()[host];
  return h.built() ? h.nic->create_qp() : nic::supernic::qpn_of(remote(host).qps++);
}

uint32_t fabric_setup::initial_psn(size_t host) {
  topology::host& h = m_fab->hosts()[host];
  if (h.built()) return h.nic->draw_initial_psn();
  remote_nic& r = remote(host);
  return nic::supernic::initial_psn(r.params, r.stream);
}

uint32_t fabric_setup::register_region(size_t host, uint64_t va, uint64_t bytes) {
  topology::host& h = m_fab->hosts()[host];
  return h.built() ? h.nic->register_region(va, bytes) : nic::supernic::rkey_of(remote(host).regions++);
}

}  // namespace fabricsim::testbench
