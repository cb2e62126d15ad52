// Chakra execution traces -> the training task graph: nodes matched across ranks into tasks, dependencies
// checked, a dependency order chosen; every refusal names the file, the node and the field.
#include "testbench/training_chakra.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "testbench/workload.h"

namespace fabricsim::testbench {

using core::config_error;
using traces::chakra_coll;
using traces::chakra_node;
using traces::chakra_node_type;
using traces::chakra_trace;

namespace {

// A node of one rank's file.
struct node_ref {
  uint32_t rank = 0;
  uint32_t index = 0;  // in the file's node list
};

// One task of the graph: the nodes it stands for (a compute node, a collective's node on every member, a
// send and its receive), its group (communication) and its dependencies as task numbers.
struct unit {
  std::vector<node_ref> nodes;
  bool compute = true;
  uint32_t group = 0;
  uint64_t bytes = 0;
  std::set<uint32_t> deps;
};

class chakra_mapper {
 public:
  chakra_mapper(const std::vector<chakra_trace>& t, const std::vector<std::string>& files, double flops_per_s)
      : m_t(t), m_files(files), m_flops_per_s(flops_per_s), m_unit_of(t.size()) {
    m_g.gpus = uint32_t(t.size());
    for (uint32_t r = 0; r < t.size(); ++r) m_unit_of[r].assign(t[r].nodes.size(), UINT32_MAX);
  }

  training_graph build() {
    for (uint32_t r = 0; r < m_t.size(); ++r)
      for (uint32_t i = 0; i < m_t[r].nodes.size(); ++i) classify({r, i});
    match_collectives();
    match_point_to_point();
    link_dependencies();
    emit(dependency_order());
    return std::move(m_g);
  }

 private:
  const chakra_node& node(node_ref n) const { return m_t[n.rank].nodes[n.index]; }
  std::string where(node_ref n) const {
    return fmt::format("{}: node {} \"{}\"", m_files[n.rank], node(n).id, node(n).name);
  }

  int64_t required(node_ref n, const std::optional<int64_t>& v, const char* field, int64_t lo, int64_t hi) const {
    const std::string type = traces::chakra_type_name(node(n).type);
    if (!v) throw config_error(fmt::format("{}: attribute {}: missing (a {} needs it)", where(n), field, type));
    if (*v < lo || *v > hi)
      throw config_error(fmt::format("{}: attribute {}: {} is outside {} .. {}", where(n), field, *v, lo, hi));
    return *v;
  }

  uint32_t new_unit(unit u) {
    for (node_ref n : u.nodes) m_unit_of[n.rank][n.index] = uint32_t(m_units.size());
    m_units.push_back(std::move(u));
    return uint32_t(m_units.size() - 1);
  }

  void classify(node_ref n) {
    const chakra_node& c = node(n);
    const int64_t last_rank = int64_t(m_t.size()) - 1;
    switch (chakra_node_type(c.type)) {
      case chakra_node_type::comp:
      case chakra_node_type::mem_load:
      case chakra_node_type::mem_store:
      case chakra_node_type::metadata: {
        unit u;
        u.nodes = {n};
        new_unit(std::move(u));
        return;
      }
      case chakra_node_type::comm_coll: {
        required(n, c.comm_size, "comm_size", 0, int64_t(1) << 40);
        const int64_t type = required(n, c.comm_type, "comm_type", INT64_MIN, INT64_MAX);
        const std::string op = op_name(type);
        if (op.empty())
          throw config_error(
              fmt::format("{}: attribute comm_type: {} is not modelled (fabricsim runs ALL_REDUCE, "
                          "ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL and BROADCAST)",
                          where(n), traces::chakra_coll_name(type)));
        if (op == "broadcast") required(n, c.comm_src, "comm_src", 0, last_rank);
        m_colls[{c.pg_name.value_or(""), n.rank}].push_back(n);
        return;
      }
      case chakra_node_type::comm_send: {
        required(n, c.comm_size, "comm_size", 0, int64_t(1) << 40);
        const int64_t dst = required(n, c.comm_dst, "comm_dst", 0, last_rank);
        if (dst == n.rank) throw config_error(where(n) + ": attribute comm_dst: the node's own rank");
        m_sends[{n.rank, uint32_t(dst), c.comm_tag.value_or(0)}].push_back(n);
        return;
      }
      case chakra_node_type::comm_recv: {
        const int64_t src = required(n, c.comm_src, "comm_src", 0, last_rank);
        if (src == n.rank) throw config_error(where(n) + ": attribute comm_src: the node's own rank");
        m_recvs[{uint32_t(src), n.rank, c.comm_tag.value_or(0)}].push_back(n);
        return;
      }
      default:
        throw config_error(
            fmt::format("{}: type: {} is not modelled (fabricsim reads COMP_NODE, MEM_LOAD_NODE, "
                        "MEM_STORE_NODE, METADATA_NODE, COMM_COLL_NODE, COMM_SEND_NODE and "
                        "COMM_RECV_NODE)",
                        where(n), traces::chakra_type_name(c.type)));
    }
  }

