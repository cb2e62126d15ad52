// One host's PCIe tray: the NIC's payload writes into GPU memory, direct or through a bounce buffer.
#include "sc_models/pcie/host_tray.h"

#include <algorithm>

namespace fabricsim::pcie {

void host_tray_params::visit(core::param_visitor& v) {
  v.field({"data_path", "",
           "gpudirect: the NIC writes and reads GPU memory through the switch; bounce: it writes and reads host "
           "memory through the root complex, the GPU's copy engine copying each landed message up and each send's "
           "payload down first",
           0, 0, {"gpudirect", "bounce"}},
          data_path);
  v.field({"p2p", "", "NIC<->GPU traffic direct through the switch, or redirected up through the root complex (ACS)",
           0, 0, {"direct", "via_root_complex"}},
          peer_to_peer);
  v.field({"gpu_gen", "", "GPU port link generation (5: 32 GT/s framed; 6: 64 GT/s flit mode)", 5, 6}, gpu_generation);
  v.field({"gpu_lanes", "lanes", "GPU port link width (1, 2, 4, 8, 16)", 1, 16}, gpu_lanes);
  v.field({"cpu_gen", "", "root port (CPU) link generation", 5, 6}, cpu_generation);
  v.field({"cpu_lanes", "lanes", "root port (CPU) link width", 1, 16}, cpu_lanes);
  v.field({"nic_gen", "", "the NIC's internal port generation", 5, 6}, nic_generation);
  v.field({"nic_lanes", "lanes", "the NIC's internal port width", 1, 16}, nic_lanes);
  v.field({"channel_ns", "ns", "every PCIe link's channel delay (propagation), each way (estimate)", 0, 1e6},
          propagation_ns);
  v.field({"mps_bytes", "bytes", "max payload size: posted writes and completions are cut at it", 128, 4096},
          max_payload_bytes);
  v.field({"mrrs_bytes", "bytes", "max read request size", 128, 4096}, max_read_request_bytes);
  v.field({"rcb_bytes", "bytes", "read completion boundary (64 or 128)", 64, 128}, read_completion_boundary_bytes);
  v.field({"posted_header_credits", "credits", "receivers' posted header credits (0: infinite)", 0, 4096},
          posted_header_credits);
  v.field({"posted_data_credits", "16 B", "receivers' posted data credits (0: infinite)", 0, 65536},
          posted_data_credits);
  v.field({"non_posted_header_credits", "credits", "receivers' non-posted header credits (0: infinite)", 0, 4096},
          non_posted_header_credits);
  v.field({"non_posted_data_credits", "16 B", "receivers' non-posted data credits (0: infinite)", 0, 65536},
          non_posted_data_credits);
  v.field({"update_fc_latency_ns", "ns", "buffer freed to UpdateFC scheduled (estimate)", 0, 1e6},
          update_fc_latency_ns);
  v.field({"cut_through_latency_ns", "ns", "switch: header in to first byte out (estimate)", 0, 1e6},
          cut_through_latency_ns);
  v.field({"gpu_memory_gbps", "Gb/s", "GPU memory (HBM) bandwidth for PCIe traffic", 1, 1e6}, gpu_memory_gbps);
  v.field({"gpu_memory_latency_ns", "ns", "GPU memory access latency (estimate)", 0, 1e6}, gpu_memory_latency_ns);
  v.field({"root_complex_latency_ns", "ns", "one traversal of the CPU's root complex (estimate)", 0, 1e6},
          root_complex_latency_ns);
  v.field({"host_memory_gbps", "Gb/s", "host memory bandwidth left to PCIe (estimate)", 1, 1e6}, host_memory_gbps);
  v.field({"host_memory_latency_ns", "ns", "host memory access latency (estimate)", 0, 1e6}, host_memory_latency_ns);
  v.field({"memory_queue_bytes", "bytes", "either memory's backlog accepted before it holds its link's credits",
           0, 1ull << 32},
          memory_queue_bytes);
  v.field({"copy_launch_ns", "ns",
           "bounce: message landed in host memory to the GPU copy started; a send's copy to host memory done to "
           "the send posted (estimate)",
           0, 1e7},
          copy_launch_ns);
  v.field({"copy_read_bytes", "bytes",
           "bounce: request size of the GPU copy engine (reads of host memory on receive, writes to it for sends)",
           64, 1 << 20},
          copy_read_bytes);
  v.field({"copy_outstanding_bytes", "bytes", "bounce: copy engine request bytes in flight, per copy", 64,
           1ull << 30},
          copy_outstanding_bytes);
}

namespace {

pcie_switch_params switch_params(const host_tray_params& p) {
  pcie_switch_params s;
  s.tlp.max_payload_bytes = p.max_payload_bytes;
  s.tlp.max_read_request_bytes = p.max_read_request_bytes;
  s.tlp.read_completion_boundary_bytes = p.read_completion_boundary_bytes;
  s.cut_through_latency_ns = p.cut_through_latency_ns;
  s.peer_to_peer = p.peer_to_peer;
  return s;
}

std::vector<pcie_port_config> ports(const host_tray_params& p) {
  std::vector<pcie_port_config> ports = connectx8_gb300_ports();
  for (pcie_port_config& c : ports) {
    c.link.propagation_ns = p.propagation_ns;
    c.link.posted_header_credits = p.posted_header_credits;
    c.link.posted_data_credits = p.posted_data_credits;
    c.link.non_posted_header_credits = p.non_posted_header_credits;
    c.link.non_posted_data_credits = p.non_posted_data_credits;
    c.link.update_fc_latency_ns = p.update_fc_latency_ns;
    if (c.name == "gpu") c.link.generation = p.gpu_generation, c.link.lanes = p.gpu_lanes;
    if (c.name == "cpu") c.link.generation = p.cpu_generation, c.link.lanes = p.cpu_lanes;
    if (c.name == "nic") c.link.generation = p.nic_generation, c.link.lanes = p.nic_lanes;
  }
  return ports;
}

root_complex_params rc_params(const host_tray_params& p, uint64_t bytes) {
  root_complex_params r;
  r.latency_ns = p.root_complex_latency_ns;
  r.host_base = 0;
  r.host_size_bytes = bytes;
  r.memory = {p.host_memory_gbps, p.host_memory_latency_ns, p.memory_queue_bytes};
  return r;
}

}  // namespace

host_tray::host_tray(sc_core::sc_module_name name, const host_tray_params& params, uint8_t* gpu_storage,
                     uint64_t bytes)
    : sc_core::sc_module(name),
      m_params(params),
      m_bounce(params.data_path == "bounce"),
      m_gpu_data(gpu_storage),
      m_switch("cx8", switch_params(params), ports(params)),
      m_gpu("gpu_memory", gpu_storage, bytes, {params.gpu_memory_gbps, params.gpu_memory_latency_ns,
                                               params.memory_queue_bytes}),
      m_rc("root_complex", rc_params(params, bytes)),
      m_nic("nic_dma"),
      m_copy("gpu_copy_engine") {
  core::check_ranges(m_params, this->name());
  m_switch.port("gpu").to_device.bind(m_gpu.socket);
  m_copy.socket.bind(m_switch.port("gpu").from_device);
  m_switch.port("cpu").to_device.bind(m_rc.from_switch);
  m_rc.to_switch.bind(m_switch.port("cpu").from_device);
  m_nic.socket.bind(m_switch.port("nic").from_device);
  m_nic.set_handler(*this);
  m_copy_handler.owner = this;
  m_copy.set_handler(m_copy_handler);
  SC_METHOD(on_copy);
  sensitive << m_copy_event;
  dont_initialize();
  SC_METHOD(on_send_copy);
  sensitive << m_send_copy_event;
  dont_initialize();
  SC_METHOD(on_staged);
  sensitive << m_staged_event;
  dont_initialize();
}

void host_tray::start_of_simulation() {
  m_started = true;
  if (!m_send_copies.empty()) m_send_copy_event.notify(sc_core::SC_ZERO_TIME);
}

void host_tray::post_read(uint64_t va, uint8_t* dst, uint64_t length, uint64_t cookie) {
  m_nic.read((m_bounce ? 0 : gpu_base) + va, dst, uint32_t(length), read_flag | cookie);
  ++m_reads;
  m_read_bytes += length;
}

bool host_tray::stage_send(uint64_t va, uint64_t bytes, core::picoseconds at, uint64_t cookie) {
  if (!m_bounce) return false;
  m_send_copies.push_back({at, va, bytes, cookie});
  if (m_started && !m_send_copying) m_send_copy_event.notify(sc_core::SC_ZERO_TIME);
  return true;
}

// Send copies run one after another, in the order asked (one stream), each as posted writes of GPU memory's
// bytes to the same address in host memory: down the cpu link, through the root complex, into host memory.
void host_tray::on_send_copy() {
  if (m_send_copying || m_send_copies.empty()) return;
  const core::picoseconds now = core::now();
  if (m_send_copies.front().ready > now) {
    m_send_copy_event.notify(core::to_sc_time(m_send_copies.front().ready - now));
    return;
  }
  m_send_copying = true;
  m_send_copy = m_send_copies.front();
  m_send_copies.pop_front();
  m_send_copy_next = m_send_copy_done = 0;
  issue_send_copy_writes();
}

void host_tray::issue_send_copy_writes() {
  while (m_send_copy_next < m_send_copy.bytes &&
         m_send_copy_next - m_send_copy_done < m_params.copy_outstanding_bytes) {
    const uint64_t len = std::min<uint64_t>(m_params.copy_read_bytes, m_send_copy.bytes - m_send_copy_next);
    const uint64_t va = m_send_copy.va + m_send_copy_next;
    m_copy.write(va, m_gpu_data + va, uint32_t(len), send_copy_flag | len);  // GPU memory -> host memory at va
    m_send_copy_next += len;
  }
}

void host_tray::send_copy_done(uint64_t length) {
  m_send_copy_done += length;
  m_bytes_staged += length;
  if (m_send_copy_done < m_send_copy.bytes) {
    issue_send_copy_writes();
    return;
  }
  // The host sees the copy done and posts the send (the same launch delay as a copy's).
  m_staged.push_back({core::now() + core::picoseconds::from_ns(m_params.copy_launch_ns), m_send_copy.cookie});
  m_staged_event.notify(core::to_sc_time(m_staged.front().at - core::now()));
  m_send_copying = false;
  m_send_copy_event.notify(sc_core::SC_ZERO_TIME);
}

void host_tray::on_staged() {
  const core::picoseconds now = core::now();
  while (!m_staged.empty() && m_staged.front().at <= now) {
    const uint64_t cookie = m_staged.front().cookie;
    m_staged.pop_front();
    if (m_on_staged) m_on_staged(cookie);
  }
  if (!m_staged.empty()) m_staged_event.notify(core::to_sc_time(m_staged.front().at - now));
}

void host_tray::post_write(uint64_t va, const uint8_t* data, uint64_t length) {
  // The engine only reads `data` for a write.
  m_nic.write((m_bounce ? 0 : gpu_base) + va, const_cast<uint8_t*>(data), uint32_t(length), length);
  ++m_writes_issued;
  m_in_flight += length;
  m_peak_in_flight = std::max(m_peak_in_flight, m_in_flight);
}

void host_tray::dma_done(uint64_t length, bool) {
  if (length & read_flag) {  // a transmit read: its completions are all in
    if (m_on_read) m_on_read(length & ~read_flag);
    return;
  }
  m_in_flight -= length;
  m_bytes_written += length;
  ++m_writes_landed;
  check_messages();
  if (m_on_landed) m_on_landed();
}

void host_tray::message_issued(uint64_t va, uint64_t bytes) {
  m_waiting.push_back({va, bytes, m_writes_issued, core::now()});
  check_messages();
}

// Posted writes from the NIC to one memory stay in order on every link and in the memory's queue, so a message
// is in memory once as many writes have landed as had been issued when its last one went.
void host_tray::check_messages() {
  while (!m_waiting.empty() && m_waiting.front().seq <= m_writes_landed) {
    const issued i = m_waiting.front();
    m_waiting.pop_front();
    const landed_message m{i.va, i.bytes, i.at, core::now()};
    if (!m_bounce) {
      m_landed.push_back(m);
      if (m_on_message) m_on_message(m);
      continue;
    }
    m_copies.push_back({core::now() + core::picoseconds::from_ns(m_params.copy_launch_ns), m});
    if (!m_copying) m_copy_event.notify(core::to_sc_time(m_copies.front().ready - core::now()));
  }
}

// Copies run one after another, in order (one CUDA stream): the next starts when the last has finished and
// its own launch has happened.
void host_tray::on_copy() {
  if (m_copying || m_copies.empty()) return;
  const core::picoseconds now = core::now();
  if (m_copies.front().ready > now) {
    m_copy_event.notify(core::to_sc_time(m_copies.front().ready - now));
    return;
  }
  m_copying = true;
  m_copy_msg = m_copies.front().m;
  m_copies.pop_front();
  m_copy_next = m_copy_done = 0;
  if (m_copy_msg.bytes == 0) {
    copy_done(0);
    return;
  }
  issue_copy_reads();
}

void host_tray::issue_copy_reads() {
  while (m_copy_next < m_copy_msg.bytes && m_copy_next - m_copy_done < m_params.copy_outstanding_bytes) {
    const uint64_t len = std::min<uint64_t>(m_params.copy_read_bytes, m_copy_msg.bytes - m_copy_next);
    const uint64_t va = m_copy_msg.va + m_copy_next;
    m_copy.read(va, m_gpu_data + va, uint32_t(len), len);  // host memory at host_base 0 -> GPU memory
    m_copy_next += len;
  }
}

void host_tray::copy_done(uint64_t length) {
  m_copy_done += length;
  m_bytes_copied += length;
  if (m_copy_done < m_copy_msg.bytes) {
    issue_copy_reads();
    return;
  }
  m_copy_msg.landed_at = core::now();
  m_landed.push_back(m_copy_msg);
  m_copying = false;
  m_copy_event.notify(sc_core::SC_ZERO_TIME);
  if (m_on_message) m_on_message(m_landed.back());
}

void host_tray::register_stats(core::stats_registry& stats) const {
  const std::string inst = name();
  stats.counter(inst, "nic_writes", "writes", "posted writes the NIC issued (one per received payload)",
                &m_writes_issued);
  stats.counter(inst, "nic_bytes_landed", "bytes", "payload bytes the NIC's writes landed in memory",
                &m_bytes_written);
  stats.counter(inst, "copy_bytes", "bytes", "bounce: bytes the GPU copy engine moved from host to GPU memory",
                &m_bytes_copied);
  stats.counter(inst, "nic_reads", "reads", "transmit: payload reads the NIC issued (one per packet)", &m_reads);
  stats.counter(inst, "nic_read_bytes", "bytes", "transmit: payload bytes the NIC read", &m_read_bytes);
  stats.counter(inst, "send_copy_bytes", "bytes", "bounce: bytes the GPU copy engine moved from GPU to host memory "
                "for sends", &m_bytes_staged);
  stats.counter(inst, "peak_in_flight_bytes", "bytes", "most payload bytes issued and not yet landed at once",
                &m_peak_in_flight);
  m_switch.register_stats(stats);
}

}  // namespace fabricsim::pcie
