// `fabricsim pcie-bench`: 800G RDMA WRITE reception into GPU memory, GPUDirect RDMA against a bounce buffer.
#include "testbench/pcie_bench.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "sc_models/core/ring.h"
#include "sc_models/pcie/dma_engine.h"

namespace fabricsim::testbench {

void pcie_bench_params::visit(core::param_visitor& v) {
  v.field({"config", "", "placement path", 0, 0, {"gpudirect", "bounce", "both"}}, config);
  v.field({"line_rate_gbps", "Gb/s", "the NIC's Ethernet line rate", 1, 1e5}, line_rate_gbps);
  v.field({"mtu_bytes", "bytes", "RoCE path MTU (payload per packet)", 256, 4096}, mtu_bytes);
  v.field({"packet_overhead_bytes", "bytes", "wire bytes per packet besides payload (headers, FCS, preamble, gap)",
           0, 1000},
          packet_overhead_bytes);
  v.field({"reth_bytes", "bytes", "RETH on a WRITE's first packet", 0, 64}, reth_bytes);
  v.field({"nic_receive_latency_ns", "ns", "packet's last bit in to its placement write issued", 0, 1e6},
          nic_receive_latency_ns);
  v.field({"point_bytes", "bytes", "bytes streamed per message size", 4096, 1ull << 32}, point_bytes);
  v.field({"min_size_bytes", "bytes", "smallest message size of the curve", 1, 1ull << 32}, min_size_bytes);
  v.field({"max_size_bytes", "bytes", "largest message size of the curve", 1, 1ull << 26}, max_size_bytes);
  v.field({"direction", "", "receive: WRITEs placed into GPU memory; send: the NIC reads GPU memory to send", 0, 0,
           {"receive", "send"}},
          direction);
  v.field({"nic_prefetch_packets", "packets", "send: packet buffers the NIC reads ahead into", 1, 65536},
          nic_prefetch_packets);
  v.field({"copy_launch_ns", "ns", "bounce: WRITE landed in host memory to the GPU copy started", 0, 1e7},
          copy_launch_ns);
  v.field({"copy_read_bytes", "bytes", "bounce: read request size of the GPU copy engine", 64, 1 << 20},
          copy_read_bytes);
  v.field({"copy_outstanding_bytes", "bytes", "bounce: copy engine reads in flight", 64, 1ull << 30},
          copy_outstanding_bytes);
}

namespace {

constexpr uint64_t gpu_base = 0x100000000000ull;  // connectx8_gb300_ports(): the GPU's window

// What the bench asks of a stream, whichever way it goes.
class bench_stream {
 public:
  virtual ~bench_stream() = default;
  virtual void start(uint64_t size, uint64_t messages, bool bounce) = 0;
  virtual uint64_t done_at(uint64_t m) const = 0;  // ps: receive: last byte in GPU memory; send: last bit out
  virtual uint64_t origin(uint64_t m) const = 0;   // ps: receive: last bit in; send: the send posted
  virtual double offered_gbps() const = 0;
  virtual bool verify_last() const = 0;
};

// The NIC side of an RDMA WRITE stream: packets arrive at the line rate and each becomes one posted write of
// its payload; with a bounce buffer the host then has the GPU copy each landed message in.
class write_stream : public sc_core::sc_module, public pcie::dma_engine::handler, public bench_stream {
 public:
  SC_HAS_PROCESS(write_stream);
  write_stream(sc_core::sc_module_name name, const pcie_bench_params& p, pcie::dma_engine& nic,
               pcie::dma_engine& copy, uint8_t* gpu_data, uint64_t region)
      : sc_core::sc_module(name), m_p(p), m_nic(nic), m_copy(copy), m_gpu(gpu_data), m_region(region) {
    nic.set_handler(*this);
    m_copy_handler.owner = this;
    copy.set_handler(m_copy_handler);
    m_src.resize(p.max_size_bytes + 4096);
    for (size_t i = 0; i < m_src.size(); ++i) m_src[i] = uint8_t((i * 2654435761u) >> 13);
    SC_METHOD(on_packet);
    sensitive << m_packet_event;
    dont_initialize();
    SC_METHOD(on_copy);
    sensitive << m_copy_event;
    dont_initialize();
  }

