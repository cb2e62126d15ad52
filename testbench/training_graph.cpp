// A training step's task graph: compute per layer and micro-batch, the collectives between them.
#include "testbench/training_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace fabricsim::testbench {

const char* group_kind_name(group_kind k) {
  switch (k) {
    case group_kind::tp:
      return "tp";
    case group_kind::pp:
      return "pp";
    case group_kind::dp:
      return "dp";
    case group_kind::ep:
      return "ep";
    case group_kind::trace:
      return "trace";
  }
  return "?";
}

uint32_t gpu_rank(const training_model& m, uint64_t t, uint64_t d, uint64_t s) {
  return uint32_t(t + m.tp * (d + m.dp * s));
}

namespace {

// One pipeline op of a stage's schedule: the forward or backward pass of one micro-batch.
struct pipe_op {
  bool backward;
  uint64_t mb;
};

// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s of p runs min(p - s - 1, m) forwards, then
// alternates one forward and one backward, then the remaining backwards. GPipe: every forward, then every
// backward.
std::vector<pipe_op> stage_schedule(const training_model& m, uint64_t s) {
  std::vector<pipe_op> ops;
  const uint64_t mbs = m.micro_batches;
  if (m.p.schedule == "gpipe") {
    for (uint64_t i = 0; i < mbs; ++i) ops.push_back({false, i});
    for (uint64_t i = 0; i < mbs; ++i) ops.push_back({true, i});
    return ops;
  }
  const uint64_t warm = std::min(m.pp - s - 1, mbs);
  uint64_t f = 0, b = 0;
  for (; f < warm; ++f) ops.push_back({false, f});
  while (f < mbs) {
    ops.push_back({false, f++});
    ops.push_back({true, b++});
  }
  while (b < mbs) ops.push_back({true, b++});
  return ops;
}

class graph_builder {
 public:
  explicit graph_builder(const training_model& m) : m_m(m) { m_g.gpus = uint32_t(m.gpus); }

  training_graph build() {
    for (uint64_t s = 0; s < m_m.pp; ++s)
      for (const pipe_op& op : stage_schedule(m_m, s)) add_pass(s, op);
    add_pipeline_sends();
    add_gradient_buckets();
    return std::move(m_g);
  }

 private:
  // The last tasks of a part of the pass, per (data rank, tensor rank): what the next part waits for.
  using frontier = std::vector<uint32_t>;

  uint64_t members() const { return m_m.dp * m_m.tp; }
  uint64_t idx(uint64_t d, uint64_t t) const { return d * m_m.tp + t; }

  uint32_t add_task(training_task t) {
    m_g.tasks.push_back(std::move(t));
    return uint32_t(m_g.tasks.size() - 1);
  }

  uint32_t group_of(group_kind kind, const std::string& op, std::vector<uint32_t> ranks, uint64_t bytes) {
    auto it = m_groups.find({int(kind), ranks});
    if (it == m_groups.end()) {
      it = m_groups.emplace(std::make_pair(int(kind), ranks), uint32_t(m_g.groups.size())).first;
      m_g.groups.push_back({kind, op, std::move(ranks), 0});
    }
    comm_group& g = m_g.groups[it->second];
    g.max_bytes = std::max(g.max_bytes, bytes);
    return it->second;
  }

  uint32_t add_comm(group_kind kind, const std::string& op, std::vector<uint32_t> ranks, uint64_t bytes,
                    const std::vector<uint32_t>& deps, const std::string& label) {
    training_task t;
    t.compute = false;
    t.rank = ranks.front();
    t.bytes = bytes;
    for (uint32_t d : deps)
      if (d != UINT32_MAX) t.deps.push_back(d);
    t.label = fmt::format("{} {} {}", group_kind_name(kind), op, label);
    t.group = group_of(kind, op, std::move(ranks), bytes);
    return add_task(std::move(t));
  }

