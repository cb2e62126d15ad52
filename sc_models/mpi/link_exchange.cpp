// The links that cross between ranks, and the window protocol.
#include "sc_models/mpi/link_exchange.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <type_traits>

#include "sc_models/ib/credit_link.h"

namespace fabricsim::mpi {

namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); }

// This thread's CPU time: what simulating costs, whatever else the machine runs (unlike wall time).
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// One frame on the wire between ranks: this header, the descriptor, its telemetry records, its payload. A
// credit update is this header alone (kind credit_record: vl and fccl in their fields).
enum record_kind : uint8_t { frame_record = 0, credit_record = 1 };
struct frame_header {
  uint32_t link;        // index in fabric::links()
  uint8_t flags;        // core::link::frame_flags
  uint8_t int_records;  // telemetry records that follow the descriptor
  uint8_t has_payload;  // payload bytes follow the records
  uint8_t kind = frame_record;
  int32_t payload_host;  // -1: no payload reference
  uint32_t vl = 0;       // credit_record: the virtual lane; frame_record: the payload's payload_place
  uint64_t payload_offset;  // credit_record: the FCCL, in 64-byte blocks
  uint64_t arrival_ps;
};
static_assert(std::is_trivially_copyable_v<core::packet>, "descriptors are sent as bytes");
static_assert(std::is_trivially_copyable_v<frame_header>);

template <class T>
void put(std::vector<uint8_t>& b, const T& v) {
  const size_t at = b.size();
  b.resize(at + sizeof(T));
  std::memcpy(b.data() + at, &v, sizeof(T));
}

}  // namespace

link_exchange::link_exchange(world& w, const partition& part, topology::fabric& fab, core::sim_context& ctx,
                             bool ship_payload)
    : m_world(w),
      m_part(part),
      m_fab(fab),
      m_ctx(ctx),
      m_ship_payload(ship_payload),
      m_active(w.distributed() && part.cross_links() > 0),
      m_out(size_t(w.size())),
      m_inbox(fab.links().size()) {
  for (size_t i = 0; i < fab.links().size(); ++i) {
    if (!fab.links()[i]) continue;  // neither end on this rank
    core::link& l = *fab.links()[i];
    if (l.calendar_key() != i + 1) throw std::logic_error("link_exchange: links are not numbered in fabric order");
    if (m_active && part.crosses(i) && part.tx_rank(i) == w.rank()) l.set_proxy(this);
  }
  clear_out();
}

void link_exchange::map_regions() {
  // Every host's memory map: its memory when it is simulated here, else its mirror. A NIC with nic.placement
  // pcie sends from its transmit buffer, which mirrors its memory's addresses; the NIC makes that buffer at
  // the end of elaboration, so the map is made at the first frame.
  for (size_t h = 0; h < m_fab.hosts().size(); ++h) {
    topology::host& host = m_fab.hosts()[h];
    m_regions.push_back({host.buffer().data(), host.buffer().size(), uint32_t(h), payload_place::memory});
    if (host.built() && host.nic->transmit_buffer() != nullptr)
      m_regions.push_back(
          {host.nic->transmit_buffer(), host.nic->memory_size(), uint32_t(h), payload_place::transmit_buffer});
  }
  m_regions.insert(m_regions.end(), m_spaces.begin(), m_spaces.end());
  std::sort(m_regions.begin(), m_regions.end(), [](const region& a, const region& b) { return a.base < b.base; });
}

void link_exchange::add_payload_space(uint32_t id, const uint8_t* base, uint64_t size) {
  m_spaces.push_back({base, size, id, payload_place::space});
  m_regions.clear();  // mapped again at the next frame
}

void link_exchange::add_payload_mirror(uint32_t id, uint8_t* base, uint64_t size) {
  if (m_mirrors.size() <= id) m_mirrors.resize(size_t(id) + 1, mirror{nullptr, 0});
  m_mirrors[id] = {base, size};
}

