// A training step's collectives as RDMA WRITEs through the modelled fabric, and the compute timer.
#include "testbench/training_comm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

#include "sc_models/core/params.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective_schedule.h"
#include "testbench/fabric_setup.h"
#include "testbench/scale_out.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

using core::picoseconds;

timer_service::timer_service(const sc_core::sc_module_name& name, bool keyed)
    : sc_core::sc_module(name), m_keyed(keyed) {
  SC_METHOD(fire);
  sensitive << m_ev;
  dont_initialize();
}

void timer_service::at(picoseconds t, std::function<void()> f, uint64_t key) {
  const picoseconds now = core::now();
  if (t < now) t = now;
  m_q.push({t, m_keyed ? key : 0, m_seq++, std::move(f)});
  m_ev.notify(sc_core::sc_time(double((t - now).value), sc_core::SC_PS));  // an earlier pending one stays
}

void timer_service::fire() {
  while (!m_q.empty() && m_q.top().t <= core::now()) {
    std::function<void()> f = m_q.top().f;
    m_q.pop();
    f();
  }
  if (!m_q.empty()) m_ev.notify(sc_core::sc_time(double((m_q.top().t - core::now()).value), sc_core::SC_PS));
}

namespace {

// One communicator on the fabric: its schedule over the group's ranks, their buffers and queue pairs, and
// the collective in progress (one at a time; the others wait in order).
struct fabric_comm {
  uint32_t index = 0;  // in the backend's list (the step's communicator)
  collective_params p;
  std::unique_ptr<collective_schedule> sched;
  std::vector<rank_memory> ranks;
  uint64_t max_bytes = 0;
  struct pending {
    uint64_t bytes;
    uint32_t task;
    std::function<void()> on_done;
  };
  std::deque<pending> queue;
  bool busy = false;
  bool ending = false;  // its last WRITE placed, its end timer set
  std::vector<uint32_t> deps;
  std::vector<picoseconds> ready_at;
  uint64_t placed = 0;
  picoseconds end{};
};

class fabric_backend final : public comm_backend {
 public:
  explicit fabric_backend(const scenario& s)
      : m_s(s),
        m_credit(picoseconds::from_ns(s.collective.credit_ns)),
        m_barrier(picoseconds::from_ns(s.collective.barrier_ns)),
        m_reduce_ps_per_byte(s.collective.reduce_gbps > 0 ? 1000.0 / s.collective.reduce_gbps : 0.0) {}

  void plan(const std::vector<comm_group>& groups, const std::vector<size_t>& rank_host,
            std::vector<uint64_t>& mem_bytes) override {
    for (const comm_group& g : groups) {
      auto c = std::make_unique<fabric_comm>();
      c->index = uint32_t(m_comms.size());
      c->p = m_s.collective;  // the engine's keys: chunk_bytes, buffer_slots, reduce_gbps, credit_ns
      c->p.dtype = "bfloat16";
      c->p.algo = "ring";
      c->p.op = g.op == "send" ? "broadcast" : g.op;  // a send is a chain from the first rank to the second
      c->p.root = 0;
      c->sched = std::make_unique<collective_schedule>(c->p, uint32_t(g.ranks.size()));
      c->sched->plan_connections();
      c->max_bytes = std::max<uint64_t>(g.max_bytes, 2);
      for (uint32_t r : g.ranks) {
        rank_memory m;
        m.host = rank_host[r];
        c->ranks.push_back(m);
      }
      for (uint32_t r = 0; r < c->ranks.size(); ++r)
        mem_bytes[c->ranks[r].host] += 3 * page + 2 * round_up(c->max_bytes) + c->sched->staged_in(r) * slots(*c);
      m_comms.push_back(std::move(c));
    }
  }

