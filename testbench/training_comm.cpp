// A training step's collectives as RDMA WRITEs through the modelled fabric, and the compute timer.
#include "testbench/training_comm.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "sc_models/core/params.h"
#include "sc_models/core/sim_context.h"
#include "sc_models/nic/supernic.h"
#include "sc_models/topology/fabric.h"
#include "testbench/collective_schedule.h"
#include "testbench/fabric_setup.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

using core::picoseconds;

timer_service::timer_service(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
  SC_METHOD(fire);
  sensitive << m_ev;
  dont_initialize();
}

void timer_service::at(picoseconds t, std::function<void()> f) {
  const picoseconds now = core::now();
  if (t < now) t = now;
  m_q.push({t, m_seq++, std::move(f)});
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
  collective_params p;
  std::unique_ptr<collective_schedule> sched;
  std::vector<rank_memory> ranks;
  uint64_t max_bytes = 0;
  struct pending {
    uint64_t bytes;
    std::function<void()> on_done;
  };
  std::deque<pending> queue;
  bool busy = false;
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
        m_reduce_ps_per_byte(s.collective.reduce_gbps > 0 ? 1000.0 / s.collective.reduce_gbps : 0.0) {}

  void plan(const std::vector<comm_group>& groups, const std::vector<size_t>& rank_host,
            std::vector<uint64_t>& mem_bytes) override {
    for (const comm_group& g : groups) {
      auto c = std::make_unique<fabric_comm>();
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
      if (m_hosts_used.count(host))
        m_fab->hosts()[host].nic->set_placed_callback(
            [this, host](const nic::placed_message& m) { on_placed(host, m); });
  }

  void run(const std::string& op, uint32_t group, uint64_t bytes, std::function<void()> on_done) override {
    fabric_comm& c = *m_comms.at(group);
    if ((op == "send" ? "broadcast" : op) != c.p.op)
      throw std::logic_error("training: communicator " + std::to_string(group) + " runs " + c.p.op + ", not " + op);
    c.queue.push_back({std::max<uint64_t>(bytes, 2) / 2 * 2, std::move(on_done)});
    if (!c.busy) start(c, core::now());
  }

  uint64_t writes_posted() const override { return m_wr_id; }

 private:
  static constexpr uint64_t page = 4096;
  static uint64_t round_up(uint64_t v) { return (v + page - 1) / page * page; }
  static uint64_t slots(const fabric_comm& c) { return c.p.buffer_slots * round_up(c.sched->slice_bytes()); }

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
      a.nic->connect_qp(q.sq, b.ip, q.rq, psn_a, psn_b, mtu);
      b.nic->connect_qp(q.rq, a.ip, q.sq, psn_b, psn_a, mtu);
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
    c.sched->build(c.queue.front().bytes, c.ranks);
    const std::vector<transfer>& xs = c.sched->transfers();
    c.deps.resize(xs.size());
    c.ready_at.assign(xs.size(), at);
    c.placed = 0;
    c.end = at;
    std::vector<connection>& conns = c.sched->connections();
    for (uint32_t i = 0; i < xs.size(); ++i) {
      c.deps[i] = xs[i].deps;
      if (xs[i].deps == 0) conns[xs[i].conn].ready.push_back(i);
    }
    for (connection& k : conns) try_post(c, k);
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
      k.flight.push_back({i, dst, slot});
    }
  }

  // A WRITE placed: reduce it (its time only: the step moves no checked data), free its slot, release what
  // waited for it; the collective ends with its last placement or reduction.
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
      k.free_slots.push_back({f.slot, ready + m_credit});
      try_post(c, k);
    }
    c.end = core::max(c.end, ready);
    for (uint32_t nx : t.next) {
      c.ready_at[nx] = core::max(c.ready_at[nx], ready);
      if (--c.deps[nx] == 0) {
        connection& q = conns[xs[nx].conn];
        q.ready.push_back(nx);
        try_post(c, q);
      }
    }
    if (++c.placed == xs.size()) finish(c);
  }

  void finish(fabric_comm& c) {
    std::function<void()> done = std::move(c.queue.front().on_done);
    c.queue.pop_front();
    const picoseconds end = c.end;
    m_timers->at(end, [this, &c, done = std::move(done), end] {
      done();
      c.busy = false;
      if (!c.queue.empty()) start(c, end);
    });
  }

  const scenario& m_s;
  timer_service* m_timers = nullptr;
  picoseconds m_credit;
  double m_reduce_ps_per_byte;
  topology::fabric* m_fab = nullptr;
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