link_exchange::~link_exchange() {
  for (auto& l : m_fab.links())
    if (l && l->proxy() == this) l->set_proxy(nullptr);
}

void link_exchange::forward(core::link& l, core::packet* p, core::picoseconds arrival, uint8_t flags) {
  const auto t0 = clock::now();
  const size_t index = size_t(l.calendar_key() - 1);
  std::vector<uint8_t>& b = m_out[size_t(m_part.rx_rank(index))];
  frame_header h{};
  h.link = uint32_t(index);
  h.flags = flags;
  h.int_records = p->telemetry_slot != 0 ? p->int_hops : 0;
  h.payload_host = -1;
  h.arrival_ps = arrival.value;
  if (p->payload != nullptr) {
    if (m_regions.empty()) map_regions();
    // The payload is a reference into a host's memory (or a mirror of it), or into its NIC's transmit buffer
    // (nic.placement pcie): name it by host, place and offset (the far rank has the same hosts' memory maps,
    // at other addresses).
    auto it = std::upper_bound(m_regions.begin(), m_regions.end(), p->payload,
                               [](const uint8_t* a, const region& r) { return a < r.base; });
    if (it == m_regions.begin() || p->payload >= (it - 1)->base + (it - 1)->size)
      throw std::logic_error(std::string(l.name()) + ": a frame's payload is not in any host's memory");
    --it;
    h.payload_host = int32_t(it->host);
    h.payload_offset = uint64_t(p->payload - it->base);
    h.vl = uint32_t(it->place);
    // A payload space's bytes exist only here: they always travel.
    h.has_payload = (m_ship_payload || it->place == payload_place::space) && p->payload_bytes > 0;
  }
  put(b, h);
  put(b, *p);
  if (h.int_records) {
    const auto& rec = m_ctx.pool.telemetry(p);
    for (unsigned k = 0; k < h.int_records; ++k) put(b, rec[k]);
  }
  if (h.has_payload) b.insert(b.end(), p->payload, p->payload + p->payload_bytes);
  ++m_prof.frames_sent;
  m_sent_first = std::min(m_sent_first, arrival.value);
  m_ctx.pool.release(p);  // the far rank takes a descriptor from its own pool
  m_prof.pack_s += seconds_since(t0);
}

void link_exchange::forward_credit(core::link& l, unsigned vl, uint64_t fccl, core::picoseconds arrival) {
  // Sent now, exchanged at the end of this window (no later than now + lookahead), delivered by the far
  // rank's calendar: it must arrive beyond that. An update crosses the cable (at least the lookahead) plus
  // quantum.credit_update_latency_ns, which check_scale_out_supported requires to be positive.
  if (arrival.value <= core::now().value + m_part.lookahead().value)
    throw std::logic_error(std::string(l.name()) + ": a credit update sent at " + std::to_string(core::now().value) +
                           " ps arrives at " + std::to_string(arrival.value) + " ps, within the lookahead (" +
                           std::to_string(m_part.lookahead().value) + " ps): it could reach the far rank in its past");
  const size_t index = size_t(l.calendar_key() - 1);
  frame_header h{};
  h.link = uint32_t(index);
  h.kind = credit_record;
  h.payload_host = -1;
  h.vl = vl;
  h.payload_offset = fccl;
  h.arrival_ps = arrival.value;
  put(m_out[size_t(m_part.rx_rank(index))], h);
  m_sent_first = std::min(m_sent_first, arrival.value);
  ++m_prof.credits_sent;
}

void link_exchange::credit_inbox::push(unsigned vl, uint64_t fccl, core::picoseconds arrival) {
  if (arrival < core::now() || (!m_due.empty() && arrival < m_due.back().arrival))
    throw std::logic_error(std::string(m_link.name()) + ": a credit update from another process arrives at " +
                           std::to_string(arrival.value) + " ps, in this process's past (now " +
                           std::to_string(core::now().value) + " ps): the lookahead was violated");
  const bool was_empty = m_due.empty();
  m_due.push_back({arrival, uint32_t(vl), fccl});
  if (was_empty) m_calendar.schedule(this, arrival);
}