  void elaborate(fabric_setup& setup, timer_service& timers) override {
    m_fab = &setup.fab();
    m_timers = &timers;
    m_so = setup.so.distributed() ? &setup.so : nullptr;
    if (m_so) m_out.assign(size_t(m_so->ranks()), {});
    for (uint32_t ci = 0; ci < m_comms.size(); ++ci) {
      fabric_comm& c = *m_comms[ci];
      for (uint32_t r = 0; r < c.ranks.size(); ++r) {
        rank_memory& m = c.ranks[r];
        topology::host& h = m_fab->hosts()[m.host];
        const uint64_t staging = c.sched->staged_in(r) * slots(c);
        m.send = h.buffer().allocate(c.max_bytes);
        m.recv = h.buffer().allocate(round_up(c.max_bytes) + staging);
        m.staging = m.recv + round_up(c.max_bytes);
        m.rkey = setup.register_region(m.host, m.recv, round_up(c.max_bytes) + staging);
      }
      connect(setup, ci);
    }
    for (size_t host = 0; host < m_fab->hosts().size(); ++host)
      if (m_hosts_used.count(host) && m_fab->hosts()[host].built())
        m_fab->hosts()[host].nic->set_placed_callback(
            [this, host](const nic::placed_message& m) { on_placed(host, m); });
    if (m_so) m_so->on_window_end([this] { window_end(); });
  }

  void run(const std::string& op, uint32_t group, uint64_t bytes, uint32_t task,
           std::function<void()> on_done) override {
    fabric_comm& c = *m_comms.at(group);
    if ((op == "send" ? "broadcast" : op) != c.p.op)
      throw std::logic_error("training: communicator " + std::to_string(group) + " runs " + c.p.op + ", not " + op);
    c.queue.push_back({std::max<uint64_t>(bytes, 2) / 2 * 2, task, std::move(on_done)});
    if (!c.busy) start(c, core::now());
  }

  uint64_t writes_posted() const override { return m_wr_id; }

  std::vector<std::pair<size_t, size_t>> staged_host_pairs() const override {
    std::vector<std::pair<size_t, size_t>> out;
    for (const auto& c : m_comms)
      for (const connection& k : c->sched->connections())
        if (k.has_staging) out.push_back({c->ranks[k.src].host, c->ranks[k.dst].host});
    return out;
  }

 private:
  static constexpr uint64_t page = 4096;
  static uint64_t round_up(uint64_t v) { return (v + page - 1) / page * page; }
  static uint64_t slots(const fabric_comm& c) { return c.p.buffer_slots * round_up(c.sched->slice_bytes()); }

  // Under mpirun: whether this process simulates the host of the communicator's rank `r` (one process: all).
  bool here(const fabric_comm& c, uint32_t r) const { return !m_so || m_so->owns_host(c.ranks[r].host); }

  void connect(fabric_setup& setup, uint32_t ci) {
    fabric_comm& c = *m_comms[ci];
    std::vector<connection>& conns = c.sched->connections();
    for (uint32_t k = 0; k < conns.size(); ++k) {
      connection& q = conns[k];
      const size_t ha = c.ranks[q.src].host, hb = c.ranks[q.dst].host;
      topology::host& a = m_fab->hosts()[ha];
      topology::host& b = m_fab->hosts()[hb];
      q.sq = setup.create_qp(ha);
      q.rq = setup.create_qp(hb);
      const uint32_t psn_a = setup.initial_psn(ha), psn_b = setup.initial_psn(hb);
      const uint64_t mtu = setup.path_mtu(ha, hb);
      if (a.built()) a.nic->connect_qp(q.sq, b.ip, q.rq, psn_a, psn_b, mtu);
      if (b.built()) b.nic->connect_qp(q.rq, a.ip, q.sq, psn_b, psn_a, mtu);
      if (q.has_staging) {
        rank_memory& d = c.ranks[q.dst];
        q.staging = d.staging + uint64_t(d.staging_used++) * slots(c);
        for (uint32_t s = 0; s < c.p.buffer_slots; ++s) q.free_slots.push_back({s, picoseconds{}});
      }
      m_by_rq[{hb, q.rq}] = {ci, k};
      m_hosts_used[ha] = m_hosts_used[hb] = true;
    }
  }

  void start(fabric_comm& c, picoseconds at) {
    c.busy = true;
    c.ending = false;
    c.sched->build(c.queue.front().bytes, c.ranks);
    const std::vector<transfer>& xs = c.sched->transfers();
    c.deps.resize(xs.size());
    c.ready_at.assign(xs.size(), at);
    c.placed = 0;
    c.end = at;
    std::vector<connection>& conns = c.sched->connections();
    for (uint32_t i = 0; i < xs.size(); ++i) {
      c.deps[i] = xs[i].deps;
      if (xs[i].deps == 0 && here(c, xs[i].src)) conns[xs[i].conn].ready.push_back(i);
    }
    for (connection& k : conns)
      if (here(c, k.src)) try_post(c, k);
  }