  // Streams `messages` WRITEs of `size` bytes from now; sc_start() runs them to the end.
  void start(uint64_t size, uint64_t messages, bool bounce) override {
    m_size = size;
    m_messages = messages;
    m_bounce = bounce;
    m_slot = (size + 4095) / 4096 * 4096;
    m_done_at.assign(messages, 0);
    m_last_bit.assign(messages, 0);
    m_pending.assign(messages, 0);
    m_next_msg = m_next_off = 0;
    m_copy_queue.clear();
    m_copying = false;
    m_wire_bits = 0;
    m_t0 = core::now().value;
    m_packet_event.notify(sc_core::SC_ZERO_TIME);
  }

  uint64_t done_at(uint64_t m) const override { return m_done_at[m]; }
  uint64_t origin(uint64_t m) const override { return m_last_bit[m]; }
  double offered_gbps() const override {
    const uint64_t packets = (m_size + m_p.mtu_bytes - 1) / m_p.mtu_bytes;
    const double wire = double(m_size + packets * m_p.packet_overhead_bytes + m_p.reth_bytes);
    return m_p.line_rate_gbps * double(m_size) / wire;
  }
  bool verify_last() const override {
    const uint64_t m = m_messages - 1;
    return std::memcmp(m_gpu + gpu_offset(m), m_src.data() + src_offset(m), m_size) == 0;
  }

 private:
  struct copy_handler : pcie::dma_engine::handler {
    write_stream* owner = nullptr;
    void dma_done(uint64_t cookie, bool ok) override { owner->copy_done(cookie, ok); }
  };

  uint64_t gpu_offset(uint64_t m) const { return (m * m_slot) % m_region; }
  uint64_t host_address(uint64_t m) const { return m_p.root_complex.host_base + (m * m_slot) % m_region; }
  uint64_t src_offset(uint64_t m) const { return (m * 64) % 4096; }  // each message's bytes differ a little
  uint64_t packet_bytes(uint64_t off) const { return std::min<uint64_t>(m_p.mtu_bytes, m_size - off); }
  // When the packet after m_wire_bits finishes arriving (its last bit), in ps since the stream started.
  uint64_t arrival_ps(uint64_t wire_bits) const {
    return uint64_t(double(wire_bits) * 1000.0 / m_p.line_rate_gbps + 0.5);
  }

  void on_packet() {
    const uint64_t now = core::now().value;
    const uint64_t issue_lag = core::picoseconds::from_ns(m_p.nic_receive_latency_ns).value;
    while (m_next_msg < m_messages) {
      const uint64_t len = packet_bytes(m_next_off);
      const uint64_t bits =
          (len + m_p.packet_overhead_bytes + (m_next_off == 0 ? m_p.reth_bytes : 0)) * 8;
      const uint64_t at = m_t0 + arrival_ps(m_wire_bits + bits) + issue_lag;
      if (at > now) {
        m_packet_event.notify(core::to_sc_time(core::picoseconds(at - now)));
        return;
      }
      m_wire_bits += bits;
      const uint64_t m = m_next_msg;
      const uint64_t dst = m_bounce ? host_address(m) : gpu_base + gpu_offset(m);
      ++m_pending[m];
      m_nic.write(dst + m_next_off, m_src.data() + src_offset(m) + m_next_off, uint32_t(len), m);
      m_next_off += len;
      if (m_next_off == m_size) {
        m_last_bit[m] = at - issue_lag;
        m_next_off = 0;
        ++m_next_msg;
      }
    }
  }