void link_exchange::credit_inbox::on_due(core::picoseconds t) {
  auto* peer = dynamic_cast<sw::ib::credit_peer*>(m_link.sink());
  if (peer == nullptr)
    throw std::logic_error(std::string(m_link.name()) + ": a credit update for a device that takes no credits");
  // In arrival order, as the sending receiver would have delivered them in one process.
  while (!m_due.empty() && m_due.front().arrival <= t) {
    const update u = m_due.front();
    m_due.pop_front();
    peer->credit_update(m_link.sink_port(), u.vl, u.fccl);
  }
  if (!m_due.empty()) m_calendar.schedule(this, m_due.front().arrival);
}

void link_exchange::inject(const std::vector<uint8_t>& in) {
  size_t at = sizeof(uint64_t);  // the protocol's header: the sender's bound on the next event
  while (at < in.size()) {
    frame_header h;
    std::memcpy(&h, in.data() + at, sizeof h);
    at += sizeof h;
    if (h.kind == credit_record) {
      auto& box = m_inbox[h.link];
      if (!box) box = std::make_unique<credit_inbox>(*m_fab.links()[h.link], m_ctx.calendar);
      box->push(h.vl, h.payload_offset, core::picoseconds(h.arrival_ps));
      continue;
    }
    ++m_prof.frames_received;
    core::packet* p = m_ctx.pool.acquire();
    const uint64_t id = p->id;
    std::memcpy(static_cast<void*>(p), in.data() + at, sizeof(core::packet));
    at += sizeof(core::packet);
    p->id = id;  // ids are per pool (traces only)
    p->telemetry_slot = 0;
    if (h.int_records) {
      auto& rec = m_ctx.pool.telemetry(p);
      for (unsigned k = 0; k < h.int_records; ++k) {
        std::memcpy(&rec[k], in.data() + at, sizeof(core::int_record));
        at += sizeof(core::int_record);
      }
    }
    p->payload = nullptr;
    if (h.payload_host >= 0 && payload_place(h.vl) == payload_place::space) {
      // Bytes from another rank's payload space land in this rank's mirror of it, at the same offset.
      const size_t id = size_t(h.payload_host);
      if (id >= m_mirrors.size() || m_mirrors[id].base == nullptr ||
          h.payload_offset + p->payload_bytes > m_mirrors[id].size || !h.has_payload)
        throw std::logic_error(std::string(m_fab.links()[h.link]->name()) + ": a frame's payload from space " +
                               std::to_string(id) + " has no mirror on this rank to land in");
      uint8_t* where = m_mirrors[id].base + h.payload_offset;
      std::memcpy(where, in.data() + at, p->payload_bytes);
      at += p->payload_bytes;
      p->payload = where;
    } else if (h.payload_host >= 0) {
      topology::host& src = m_fab.hosts()[size_t(h.payload_host)];
      const bool here = m_part.host_rank(size_t(h.payload_host)) == m_world.rank();
      // A payload from a NIC's transmit buffer refers to it again where that NIC is simulated; elsewhere it
      // lands in the mirror of the host's memory at the same address (the buffer mirrors those addresses). A
      // frame back home after a detour through another rank (a leaf-spine-leaf path whose spine is there)
      // names that rank's mirror (place memory), but a NIC with a transmit buffer sends only from it: its
      // memory may not hold the bytes (a GPU's NIC reads HBM through its tray, topology/gpu_cluster.h).
      const bool in_tx =
          here && (payload_place(h.vl) == payload_place::transmit_buffer || src.nic->transmit_buffer() != nullptr);
      const uint8_t* where = (in_tx ? src.nic->transmit_buffer() : src.buffer().data()) + h.payload_offset;
      if (h.has_payload) {
        // The bytes land in this rank's mirror of the sending host's memory, at the same place: the descriptor
        // then refers to them as it did on the sending rank. A host this rank simulates already holds them.
        if (!here) std::memcpy(src.buffer().data() + h.payload_offset, in.data() + at, p->payload_bytes);
        at += p->payload_bytes;
      }
      p->payload = where;
    }
    core::link& l = *m_fab.links()[h.link];
    const bool faulted = (h.flags & (core::link::frame_lost | core::link::frame_corrupted)) != 0 &&
                         (h.flags & core::link::frame_injected) == 0;
    if (faulted && h.link < m_arrival_loss.size() && m_arrival_loss[h.link] != nullptr) {
      const core::picoseconds end = core::picoseconds(h.arrival_ps) - l.latency();  // link::transmit's arrival
      m_arrival_loss[h.link]->on_wire_loss(*p, end - l.serialization(p->wire()), end);
    }
    l.inject(p, core::picoseconds(h.arrival_ps), h.flags);
  }
}