  void try_post(fabric_comm& c, connection& k) {
    const std::vector<transfer>& xs = c.sched->transfers();
    while (!k.ready.empty()) {
      const uint32_t i = k.ready.front();
      const transfer& t = xs[i];
      picoseconds at = core::max(core::max(c.ready_at[i], k.last_post), core::now());
      uint64_t dst = t.dst_addr;
      uint32_t slot = UINT32_MAX;
      if (t.staged) {
        if (k.free_slots.empty()) return;  // credit: wait for the receiver to consume a slot
        slot = k.free_slots.front().first;
        at = core::max(at, k.free_slots.front().second);
        k.free_slots.pop_front();
        dst = k.staging + uint64_t(slot) * round_up(c.sched->slice_bytes());
      }
      k.ready.pop_front();
      m_fab->hosts()[c.ranks[t.src].host].nic->post_write(k.sq, m_wr_id++, t.src_addr, dst, c.ranks[t.dst].rkey,
                                                          t.bytes, at);
      k.last_post = at;
      // The receiver matches placements against this; on another rank it gets it at the window's end, before
      // the WRITE's first packet can arrive there (that takes more than a lookahead).
      if (here(c, t.dst))
        k.flight.push_back({i, dst, slot});
      else
        send(c, t.dst, {record::flight, c.index, uint32_t(&k - c.sched->connections().data()), i, slot, dst});
    }
  }

  // A WRITE placed: reduce it (its time only: the step moves no checked data), free its slot, release what
  // waited for it; the collective ends with its last placement or reduction (under mpirun found at a window's
  // end: the placements are counted on the ranks of their hosts).
  void on_placed(size_t host, const nic::placed_message& m) {
    auto it = m_by_rq.find({host, m.qpn});
    if (it == m_by_rq.end()) return;
    fabric_comm& c = *m_comms[it->second.first];
    std::vector<connection>& conns = c.sched->connections();
    connection& k = conns[it->second.second];
    const std::vector<transfer>& xs = c.sched->transfers();
    auto fit = std::find_if(k.flight.begin(), k.flight.end(),
                            [&](const connection::in_flight& x) { return x.dst_addr == m.va; });
    if (fit == k.flight.end()) return;
    const connection::in_flight f = *fit;
    k.flight.erase(fit);
    const transfer& t = xs[f.xfer];
    picoseconds ready = core::now();
    if (t.staged) {
      rank_memory& me = c.ranks[t.dst];
      const picoseconds start = core::max(ready, me.reduce_free);
      me.reduce_free = start + picoseconds(uint64_t(std::llround(double(t.bytes) * m_reduce_ps_per_byte)));
      ready = me.reduce_free;
      // The credit reaches the sender credit_ns later; on another rank at the end of this window, which is no
      // later than that when credit_ns is at least the lookahead (checked before the run).
      if (here(c, t.src)) {
        k.free_slots.push_back({f.slot, ready + m_credit});
        try_post(c, k);
      } else {
        send(c, t.src, {record::credit, it->second.first, it->second.second, 0, f.slot, (ready + m_credit).value});
      }
    }
    c.end = core::max(c.end, ready);
    for (uint32_t nx : t.next) {
      // The schedules' dependencies are host-local (a slice goes on from where it landed).
      if (!here(c, xs[nx].src)) throw std::logic_error("training: a transfer released on another process");
      c.ready_at[nx] = core::max(c.ready_at[nx], ready);
      if (--c.deps[nx] == 0) {
        connection& q = conns[xs[nx].conn];
        q.ready.push_back(nx);
        try_post(c, q);
      }
    }
    if (++c.placed == xs.size() && !m_so) finish(c);
  }

  // The collective's end, barrier_ns after its last placement or reduction (the time its ranks learn it).
  void finish(fabric_comm& c) {
    c.ending = true;
    std::function<void()> done = std::move(c.queue.front().on_done);
    const uint32_t task = c.queue.front().task;
    c.queue.pop_front();
    const picoseconds end = c.end + m_barrier;
    m_timers->at(
        end,
        [this, &c, done = std::move(done), end] {
          done();
          c.busy = false;
          if (!c.queue.empty()) start(c, end);
        },
        task);
  }