  void dma_done(uint64_t m, bool) override {  // a NIC write has landed
    if (--m_pending[m] != 0 || (m == m_next_msg)) return;  // more packets of m to come or in flight
    if (!m_bounce) {
      m_done_at[m] = core::now().value;
      return;
    }
    m_copy_queue.push_back({core::now().value + core::picoseconds::from_ns(m_p.copy_launch_ns).value, m});
    if (!m_copying) m_copy_event.notify(core::to_sc_time(core::picoseconds(m_copy_queue.front().ready - core::now().value)));
  }

  // Copies run one at a time, in order (one CUDA stream): the next starts when the last has finished and its
  // own launch has happened.
  void on_copy() {
    if (m_copying || m_copy_queue.empty()) return;
    const uint64_t now = core::now().value;
    if (m_copy_queue.front().ready > now) {
      m_copy_event.notify(core::to_sc_time(core::picoseconds(m_copy_queue.front().ready - now)));
      return;
    }
    m_copying = true;
    m_copy_msg = m_copy_queue.front().m;
    m_copy_queue.pop_front();
    m_copy_next = m_copy_done = 0;
    issue_copy_reads();
  }

  void issue_copy_reads() {
    while (m_copy_next < m_size && m_copy_next - m_copy_done < m_p.copy_outstanding_bytes) {
      const uint64_t len = std::min<uint64_t>(m_p.copy_read_bytes, m_size - m_copy_next);
      m_copy.read(host_address(m_copy_msg) + m_copy_next, m_gpu + gpu_offset(m_copy_msg) + m_copy_next,
                  uint32_t(len), len);
      m_copy_next += len;
    }
  }

  void copy_done(uint64_t len, bool) {
    m_copy_done += len;
    if (m_copy_done < m_size) {
      issue_copy_reads();
      return;
    }
    m_done_at[m_copy_msg] = core::now().value;
    m_copying = false;
    m_copy_event.notify(sc_core::SC_ZERO_TIME);
  }

  struct queued_copy {
    uint64_t ready, m;
  };
  const pcie_bench_params& m_p;
  pcie::dma_engine& m_nic;
  pcie::dma_engine& m_copy;
  copy_handler m_copy_handler;
  uint8_t* m_gpu;
  uint64_t m_region;
  std::vector<uint8_t> m_src;
  sc_core::sc_event m_packet_event, m_copy_event;
  uint64_t m_size = 0, m_messages = 0, m_slot = 4096;
  bool m_bounce = false;
  std::vector<uint64_t> m_done_at, m_last_bit;
  std::vector<uint32_t> m_pending;
  uint64_t m_next_msg = 0, m_next_off = 0, m_wire_bits = 0, m_t0 = 0;
  core::ring<queued_copy> m_copy_queue{64};
  bool m_copying = false;
  uint64_t m_copy_msg = 0, m_copy_next = 0, m_copy_done = 0;
};


// The NIC side of a send (an RDMA WRITE's requester, or a READ's responder): the NIC reads each packet's
// payload from memory with non-posted reads into one of `prefetch` MTU-sized buffers and puts the packet on
// the wire once its data is in and the wire is free; a buffer is reused when its packet has left. GPUDirect
// reads GPU memory; with a bounce buffer the GPU's copy engine first writes the message to host memory (one
// copy at a time, in order), the host posts the send `copy_launch_ns` after the copy is done, and the NIC
// reads host memory.
class send_stream : public sc_core::sc_module, public pcie::dma_engine::handler, public bench_stream {
 public:
  SC_HAS_PROCESS(send_stream);
  send_stream(sc_core::sc_module_name name, const pcie_bench_params& p, pcie::dma_engine& nic,
              pcie::dma_engine& copy, uint8_t* gpu_data, uint64_t region)
      : sc_core::sc_module(name), m_p(p), m_nic(nic), m_copy(copy), m_gpu(gpu_data), m_region(region) {
    nic.set_handler(*this);
    m_copy_handler.owner = this;
    copy.set_handler(m_copy_handler);
    m_slots.resize(p.nic_prefetch_packets);
    m_buffers.resize(p.nic_prefetch_packets * p.mtu_bytes);
    for (uint64_t i = 0; i < region; ++i) m_gpu[i] = uint8_t((i * 2654435761u) >> 11);
    SC_METHOD(on_tx);
    sensitive << m_tx_event;
    dont_initialize();
    SC_METHOD(on_copy);
    sensitive << m_copy_event;
    dont_initialize();
  }