void link_exchange::on_arrival_loss(size_t link, core::wire_loss_listener* l) {
  if (m_arrival_loss.size() <= link) m_arrival_loss.resize(link + 1, nullptr);
  m_arrival_loss[link] = l;
}

void link_exchange::clear_out() {
  for (size_t r = 0; r < m_out.size(); ++r) m_out[r].assign(int(r) == m_world.rank() ? 0 : sizeof(uint64_t), 0);
  m_sent_first = UINT64_MAX;
}

uint64_t link_exchange::exchange() {
  // One message to every other rank, carrying this rank's bound on the next event: the earliest of its own
  // next event and of the arrivals it sends (which become the far ranks' events once injected). The
  // minimum over the ranks is then the earliest next event anywhere, as an MPI_Allreduce after the
  // injection would give, without that second meeting of the ranks.
  const uint64_t mine = std::min(local_next(), m_sent_first);
  for (size_t r = 0; r < m_out.size(); ++r) {
    if (int(r) == m_world.rank()) continue;
    m_prof.bytes_sent += m_out[r].size() - sizeof(uint64_t);
    ++m_prof.messages_sent;
  }
  double wait_s = 0.0, exchange_s = 0.0;
  const uint64_t next = m_world.window_exchange(m_out, mine, m_in, wait_s, exchange_s);
  ++m_prof.collectives;
  m_prof.wait_s += wait_s;
  m_prof.exchange_s += exchange_s;
  clear_out();
  // Rank order, and within a rank the order the frames were sent: per link that is arrival order.
  const auto t1 = clock::now();
  const double cpu1 = thread_cpu_s();
  for (const auto& b : m_in) {
    if (b.empty()) continue;  // this rank's own slot
    m_prof.bytes_received += b.size() - sizeof(uint64_t);
    inject(b);
  }
  m_prof.unpack_cpu_s += thread_cpu_s() - cpu1;
  m_prof.unpack_s += seconds_since(t1);
  return next;
}

uint64_t link_exchange::local_next() const {
  if (!sc_core::sc_pending_activity()) return UINT64_MAX;
  return core::now().value + core::from_sc_time(sc_core::sc_time_to_pending_activity()).value;
}

bool link_exchange::pending() {
  if (!m_active) return sc_core::sc_pending_activity();
  const auto t0 = clock::now();
  const bool any = m_world.min(local_next()) != UINT64_MAX;
  ++m_prof.collectives;
  m_prof.exchange_s += seconds_since(t0);
  m_prof.loop_s += seconds_since(t0);  // a step of the run loop between two start() calls
  return any;
}