  // Under mpirun, on every rank after each window: the posts and slot credits for other ranks, then each
  // running collective's placements summed and its latest ready time over the ranks; one whose WRITEs have all
  // been placed ends (barrier_ns after that time, which is past this window when barrier_ns is at least the
  // lookahead) on every rank alike.
  void window_end() {
    const std::vector<std::vector<uint8_t>> in = m_so->all_to_all(m_out);
    for (auto& o : m_out) o.clear();
    std::vector<std::pair<uint32_t, uint32_t>> credited;
    for (const auto& buf : in)
      for (size_t at = 0; at + sizeof(record) <= buf.size(); at += sizeof(record)) {
        record rec;
        std::memcpy(&rec, buf.data() + at, sizeof(record));
        connection& k = m_comms.at(rec.comm)->sched->connections().at(rec.conn);
        if (rec.kind == record::flight) {
          k.flight.push_back({rec.xfer, rec.value, rec.slot});
        } else {
          k.free_slots.push_back({rec.slot, picoseconds{rec.value}});
          credited.push_back({rec.comm, rec.conn});
        }
      }
    for (const auto& [ci, k] : credited) try_post(*m_comms[ci], m_comms[ci]->sched->connections()[k]);
    std::vector<uint64_t> placed(m_comms.size(), 0), end(m_comms.size(), 0);
    for (size_t ci = 0; ci < m_comms.size(); ++ci)
      if (m_comms[ci]->busy && !m_comms[ci]->ending) {
        placed[ci] = m_comms[ci]->placed;
        end[ci] = m_comms[ci]->end.value;
      }
    m_so->sum(placed);
    m_so->max(end);
    for (size_t ci = 0; ci < m_comms.size(); ++ci) {
      fabric_comm& c = *m_comms[ci];
      // (A collective with no WRITE never ends, in one process neither: no placement to end it.)
      if (!c.busy || c.ending || c.sched->transfers().empty() || placed[ci] != c.sched->transfers().size()) continue;
      c.end = picoseconds{end[ci]};
      finish(c);
    }
  }

  struct record {
    enum kind_t : uint32_t { flight, credit } kind;
    uint32_t comm, conn, xfer, slot;
    uint64_t value;  // flight: destination address; credit: when the slot is free at the sender (ps)
  };
  // A record for the process that simulates the communicator's rank `r`, sent at the window's end.
  void send(const fabric_comm& c, uint32_t r, const record& rec) {
    std::vector<uint8_t>& out = m_out.at(size_t(m_so->host_rank(c.ranks[r].host)));
    const size_t at = out.size();
    out.resize(at + sizeof(record));
    std::memcpy(out.data() + at, &rec, sizeof(record));
  }

  const scenario& m_s;
  timer_service* m_timers = nullptr;
  picoseconds m_credit, m_barrier;
  double m_reduce_ps_per_byte;
  topology::fabric* m_fab = nullptr;
  scale_out* m_so = nullptr;                // under mpirun
  std::vector<std::vector<uint8_t>> m_out;  // records for each rank, sent at the window's end
  std::vector<std::unique_ptr<fabric_comm>> m_comms;
  std::map<std::pair<size_t, uint32_t>, std::pair<uint32_t, uint32_t>> m_by_rq;  // (host, QPN) -> (comm, conn)
  std::map<size_t, bool> m_hosts_used;
  uint64_t m_wr_id = 0;
};

}  // namespace

std::unique_ptr<comm_backend> make_comm_backend(const std::string& name, const scenario& s) {
  if (name == "fabric") return std::make_unique<fabric_backend>(s);
  if (name == "cluster")
    throw core::config_error(s.source +
                             ": training.comm_backend cluster runs on a cluster of NVLink domains: set system.preset "
                             "(gb200_nvl72, gb300_nvl72, hgx_b200 or hgx_b300)");
  throw core::config_error(s.source + ": training.comm_backend: \"" + name + "\" is not one of: fabric, cluster");
}

}  // namespace fabricsim::testbench
