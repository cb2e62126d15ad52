// Where a collective's ranks sit, and the configurations a collective cannot run.
#include "testbench/collective_placement.h"

#include <string>
#include <utility>

#include "sc_models/core/params.h"
#include "testbench/collective_ops.h"
#include "testbench/scenario.h"

namespace fabricsim::testbench {

using core::config_error;

std::vector<size_t> place_ranks(const scenario& s) {
  const collective_params& p = s.collective;
  const std::string& src = s.source;
  const size_t hosts = s.topology.host_count();
  if (p.algo == "nvlink_ring" || p.algo == "nvls")
    throw config_error(src + ": collective.algo " + p.algo +
                       " runs inside an NVLink domain: set topology.kind nvl72 "
                       "(topology.kind is " +
                       s.topology.kind + ")");
  if (p.algo == "sharp") {
    if (s.switch_model.name != "quantum_x800")
      throw config_error(src + ": collective.algo sharp: the fabric has no SHARP-capable switch (switch.model is " +
                         s.switch_model.name +
                         "; in-network reduction needs switch.model quantum_x800); use ring or tree");
    if (p.op != "allreduce")
      throw config_error(src + ": collective.algo sharp: SHARP runs allreduce here, not " + p.op + "; use ring for it");
    if (p.dtype == "half")
      throw config_error(src +
                         ": collective.dtype half: the SHARP model reduces float, bfloat16 and int32; "
                         "use one of those or algo ring");
    for (const auto& [name, params] : s.nic_overrides)
      if (params.mtu_bytes != s.nic.mtu_bytes)
        throw config_error(src + ": nic_overrides." + name +
                           ".mtu_bytes: collective.algo sharp cuts every rank's "
                           "buffer into chunks of one nic.mtu_bytes (" +
                           std::to_string(s.nic.mtu_bytes) + "); give every NIC the same MTU");
  }
  if ((p.algo == "tree" || p.algo == "binary_tree") && p.op != "allreduce" && p.op != "broadcast")
    throw config_error(src + ": collective.algo " + p.algo + ": NCCL runs " + p.op + " on rings only; " + p.algo +
                       " is for allreduce and broadcast");
  // The run's window and sampling follow queue pairs of a planned workload; a collective has its own timing.
  const std::pair<const char*, bool> unsupported[] = {{"run.warmup_us", s.run.warmup_us > 0},
                                                      {"run.sample_us", s.run.sample_us > 0},
                                                      {"run.timeseries_csv", !s.run.timeseries_csv.empty()}};
  for (const auto& [key, set] : unsupported)
    if (set)
      throw config_error(src + ": " + key +
                         " is not supported with workload.kind collective (its rows time "
                         "every iteration; leave it at its default)");

  const uint64_t n = p.ranks == 0 ? hosts : p.ranks;
  if (n > hosts)
    throw config_error(src + ": collective.ranks " + std::to_string(p.ranks) + " is more than the topology's " +
                       std::to_string(hosts) + " hosts");
  if (n < 2)
    throw config_error(src + ": collective.ranks: a collective needs at least 2 ranks, got " + std::to_string(n));
  if (p.min_bytes > p.max_bytes)
    throw config_error(src + ": collective.min_bytes " + std::to_string(p.min_bytes) +
                       " is above collective.max_bytes " + std::to_string(p.max_bytes));
  if (p.op == "broadcast" && p.root >= n)
    throw config_error(src + ": collective.root " + std::to_string(p.root) + " is not a rank (ranks are 0 .. " +
                       std::to_string(n - 1) + ")");
  if (effective_bytes(p, p.min_bytes, n) == 0)
    throw config_error(src + ": collective.min_bytes " + std::to_string(p.min_bytes) + " holds no whole " + p.dtype +
                       (per_rank_parts(p.op) ? " element per rank" : " element") + " (" + std::to_string(n) +
                       " ranks of " + std::to_string(dtype_bytes(p.dtype)) + "-byte elements)");
  std::vector<size_t> rank_host;
  if (p.placement == "linear") {
    for (size_t i = 0; i < n; ++i) rank_host.push_back(i);
  } else {  // spread: the first host of every leaf, then the second of every leaf, ...
    std::vector<std::vector<size_t>> by_leaf;
    for (size_t h = 0; h < hosts; ++h) {
      const size_t leaf = topology::leaf_of(s.topology, h);
      if (leaf >= by_leaf.size()) by_leaf.resize(leaf + 1);
      by_leaf[leaf].push_back(h);
    }
    for (size_t k = 0; rank_host.size() < n; ++k)
      for (const auto& leaf : by_leaf)
        if (k < leaf.size() && rank_host.size() < n) rank_host.push_back(leaf[k]);
  }
  return rank_host;
}

}  // namespace fabricsim::testbench