  void start(uint64_t size, uint64_t messages, bool bounce) override {
    m_size = size;
    m_messages = messages;
    m_bounce = bounce;
    m_slot_bytes = (size + 4095) / 4096 * 4096;
    m_done_at.assign(messages, 0);
    m_posted_at.assign(messages, 0);
    m_posts.clear();
    m_departures.clear();
    m_read_msg = m_read_off = m_tx_packet = m_read_packet = 0;
    m_in_use = 0;
    m_wire_free = 0;
    m_mismatches = 0;
    m_t0 = core::now().value;
    if (bounce) {
      m_copy_msg = 0;
      begin_copy();
    } else {
      for (uint64_t m = 0; m < messages; ++m) m_posts.push_back({m_t0, m});
      m_tx_event.notify(sc_core::SC_ZERO_TIME);
    }
  }
  uint64_t done_at(uint64_t m) const override { return m_done_at[m]; }
  uint64_t origin(uint64_t m) const override { return m_posted_at[m]; }
  double offered_gbps() const override {
    const uint64_t packets = (m_size + m_p.mtu_bytes - 1) / m_p.mtu_bytes;
    return m_p.line_rate_gbps * double(m_size) /
           double(m_size + packets * m_p.packet_overhead_bytes + m_p.reth_bytes);
  }
  bool verify_last() const override { return m_mismatches == 0; }

 private:
  struct copy_handler : pcie::dma_engine::handler {
    send_stream* owner = nullptr;
    void dma_done(uint64_t cookie, bool ok) override { owner->copy_done(cookie, ok); }
  };
  struct slot {
    uint64_t m = 0, off = 0, len = 0;
    bool ready = false;
  };
  struct timed {
    uint64_t at, m;
  };

  uint64_t gpu_offset(uint64_t m) const { return (m * m_slot_bytes) % m_region; }
  uint64_t host_address(uint64_t m) const { return m_p.root_complex.host_base + (m * m_slot_bytes) % m_region; }
  uint64_t src_address(uint64_t m) const { return m_bounce ? host_address(m) : gpu_base + gpu_offset(m); }

  // Bounce: the GPU copies message m into host memory (posted writes), one copy at a time.
  void begin_copy() {
    m_copy_next = m_copy_done = 0;
    issue_copy_writes();
  }
  void issue_copy_writes() {
    while (m_copy_next < m_size && m_copy_next - m_copy_done < m_p.copy_outstanding_bytes) {
      const uint64_t len = std::min<uint64_t>(m_p.copy_read_bytes, m_size - m_copy_next);
      m_copy.write(host_address(m_copy_msg) + m_copy_next, m_gpu + gpu_offset(m_copy_msg) + m_copy_next,
                   uint32_t(len), len);
      m_copy_next += len;
    }
  }
  void copy_done(uint64_t len, bool) {
    m_copy_done += len;
    if (m_copy_done < m_size) {
      issue_copy_writes();
      return;
    }
    // The host sees the copy done and posts the send.
    const uint64_t at = core::now().value + core::picoseconds::from_ns(m_p.copy_launch_ns).value;
    m_posts.push_back({at, m_copy_msg});
    m_tx_event.notify(core::to_sc_time(core::picoseconds(at - core::now().value)));
    if (++m_copy_msg < m_messages) m_copy_event.notify(sc_core::SC_ZERO_TIME);
  }
  void on_copy() { begin_copy(); }