  static std::string op_name(int64_t type) {
    switch (chakra_coll(type)) {
      case chakra_coll::all_reduce:
        return "allreduce";
      case chakra_coll::all_gather:
        return "allgather";
      case chakra_coll::reduce_scatter:
        return "reducescatter";
      case chakra_coll::all_to_all:
        return "alltoall";
      case chakra_coll::broadcast:
        return "broadcast";
      default:
        return "";
    }
  }

  uint32_t group_of(const std::string& name, const std::string& op, std::vector<uint32_t> ranks, uint64_t bytes) {
    auto key = std::make_tuple(name, op, ranks);
    auto it = m_groups.find(key);
    if (it == m_groups.end()) {
      it = m_groups.emplace(key, uint32_t(m_g.groups.size())).first;
      m_g.groups.push_back({group_kind::trace, op, std::move(ranks), 0, name});
    }
    comm_group& g = m_g.groups[it->second];
    g.max_bytes = std::max(g.max_bytes, bytes);
    return it->second;
  }

  // The k-th collective of a process group on each member is one task; members agree on type and size.
  void match_collectives() {
    std::map<std::string, std::vector<uint32_t>> members;  // pg_name -> ranks holding its collectives
    for (const auto& [key, nodes] : m_colls) members[key.first].push_back(key.second);
    for (auto& [pg, ranks] : members) {
      if (pg.empty()) {  // no pg_name: the world
        ranks.clear();
        for (uint32_t r = 0; r < m_t.size(); ++r) ranks.push_back(r);
      }
      const std::string name = pg.empty() ? "world" : pg;
      const std::string& group = pg;  // a structured binding cannot be captured (C++17)
      const auto count_of = [&](uint32_t r) {
        const auto it = m_colls.find({group, r});
        return it == m_colls.end() ? size_t(0) : it->second.size();
      };
      const std::vector<node_ref>& first = m_colls.at({pg, ranks.front()});
      if (ranks.size() < 2)
        throw config_error(where(first.front()) + ": pg_name: process group \"" + name +
                           "\" has collectives in this rank's trace only (a collective needs two ranks or more)");
      for (uint32_t r : ranks)
        if (count_of(r) != first.size())
          throw config_error(
              fmt::format("{}: {} collectives on process group \"{}\", but {} has {} (every member "
                          "must issue the group's collectives, in the same order)",
                          m_files[ranks.front()], first.size(), name, m_files[r], count_of(r)));
      for (size_t k = 0; k < first.size(); ++k) add_collective(pg, name, ranks, k);
    }
  }

  void add_collective(const std::string& pg, const std::string& name, std::vector<uint32_t> ranks, size_t k) {
    const node_ref lead = m_colls.at({pg, ranks.front()})[k];
    const chakra_node& a = node(lead);
    unit u;
    u.compute = false;
    for (uint32_t r : ranks) {
      const node_ref n = m_colls.at({pg, r})[k];
      const chakra_node& b = node(n);
      if (b.comm_type != a.comm_type || b.comm_size != a.comm_size || b.comm_src != a.comm_src)
        throw config_error(
            fmt::format("{}: collective {} of process group \"{}\": comm_type {} comm_size {}, but {} "
                        "has comm_type {} comm_size {} (the k-th collectives of a group must agree)",
                        where(n), k, name, traces::chakra_coll_name(*b.comm_type), *b.comm_size, where(lead),
                        traces::chakra_coll_name(*a.comm_type), *a.comm_size));
      u.nodes.push_back(n);
    }
    const std::string op = op_name(*a.comm_type);
    if (op == "broadcast") {  // the root first: the schedule broadcasts from its rank 0
      const auto root = std::find(ranks.begin(), ranks.end(), uint32_t(*a.comm_src));
      if (root == ranks.end())
        throw config_error(fmt::format("{}: attribute comm_src: rank {} is not in process group \"{}\"", where(lead),
                                       *a.comm_src, name));
      std::rotate(ranks.begin(), root, ranks.end());
    }
    u.bytes = uint64_t(*a.comm_size);
    u.group = group_of(name, op, std::move(ranks), u.bytes);
    new_unit(std::move(u));
  }

