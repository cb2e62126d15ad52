// The set-up every run shares.
#include "testbench/fabric_setup.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <systemc>

#include "testbench/switch_factory.h"

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

bool any_nic_places_data(const scenario& s) {
  bool any = s.nic.place_data;
  for (const auto& [name, params] : s.nic_overrides) any = any || params.place_data;
  return any;
}

void check_memory_budget(const scenario& s, const std::vector<uint64_t>& mem_bytes, bool placing,
                         const std::string& what, const std::string& detail, const std::string& advice) {
  uint64_t total = 0;
  for (uint64_t b : mem_bytes) total += b;
  const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  if (placing && total > physical / 4 * 3)
    throw core::config_error(s.source + ": " + what + " need " + std::to_string(total >> 20) + " MiB of memory" +
                             detail + ", more than 3/4 of this machine's " + std::to_string(physical >> 20) + " MiB; " +
                             advice);
}

fabric_setup::fabric_setup(const scenario& s, const run_options& opts)
    : m_s(s),
      m_opts(opts),
      m_run_end(core::picoseconds::from_ns((s.run.duration_us > 0 ? s.run.duration_us : s.run.limit_us) * 1e3)),
      m_nic_params(s.nic),
      m_nic_overrides(s.nic_overrides),
      m_rtl_log(!s.run.record_rtl_dir.empty() && !opts.elaborate_only
                    ? std::make_unique<core::transaction_log>(s.run.record_rtl_dir)
                    : nullptr),
      // Under mpirun this rank builds and simulates part of the fabric (docs/scale_out.md): its hosts and
      // switches and the links with an end among them. One process: all of it.
      so(topology::plan_fabric(s.topology, s.link), s.partition) {
  ctx.seed = s.seed;
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
  }
}

void fabric_setup::build(const std::vector<uint64_t>& mem_bytes, const pcie::host_tray_params& pcie, bool placing) {
  m_fab.emplace(m_s.topology, m_s.link, make_switch_factory(m_s, ctx), m_nic_params, m_nic_overrides, mem_bytes, ctx,
                pcie, so.built());
  // Under mpirun the rank simulating a link's transmitter writes its tap file (tap_filter).
  m_taps.emplace(m_opts.taps, *m_fab, m_opts.tap_frames, so.tap_filter());
  m_faults.emplace(m_s, *m_fab, ctx, m_run_end);
  if (placing)
    for (topology::host& h : m_fab->hosts())
      if (h.mem) h.mem->prefault();
  m_attached.emplace(so.attach(*m_fab, ctx, placing));
}

void fabric_setup::flush_rtl_log() {
  if (m_rtl_log) m_rtl_log->flush();
}

fabric_setup::remote_nic& fabric_setup::remote(size_t host) {
  auto it = m_remote.find(host);
  if (it != m_remote.end()) return it->second;
  const std::string& name = m_fab->hosts()[host].name;
  auto ov = m_nic_overrides.find(name);
  const nic::supernic_params& p = ov == m_nic_overrides.end() ? m_nic_params : ov->second;
  return m_remote.emplace(host, remote_nic{p, nic::supernic::nic_stream(m_s.seed, name + "_nic")}).first->second;
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
