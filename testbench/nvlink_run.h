// A `workload.kind: collective` run on `topology.kind: nvl72`: an nccl-tests style allreduce sweep inside the
// NVLink domains (testbench/nvlink_collective.h), with the report of every collective run (docs/report.md)
// plus an `nvlink` object: the domain, the link bound and what the credits saw (docs/systems.md).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sc_models/core/sim_context.h"
#include "sc_models/core/units.h"
#include "sc_models/nvlink/nvlink_params.h"
#include "sc_models/switch/quantum/sharp_aggregator.h"
#include "sc_models/topology/nvlink_domain.h"
#include "testbench/nvlink_collective.h"

namespace fabricsim::testbench {

struct scenario;
struct run_options;
struct collective_params;
class scale_out;

nlohmann::json run_nvlink_collective(const scenario& s, const run_options& opts);

// Whether a run takes place inside the NVLink domains: topology.kind nvl72, or a system preset's collective
// with collective.algo nvlink_ring or nvls (the other algorithms run on the scale-out fabric of its NICs).
bool runs_in_nvlink_domains(const scenario& s);

// The hand bounds of an allreduce inside a domain of n GPUs (docs/systems.md): per GPU, B = links x link
// rate x flit efficiency of a full packet (GB/s). Ring: every GPU sends 2(n-1)/n of the buffer over its
// links, so busbw <= B. NVLS: every GPU sends the buffer once and receives it once, so algbw <= B and busbw
// <= 2(n-1)/n x B.
double nvlink_ring_busbw_bound(const nvlink::nvlink_params& p);
double nvls_busbw_bound(const nvlink::nvlink_params& p);

// One size of a sweep: each timed iteration's time (and, hierarchical, its three phases' times).
struct sweep_row {
  uint64_t bytes = 0;
  std::vector<core::picoseconds> times;
  std::vector<std::array<core::picoseconds, 3>> phases;  // reduce-scatter, inter-domain, allgather
  uint64_t wrong = 0;
  bool done = true;
};

// A sweep's sizes in turn, warm-up then timed iterations each: `iterate(bytes, timed, row)` runs one
// iteration (recording its times in `row` when `timed`) and returns false when it did not end, which ends the
// sweep; `check(bytes, row)` compares the results after a size's last iteration.
struct sweep_result {
  std::vector<sweep_row> rows;
  bool all_done = true;
};
sweep_result run_sweep(const collective_params& p, const std::vector<uint64_t>& sizes,
                       const std::function<bool(uint64_t, bool, sweep_row&)>& iterate,
                       const std::function<void(uint64_t, sweep_row&)>& check);

// The report of a sweep on NVLink domains: the fields every collective report has (docs/report.md; the
// nccl-tests table reads them) and the `nvlink` object; `ranks`: GPUs taking part (the first `ranks` of
// dom.gpus()), for the bus factor. `so`: under mpirun the GPUs' and chips' figures are summed over the ranks
// (`rows` and `result_checked` must be already).
nlohmann::json nvlink_report(const scenario& s, const run_options& opts, const core::sim_context& ctx,
                             topology::nvlink_domains& dom, const std::vector<sweep_row>& rows, uint64_t result_checked,
                             bool all_done, double wall_s, uint64_t ranks, scale_out* so = nullptr);

// collective.dtype as the NVLink reductions take it (float, int32, bfloat16); config_error for another.
sw::sharp_dtype nvlink_dtype(const scenario& s);

// One size's allreduce on the domains: the layout of domain_allreduce_layout, collective.chunk_bytes slices,
// the dtype, and whether real bytes move (nic.place_data); and every GPU's source buffer filled for it.
domain_allreduce_config sweep_config(const scenario& s, uint64_t bytes);
void fill_sources(const scenario& s, topology::nvlink_domains& dom, const domain_allreduce_config& c);

// One line on the NVLink domain, for the header of a collective run.
std::string nvlink_fabric_line(const nvlink::nvlink_params& p);

}  // namespace fabricsim::testbench