  void dma_done(uint64_t k, bool ok) override {  // a packet's payload has been read
    slot& s = m_slots[k % m_slots.size()];
    const uint8_t* data = m_buffers.data() + (k % m_slots.size()) * m_p.mtu_bytes;
    if (!ok || std::memcmp(data, m_gpu + gpu_offset(s.m) + s.off, s.len) != 0) ++m_mismatches;
    s.ready = true;
    m_tx_event.notify(sc_core::SC_ZERO_TIME);
  }

  void on_tx() {
    const uint64_t now = core::now().value;
    while (!m_departures.empty() && m_departures.front().at <= now) {  // a packet has left: its buffer is free
      --m_in_use;
      m_departures.pop_front();
    }
    // Reads for posted messages, while buffers are free.
    while (m_read_msg < m_messages && m_in_use < m_slots.size()) {
      if (m_posts.empty() || m_posts.front().at > now) break;
      const uint64_t m = m_posts.front().m;
      if (m_read_off == 0) m_posted_at[m] = m_posts.front().at;
      const uint64_t len = std::min<uint64_t>(m_p.mtu_bytes, m_size - m_read_off);
      const uint64_t k = m_read_packet++;
      slot& s = m_slots[k % m_slots.size()];
      s = slot{m, m_read_off, len, false};
      ++m_in_use;
      m_nic.read(src_address(m) + m_read_off, m_buffers.data() + (k % m_slots.size()) * m_p.mtu_bytes,
                 uint32_t(len), k);
      m_read_off += len;
      if (m_read_off == m_size) {
        m_read_off = 0;
        ++m_read_msg;
        m_posts.pop_front();
      }
    }
    // Packets whose data is in go out in order, back to back.
    while (m_tx_packet < m_read_packet && m_slots[m_tx_packet % m_slots.size()].ready) {
      slot& s = m_slots[m_tx_packet % m_slots.size()];
      s.ready = false;
      const uint64_t bits = (s.len + m_p.packet_overhead_bytes + (s.off == 0 ? m_p.reth_bytes : 0)) * 8;
      const uint64_t start = std::max(now, m_wire_free);
      m_wire_free = start + uint64_t(double(bits) * 1000.0 / m_p.line_rate_gbps + 0.5);
      m_departures.push_back({m_wire_free, 0});
      if (s.off + s.len == m_size) m_done_at[s.m] = m_wire_free;
      ++m_tx_packet;
    }
    uint64_t next = UINT64_MAX;
    if (!m_departures.empty()) next = m_departures.front().at;
    if (!m_posts.empty() && m_posts.front().at > now) next = std::min(next, m_posts.front().at);
    if (next != UINT64_MAX) m_tx_event.notify(core::to_sc_time(core::picoseconds(next - now)));
  }