  // One compute part on every GPU of stage s, each after `prev` of its own (d, t); returns the new frontier.
  frontier add_compute(uint64_t s, const frontier& prev, double flops, const std::string& label) {
    frontier out(members());
    for (uint64_t d = 0; d < m_m.dp; ++d)
      for (uint64_t t = 0; t < m_m.tp; ++t) {
        training_task k;
        k.rank = gpu_rank(m_m, t, d, s);
        k.flops = flops;
        k.label = label;
        if (prev[idx(d, t)] != UINT32_MAX) k.deps.push_back(prev[idx(d, t)]);
        out[idx(d, t)] = add_task(std::move(k));
      }
    return out;
  }

  // The tensor-parallel allreduce closing a part (Megatron's g forward, f backward): one per data rank.
  frontier add_tp_allreduce(uint64_t s, const frontier& prev, const std::string& label) {
    if (m_m.tp == 1) return prev;
    frontier out(members());
    for (uint64_t d = 0; d < m_m.dp; ++d) {
      std::vector<uint32_t> ranks, deps;
      for (uint64_t t = 0; t < m_m.tp; ++t) {
        ranks.push_back(gpu_rank(m_m, t, d, s));
        deps.push_back(prev[idx(d, t)]);
      }
      const uint32_t ar = add_comm(group_kind::tp, "allreduce", ranks, m_m.tp_allreduce_bytes, deps, label);
      for (uint64_t t = 0; t < m_m.tp; ++t) out[idx(d, t)] = ar;
    }
    return out;
  }

  // The expert-parallel alltoall (dispatch before the experts, combine after): per tensor rank and block of
  // `expert` consecutive data ranks.
  frontier add_alltoall(uint64_t s, const frontier& prev, const std::string& label) {
    if (!m_m.moe || m_m.ep == 1) return prev;
    frontier out(members());
    for (uint64_t t = 0; t < m_m.tp; ++t)
      for (uint64_t d0 = 0; d0 < m_m.dp; d0 += m_m.ep) {
        std::vector<uint32_t> ranks, deps;
        for (uint64_t d = d0; d < d0 + m_m.ep; ++d) {
          ranks.push_back(gpu_rank(m_m, t, d, s));
          deps.push_back(prev[idx(d, t)]);
        }
        const uint32_t a = add_comm(group_kind::ep, "alltoall", ranks, m_m.ep_alltoall_bytes, deps, label);
        for (uint64_t d = d0; d < d0 + m_m.ep; ++d) out[idx(d, t)] = a;
      }
    return out;
  }

  // One layer's attention or MLP part, forward or backward, with its collectives.
  frontier add_part(uint64_t s, frontier f, bool mlp, bool backward, const std::string& label) {
    const double flops = (mlp ? m_m.mlp_flops : m_m.attention_flops) * (backward ? 2.0 : 1.0);
    if (mlp) f = add_alltoall(s, f, label + " dispatch");
    f = add_compute(s, f, flops, label);
    if (mlp) f = add_alltoall(s, f, label + " combine");
    return add_tp_allreduce(s, f, label);
  }

  void add_pass(uint64_t s, const pipe_op& op) {
    const bool last = s + 1 == m_m.pp;
    const char dir = op.backward ? 'B' : 'F';
    frontier f(members(), UINT32_MAX);
    const size_t first = m_g.tasks.size();
    auto label = [&](uint64_t layer, const char* part) {
      return fmt::format("{} s{} mb{} L{} {}", dir, s, op.mb, layer, part);
    };
    const uint64_t l0 = s * m_m.layers_per_stage;
    if (op.backward && last) {
      f = add_compute(s, f, 2.0 * m_m.head_flops, fmt::format("B s{} mb{} head", s, op.mb));
      if (op.mb + 1 == m_m.micro_batches) m_head_ready = f;  // the output layer's gradients are complete
    }
    for (uint64_t i = 0; i < m_m.layers_per_stage; ++i) {
      const uint64_t layer = op.backward ? l0 + m_m.layers_per_stage - 1 - i : l0 + i;
      if (op.backward) {
        f = add_part(s, f, true, true, label(layer, "mlp"));
        f = add_part(s, f, false, true, label(layer, "attn"));
        if (op.mb + 1 == m_m.micro_batches) m_grad_ready[{s, layer}] = f;  // its gradients are complete
      } else {
        f = add_part(s, f, false, false, label(layer, "attn"));
        f = add_part(s, f, true, false, label(layer, "mlp"));
      }
    }
    if (!op.backward && last) f = add_compute(s, f, m_m.head_flops, fmt::format("F s{} mb{} head", s, op.mb));
    // The pass's first task on each GPU (compute, or an alltoall it takes part in) waits for the pipeline's
    // input; its last frontier feeds the send to the next stage.
    frontier entry(members(), UINT32_MAX);
    for (size_t i = first; i < m_g.tasks.size(); ++i) {
      const training_task& k = m_g.tasks[i];
      const std::vector<uint32_t> own{k.rank};
      for (uint32_t r : k.compute ? own : m_g.groups[k.group].ranks) {
        uint32_t& e = entry[idx((r / m_m.tp) % m_m.dp, r % m_m.tp)];
        if (e == UINT32_MAX) e = uint32_t(i);
      }
    }
    (op.backward ? m_bwd_in : m_fwd_in)[{s, op.mb}] = entry;
    (op.backward ? m_bwd_out : m_fwd_out)[{s, op.mb}] = f;
  }