  void match_point_to_point() {
    for (const auto& [key, sends] : m_sends) {
      const auto it = m_recvs.find(key);
      const size_t recvs = it == m_recvs.end() ? 0 : it->second.size();
      const auto& [src, dst, tag] = key;
      if (recvs < sends.size())
        throw config_error(
            fmt::format("{}: no COMM_RECV_NODE in {} with comm_src {} and comm_tag {} matches it (send "
                        "{} of {} to rank {})",
                        where(sends[recvs]), m_files[dst], src, tag, recvs, sends.size(), dst));
      for (size_t k = 0; k < sends.size(); ++k) {
        unit u;
        u.compute = false;
        u.nodes = {sends[k], it->second[k]};
        u.bytes = uint64_t(*node(sends[k]).comm_size);
        u.group = group_of("p2p", "send", {src, dst}, u.bytes);
        new_unit(std::move(u));
      }
    }
    for (const auto& [key, recvs] : m_recvs) {
      const auto it = m_sends.find(key);
      const size_t sends = it == m_sends.end() ? 0 : it->second.size();
      if (sends < recvs.size())
        throw config_error(fmt::format("{}: no COMM_SEND_NODE in {} with comm_dst {} and comm_tag {} matches it",
                                       where(recvs[sends]), m_files[std::get<0>(key)], std::get<1>(key),
                                       std::get<2>(key)));
    }
  }

  void link_dependencies() {
    for (uint32_t r = 0; r < m_t.size(); ++r) {
      std::map<uint64_t, uint32_t> by_id;
      for (uint32_t i = 0; i < m_t[r].nodes.size(); ++i) by_id[m_t[r].nodes[i].id] = i;
      for (uint32_t i = 0; i < m_t[r].nodes.size(); ++i) {
        const chakra_node& c = m_t[r].nodes[i];
        for (const auto& [field, deps] : {std::make_pair("data_deps", &c.data_deps), {"ctrl_deps", &c.ctrl_deps}})
          for (uint64_t d : *deps) {
            const auto it = by_id.find(d);
            if (it == by_id.end())
              throw config_error(fmt::format("{}: {}: node {} is not in this file", where({r, i}), field, d));
            m_units[m_unit_of[r][i]].deps.insert(m_unit_of[r][it->second]);
          }
      }
    }
  }

  // Kahn's order, the ready unit whose first node comes earliest in its file first (ties: lower unit).
  std::vector<uint32_t> dependency_order() const {
    const size_t n = m_units.size();
    std::vector<uint32_t> missing(n, 0);
    std::vector<std::vector<uint32_t>> next(n);
    for (uint32_t u = 0; u < n; ++u)
      for (uint32_t d : m_units[u].deps) {
        ++missing[u];
        next[d].push_back(u);
      }
    using item = std::pair<uint32_t, uint32_t>;  // (file position, unit)
    std::priority_queue<item, std::vector<item>, std::greater<item>> ready;
    const auto key = [&](uint32_t u) {
      uint32_t k = UINT32_MAX;
      for (node_ref r : m_units[u].nodes) k = std::min(k, r.index);
      return item{k, u};
    };
    for (uint32_t u = 0; u < n; ++u)
      if (missing[u] == 0) ready.push(key(u));
    std::vector<uint32_t> order;
    while (!ready.empty()) {
      const uint32_t u = ready.top().second;
      ready.pop();
      order.push_back(u);
      for (uint32_t v : next[u])
        if (--missing[v] == 0) ready.push(key(v));
    }
    if (order.size() < n) throw_cycle(missing);
    return order;
  }