  const pcie_bench_params& m_p;
  pcie::dma_engine& m_nic;
  pcie::dma_engine& m_copy;
  copy_handler m_copy_handler;
  uint8_t* m_gpu;
  uint64_t m_region;
  std::vector<slot> m_slots;
  std::vector<uint8_t> m_buffers;
  sc_core::sc_event m_tx_event, m_copy_event;
  uint64_t m_size = 0, m_messages = 0, m_slot_bytes = 4096, m_t0 = 0;
  bool m_bounce = false;
  std::vector<uint64_t> m_done_at, m_posted_at;
  core::ring<timed> m_posts{64};
  core::ring<timed> m_departures{64};
  uint64_t m_read_msg = 0, m_read_off = 0, m_read_packet = 0, m_tx_packet = 0, m_in_use = 0, m_wire_free = 0;
  uint64_t m_copy_msg = 0, m_copy_next = 0, m_copy_done = 0, m_mismatches = 0;
};

}  // namespace

std::vector<pcie_bench_run> run_pcie_bench(const pcie_bench_params& params) {
  pcie_bench_params p = params;
  core::check_ranges(p, "pcie-bench");
  core::require(p.min_size_bytes <= p.max_size_bytes, "pcie-bench",
                "min_size_bytes " + std::to_string(p.min_size_bytes) + " exceeds max_size_bytes " +
                    std::to_string(p.max_size_bytes));
  const uint64_t region = std::max<uint64_t>(64u << 20, 2 * ((p.max_size_bytes + 4095) / 4096 * 4096));
  p.root_complex.host_size_bytes = std::max(p.root_complex.host_size_bytes, region);

  pcie::pcie_switch sw("cx8", p.pcie_switch);
  pcie::pcie_memory gpu_mem("gpu_memory", region, p.gpu_memory);
  pcie::root_complex rc("root_complex", p.root_complex);
  pcie::dma_engine nic("nic_dma");
  pcie::dma_engine copy("gpu_copy_engine");
  sw.port("gpu").to_device.bind(gpu_mem.socket);
  copy.socket.bind(sw.port("gpu").from_device);
  sw.port("cpu").to_device.bind(rc.from_switch);
  rc.to_switch.bind(sw.port("cpu").from_device);
  nic.socket.bind(sw.port("nic").from_device);
  std::unique_ptr<bench_stream> owned;
  if (p.direction == "send")
    owned.reset(new send_stream("rdma_send_stream", p, nic, copy, gpu_mem.data(), region));
  else
    owned.reset(new write_stream("rdma_write_stream", p, nic, copy, gpu_mem.data(), region));
  bench_stream& stream = *owned;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  std::vector<std::string> configs;
  if (p.config != "bounce") configs.push_back("gpudirect");
  if (p.config != "gpudirect") configs.push_back("bounce");
  std::vector<pcie_bench_run> runs;
  for (const std::string& config : configs) {
    const bool bounce = config == "bounce";
    pcie_bench_run run;
    run.config = config;
    run.direction = p.direction;
    run.line_rate_gbps = p.line_rate_gbps;
    // An isolated small WRITE: latency.
    stream.start(64, 1, bounce);
    sc_core::sc_start();
    run.small_latency_ns = double(stream.done_at(0) - stream.origin(0)) / 1000.0;
    for (uint64_t size = p.min_size_bytes; size <= p.max_size_bytes; size *= 2) {
      pcie_bench_point pt;
      pt.size_bytes = size;
      pt.messages = std::clamp<uint64_t>(p.point_bytes / size, 16, 4096);
      const pcie::pcie_link& down = sw.port("cpu").down;
      const pcie::pcie_link& up = sw.port("cpu").up;
      const uint64_t down0 = down.payload_bytes(), up0 = up.payload_bytes();
      const uint64_t mem0 = rc.host_memory.bytes_written() + rc.host_memory.bytes_read();
      const uint64_t busy0 = rc.host_memory.busy().value;
      const uint64_t t0 = core::now().value;
      stream.start(size, pt.messages, bounce);
      sc_core::sc_start();
      const uint64_t n = pt.messages;
      pt.offered_gbps = stream.offered_gbps();
      // Steady state: the middle half of the stream, clear of the start (an empty pipeline) and the end (the
      // last copies run with no writes competing).
      const uint64_t a = n / 4, b = 3 * n / 4;
      pt.achieved_gbps = double((b - a) * size) * 8.0 / (double(stream.done_at(b) - stream.done_at(a)) * 1e-3);
      pt.stream_gbps = double(n * size) * 8.0 / (double(stream.done_at(n - 1) - t0) * 1e-3);
      pt.latency_ns = double(stream.done_at(0) - stream.origin(0)) / 1000.0;
      pt.verified = stream.verify_last();
      if (size == p.max_size_bytes) {
        const double span = double(core::now().value - t0) * 1e-3;  // ns
        run.cpu_link_down_gbps = double(down.payload_bytes() - down0) * 8.0 / span;
        run.cpu_link_up_gbps = double(up.payload_bytes() - up0) * 8.0 / span;
        run.host_memory_gbps =
            double(rc.host_memory.bytes_written() + rc.host_memory.bytes_read() - mem0) * 8.0 / span;
        run.host_memory_busy = double(rc.host_memory.busy().value - busy0) / (span * 1e3);
      }
      run.points.push_back(pt);
    }
    for (size_t i = run.points.size(); i-- > 0;) {
      if (run.points[i].achieved_gbps < 0.98 * run.points[i].offered_gbps) break;
      run.knee_bytes = run.points[i].size_bytes;
    }
    runs.push_back(run);
  }
  return runs;
}

nlohmann::json pcie_bench_json(const pcie_bench_params& params, const std::vector<pcie_bench_run>& runs) {
  nlohmann::json j;
  j["line_rate_gbps"] = params.line_rate_gbps;
  j["mtu_bytes"] = params.mtu_bytes;
  j["max_payload_bytes"] = params.pcie_switch.tlp.max_payload_bytes;
  j["peer_to_peer"] = params.pcie_switch.peer_to_peer;
  j["host_memory_gbps"] = params.root_complex.memory.bandwidth_gbps;
  j["direction"] = params.direction;
  for (const pcie_bench_run& r : runs) {
    nlohmann::json rj;
    rj["config"] = r.config;
    rj["small_message_latency_ns"] = r.small_latency_ns;
    rj["knee_bytes"] = r.knee_bytes;
    rj["cpu_link_down_gbps"] = r.cpu_link_down_gbps;
    rj["cpu_link_up_gbps"] = r.cpu_link_up_gbps;
    rj["host_memory_gbps"] = r.host_memory_gbps;
    rj["host_memory_busy"] = r.host_memory_busy;
    for (const pcie_bench_point& pt : r.points)
      rj["points"].push_back({{"size_bytes", pt.size_bytes},
                              {"messages", pt.messages},
                              {"offered_gbps", pt.offered_gbps},
                              {"achieved_gbps", pt.achieved_gbps},
                              {"stream_gbps", pt.stream_gbps},
                              {"first_latency_ns", pt.latency_ns},
                              {"verified", pt.verified}});
    j["runs"].push_back(rj);
  }
  return j;
}

std::string format_pcie_bench(const std::vector<pcie_bench_run>& runs) {
  std::string out;
  for (const pcie_bench_run& r : runs) {
    out += fmt::format("{} {}: 64-byte {} latency {:.1f} ns; line rate (>= 98 % of offered) from {} bytes\n",
                       r.config, r.direction, r.direction == "send" ? "send (posted to last bit out)"
                                                                    : "WRITE (last bit in to placed)",
                       r.small_latency_ns,
                       r.knee_bytes ? std::to_string(r.knee_bytes) : std::string("never"));
    out += fmt::format("{:>10} {:>6} {:>12} {:>12} {:>8} {:>8} {:>12} {:>12} {}\n", "size", "msgs", "offered Gb/s",
                       "placed Gb/s", "of offer", "of line", "stream Gb/s", "latency ns", "verified");
    for (const pcie_bench_point& pt : r.points)
      out += fmt::format("{:>10} {:>6} {:>12.1f} {:>12.1f} {:>7.1f}% {:>7.1f}% {:>12.1f} {:>12.1f} {}\n", pt.size_bytes,
                         pt.messages, pt.offered_gbps, pt.achieved_gbps, 100.0 * pt.achieved_gbps / pt.offered_gbps,
                         100.0 * pt.achieved_gbps / r.line_rate_gbps, pt.stream_gbps, pt.latency_ns,
                         pt.verified ? "yes" : "NO");
    out += fmt::format("at {} bytes, over the whole stream: root port link {:.1f} Gb/s down (to the CPU), {:.1f} Gb/s "
                       "up (payload); host memory {:.1f} Gb/s, busy {:.1f} %\n\n",
                       r.points.empty() ? 0 : r.points.back().size_bytes, r.cpu_link_down_gbps, r.cpu_link_up_gbps,
                       r.host_memory_gbps, 100.0 * r.host_memory_busy);
  }
  return out;
}

}  // namespace fabricsim::testbench