  // Stage to stage: each GPU sends its activations (forward) or their gradients (backward) to the GPU of the
  // same data and tensor rank in the next (previous) stage.
  void add_pipeline_sends() {
    for (uint64_t s = 0; s + 1 < m_m.pp; ++s)
      for (uint64_t mb = 0; mb < m_m.micro_batches; ++mb)
        for (uint64_t d = 0; d < m_m.dp; ++d)
          for (uint64_t t = 0; t < m_m.tp; ++t) {
            const uint64_t i = idx(d, t);
            const uint32_t a = gpu_rank(m_m, t, d, s), b = gpu_rank(m_m, t, d, s + 1);
            const uint32_t fs = add_comm(group_kind::pp, "send", {a, b}, m_m.pp_send_bytes, {m_fwd_out.at({s, mb})[i]},
                                         fmt::format("F s{}->s{} mb{}", s, s + 1, mb));
            m_g.tasks[m_fwd_in.at({s + 1, mb})[i]].deps.push_back(fs);
            const uint32_t bs = add_comm(group_kind::pp, "send", {b, a}, m_m.pp_send_bytes,
                                         {m_bwd_out.at({s + 1, mb})[i]}, fmt::format("B s{}->s{} mb{}", s + 1, s, mb));
            m_g.tasks[m_bwd_in.at({s, mb})[i]].deps.push_back(bs);
          }
  }

  // Data-parallel gradient buckets per stage, filled in the backward pass's order (output layer, last layer
  // ... first layer, embedding), a whole layer at a time: a bucket closes once it holds bucket_mib, and its
  // allreduce waits for the backward pass (of the last micro-batch) of every layer in it. Expert weights
  // have their own buckets over the expert-data-parallel group (same experts: data ranks equal mod expert).
  void add_gradient_buckets() {
    const uint64_t cap = uint64_t(m_m.p.bucket_mib * 1048576.0);
    const uint64_t gb = m_m.p.grad_bytes_per_param;
    for (uint64_t s = 0; s < m_m.pp; ++s) {
      const bool last = s + 1 == m_m.pp;
      // (bytes per GPU, frontier that produced them), in backward order.
      std::vector<std::pair<uint64_t, frontier>> dense, expert;
      if (last) dense.push_back({m_m.embedding_params_per_gpu * gb, m_head_ready});
      for (uint64_t i = m_m.layers_per_stage; i-- > 0;) {
        const frontier& f = m_grad_ready.at({s, s * m_m.layers_per_stage + i});
        dense.push_back({m_m.layer_dense_params_per_gpu * gb, f});
        if (m_m.moe) expert.push_back({m_m.layer_expert_params_per_gpu * gb, f});
      }
      if (s == 0) dense.back().first += m_m.embedding_params_per_gpu * gb;  // ready with layer 0's backward
      for (uint64_t t = 0; t < m_m.tp; ++t) {
        std::vector<uint64_t> all_d;
        for (uint64_t d = 0; d < m_m.dp; ++d) all_d.push_back(d);
        add_buckets(s, t, dense, all_d, cap, "dense");
        for (uint64_t j = 0; j < m_m.ep && m_m.dp / m_m.ep > 1; ++j) {
          std::vector<uint64_t> ds;
          for (uint64_t d = j; d < m_m.dp; d += m_m.ep) ds.push_back(d);
          add_buckets(s, t, expert, ds, cap, fmt::format("experts {}", j));
        }
      }
    }
  }