  // Walks back along unfinished dependencies from an unfinished unit until one repeats: that is a cycle.
  [[noreturn]] void throw_cycle(const std::vector<uint32_t>& missing) const {
    uint32_t u =
        uint32_t(std::find_if(missing.begin(), missing.end(), [](uint32_t m) { return m > 0; }) - missing.begin());
    std::vector<uint32_t> path;
    std::vector<size_t> seen_at(m_units.size(), SIZE_MAX);
    while (seen_at[u] == SIZE_MAX) {
      seen_at[u] = path.size();
      path.push_back(u);
      for (uint32_t d : m_units[u].deps)
        if (missing[d] > 0) {
          u = d;
          break;
        }
    }
    const std::string first = where(m_units[u].nodes.front());
    std::string cycle;
    for (size_t k = seen_at[u] + 1; k < path.size(); ++k)
      cycle += where(m_units[path[k]].nodes.front()) + ", which waits for ";
    throw config_error(first + ": data_deps/ctrl_deps: a dependency cycle: it waits for " + cycle + "it");
  }

  void emit(const std::vector<uint32_t>& order) {
    std::vector<uint32_t> task_of(m_units.size());
    for (uint32_t k = 0; k < order.size(); ++k) task_of[order[k]] = k;
    for (uint32_t u : order) {
      const unit& x = m_units[u];
      const chakra_node& c = node(x.nodes.front());
      training_task t;
      t.compute = x.compute;
      t.label = c.name;
      t.rank = x.compute ? x.nodes.front().rank : m_g.groups[x.group].ranks.front();
      if (x.compute)
        t.seconds = c.duration_micros > 0 || !c.num_ops ? double(c.duration_micros) * 1e-6
                                                        : double(std::max<int64_t>(*c.num_ops, 0)) / m_flops_per_s;
      t.group = x.group;
      t.bytes = x.bytes;
      for (uint32_t d : x.deps) t.deps.push_back(task_of[d]);
      std::sort(t.deps.begin(), t.deps.end());
      m_g.tasks.push_back(std::move(t));
    }
  }

  const std::vector<chakra_trace>& m_t;
  const std::vector<std::string>& m_files;
  double m_flops_per_s;
  std::vector<std::vector<uint32_t>> m_unit_of;  // (rank, node index) -> unit
  std::vector<unit> m_units;
  std::map<std::pair<std::string, uint32_t>, std::vector<node_ref>> m_colls;  // (pg_name, rank) -> nodes
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, std::vector<node_ref>> m_sends, m_recvs;  // (src, dst, tag)
  std::map<std::tuple<std::string, std::string, std::vector<uint32_t>>, uint32_t> m_groups;
  training_graph m_g;
};

}  // namespace

std::vector<std::string> chakra_files(const std::string& spec, const std::string& source) {
  namespace fs = std::filesystem;
  std::string prefix = resolve_scenario_path(source, spec);
  std::error_code ec;
  if (fs::is_directory(prefix, ec)) {
    std::set<std::string> prefixes;
    for (const fs::directory_entry& e : fs::directory_iterator(prefix, ec)) {
      const std::string f = e.path().filename().string();
      if (f.size() < 4 || f.compare(f.size() - 3, 3, ".et") != 0) continue;
      const size_t dot = f.rfind('.', f.size() - 4);
      if (dot != std::string::npos && f.find_first_not_of("0123456789", dot + 1) == f.size() - 3)
        prefixes.insert((e.path().parent_path() / f.substr(0, dot)).string());
    }
    if (prefixes.size() != 1)
      throw config_error(fmt::format(
          "{}: training.chakra: the directory {} holds {} (expected the files "
          "<prefix>.<rank>.et of one trace)",
          source, prefix,
          prefixes.empty() ? std::string("no *.<rank>.et files") : fmt::format("{} prefixes", prefixes.size())));
    prefix = *prefixes.begin();
  }
  std::vector<std::string> files;
  for (size_t r = 0;; ++r) {
    const std::string f = fmt::format("{}.{}.et", prefix, r);
    if (!fs::is_regular_file(f, ec)) break;
    files.push_back(f);
  }
  if (files.empty())
    throw config_error(
        fmt::format("{}: training.chakra: no {}.0.et (expected one Chakra trace per rank, "
                    "<prefix>.0.et, <prefix>.1.et, ...)",
                    source, prefix));
  return files;
}

training_graph chakra_graph(const std::vector<chakra_trace>& traces, const std::vector<std::string>& files,
                            double flops_per_s) {
  return chakra_mapper(traces, files, flops_per_s).build();
}

training_graph load_chakra_graph(const std::vector<std::string>& files, double flops_per_s) {
  std::vector<chakra_trace> traces;
  traces.reserve(files.size());
  for (const std::string& f : files) traces.push_back(traces::read_chakra_trace(f));
  return chakra_graph(traces, files, flops_per_s);
}

}  // namespace fabricsim::testbench