void link_exchange::start(core::picoseconds stop, sc_core::sc_starvation_policy policy) {
  if (!m_active) {  // one kernel with the whole fabric: exactly the single-process calls
    const core::picoseconds now = core::now();
    if (stop > now) {
      const core::kernel_run_window window(stop);  // the arrival calendar may serve times ahead within it
      sc_core::sc_start(sc_core::sc_time(double((stop - now).value), sc_core::SC_PS), policy);
    }
    // Starving, the kernel leaves the clock short of `stop` when the next event lies beyond it: move it on.
    if (core::now() < stop && sc_core::sc_pending_activity())
      sc_core::sc_start(sc_core::sc_time(double((stop - core::now()).value), sc_core::SC_PS), sc_core::SC_RUN_TO_TIME);
    return;
  }
  const auto loop0 = clock::now();
  const uint64_t lookahead = m_part.lookahead().value;
  // Before the first sc_start the kernel reports nothing pending: run its initialization (time 0, no time
  // passes) so that every rank sees its first events.
  if (sc_core::sc_get_status() == sc_core::SC_ELABORATION) sc_core::sc_start(sc_core::SC_ZERO_TIME);
  // The earliest next event of any rank: agreed once here, then carried by each window's exchange.
  auto t0 = clock::now();
  uint64_t next = m_world.min(local_next());
  ++m_prof.collectives;
  m_prof.exchange_s += seconds_since(t0);
  for (;;) {
    // An event at `stop` itself is not run by this call (sc_start to a time leaves the events at that time
    // pending, in one process too): the ranks agree to stop here. Were it left to each rank's own clock (end
    // <= now below), a rank that has reached `stop` would leave the loop while another, still short of it,
    // waits for it at the next window's exchange.
    if (next == UINT64_MAX || next >= stop.value) break;
    // Every rank may run to the earliest next event anywhere plus the lookahead: nothing sent from then on
    // arrives before that.
    const uint64_t end = std::min(stop.value, next + lookahead);
    const uint64_t now = core::now().value;
    // Only a window ending at `stop` can find a rank already there (a window otherwise ends a lookahead past
    // the earliest next event, beyond every clock), with an event at `stop` left pending, while a rank that
    // skipped the last window may still be behind. Whether to stop is then decided together (done when no
    // rank has anything to run before `stop`), or one rank would leave the loop while another waits for it
    // at the next exchange.
    if (end == stop.value) {
      t0 = clock::now();
      const bool done = m_world.min(now >= end || local_next() > end ? 1 : 0) == 1;
      ++m_prof.collectives;
      m_prof.exchange_s += seconds_since(t0);
      if (done) break;
    } else if (end <= now) {
      break;
    }
    t0 = clock::now();
    const double cpu0 = thread_cpu_s();
    // A rank with nothing to do before `end` leaves its clock where it is (starving, the kernel would not move
    // it either); a frame injected later is scheduled relative to it.
    if (now < end && local_next() <= end)
      sc_core::sc_start(sc_core::sc_time(double(end - now), sc_core::SC_PS), sc_core::SC_EXIT_ON_STARVATION);
    m_prof.busy_cpu_s += thread_cpu_s() - cpu0;
    m_prof.busy_s += seconds_since(t0);
    ++m_prof.windows;
    next = exchange();
    if (m_window_end) {
      // The hook may schedule work (a collective's next posts): agree on the next event after it.
      t0 = clock::now();
      m_window_end();
      next = m_world.min(local_next());
      ++m_prof.collectives;
      m_prof.hook_s += seconds_since(t0);
    }
    // Every rank must start the next window at or before its own next event, or it could run past a frame
    // it would send to another rank's past.
    if (local_next() < next)
      throw std::logic_error("link_exchange: this rank's next event at " + std::to_string(local_next()) +
                             " ps is before the agreed " + std::to_string(next) + " ps");
  }
  // Where one kernel would have stopped: at `stop` when running to a time or when anything is left beyond it;
  // starving with nothing left anywhere, at the last event of the whole fabric.
  uint64_t until = stop.value;
  if (policy != sc_core::SC_RUN_TO_TIME && next == UINT64_MAX) {
    until = m_world.max(core::now().value);
    ++m_prof.collectives;
  }
  const uint64_t now = core::now().value;
  if (until > now) sc_core::sc_start(sc_core::sc_time(double(until - now), sc_core::SC_PS), sc_core::SC_RUN_TO_TIME);
  m_prof.loop_s += seconds_since(loop0);
}

}  // namespace fabricsim::mpi