  void add_buckets(uint64_t s, uint64_t t, const std::vector<std::pair<uint64_t, frontier>>& grads,
                   const std::vector<uint64_t>& ds, uint64_t cap, const std::string& what) {
    if (ds.size() < 2) return;
    std::vector<uint32_t> ranks;
    ranks.reserve(ds.size());
    for (uint64_t d : ds) ranks.push_back(gpu_rank(m_m, t, d, s));
    uint64_t bytes = 0, n = 0;
    std::vector<uint32_t> deps;
    for (size_t i = 0; i < grads.size(); ++i) {
      bytes += grads[i].first;
      for (uint64_t d : ds) deps.push_back(grads[i].second[idx(d, t)]);
      if (bytes >= cap || i + 1 == grads.size()) {
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        add_comm(group_kind::dp, "allreduce", ranks, bytes, deps, fmt::format("s{} t{} {} bucket {}", s, t, what, n++));
        bytes = 0;
        deps.clear();
      }
    }
  }

  const training_model& m_m;
  training_graph m_g;
  std::map<std::pair<int, std::vector<uint32_t>>, uint32_t> m_groups;
  std::map<std::pair<uint64_t, uint64_t>, frontier> m_fwd_in, m_fwd_out, m_bwd_in, m_bwd_out;  // by (stage, mb)
  std::map<std::pair<uint64_t, uint64_t>, frontier> m_grad_ready;                              // by (stage, layer)
  frontier m_head_ready;
};

}  // namespace

training_graph build_training_graph(const training_model& m) { return graph_builder(m).build(); }

compute_only_times compute_only(const training_graph& g, double flops_per_s) {
  compute_only_times out;
  out.busy_s.assign(g.gpus, 0.0);
  std::vector<double> end(g.tasks.size(), -1.0);
  std::vector<std::vector<uint32_t>> stream(g.gpus);
  for (uint32_t i = 0; i < g.tasks.size(); ++i)
    if (g.tasks[i].compute) stream[g.tasks[i].rank].push_back(i);
  std::vector<size_t> next(g.gpus, 0);
  std::vector<double> free_at(g.gpus, 0.0);
  size_t done = 0;
  auto deps_end = [&](uint32_t i, double& at) {
    at = 0.0;
    for (uint32_t d : g.tasks[i].deps) {
      if (end[d] < 0) return false;
      at = std::max(at, end[d]);
    }
    return true;
  };
  // Passes until every task has ended: communication ends with its last dependency, a GPU's next compute
  // task starts when it is free and its dependencies have ended.
  while (done < g.tasks.size()) {
    const size_t before = done;
    for (uint32_t i = 0; i < g.tasks.size(); ++i) {
      double at = 0.0;
      if (g.tasks[i].compute || end[i] >= 0 || !deps_end(i, at)) continue;
      end[i] = at;
      ++done;
    }
    for (uint32_t r = 0; r < g.gpus; ++r)
      while (next[r] < stream[r].size()) {
        const uint32_t i = stream[r][next[r]];
        double at = 0.0;
        if (!deps_end(i, at)) break;
        const double dur = task_seconds(g.tasks[i], flops_per_s);
        end[i] = std::max(at, free_at[r]) + dur;
        free_at[r] = end[i];
        out.busy_s[r] += dur;
        out.step_s = std::max(out.step_s, end[i]);
        ++next[r];
        ++done;
      }
    if (done == before) throw std::logic_error("training graph: a dependency cycle (no task can start)");
  }
  return out;
}

}  // namespace fabricsim::testbench
