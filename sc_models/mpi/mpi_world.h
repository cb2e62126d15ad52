// The processes of a scale-out run (docs/scale_out.md): which rank this process is, how many there are, and
// the few collective operations the run needs, as a thin layer over MPI. Built without MPI
// (FABRICSIM_MPI=OFF, or no MPI found) every process is a world of one, and a process that mpirun started
// as one of several ranks refuses to run rather than simulate the whole fabric once per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::mpi {

// True when this process was started by an MPI launcher (mpirun/mpiexec) as one of more than one rank.
bool launched_as_rank();
// Whether this build can run across processes.
bool available();

class world {
 public:
  // The process's world: MPI is initialized on first use when the process was launched as a rank (and
  // finalized at exit). Throws core::config_error when launched as a rank of a build without MPI.
  static world& get();

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  bool distributed() const { return m_size > 1; }

  // Element-wise over every rank, the result on every rank.
  void sum(uint64_t* v, size_t n);
  void sum(double* v, size_t n);
  uint64_t min(uint64_t v);
  uint64_t max(uint64_t v);
  void max(uint64_t* v, size_t n);
  // Every rank's `mine` (the same size on every rank), concatenated in rank order, on every rank.
  std::vector<uint8_t> all_gather(const std::vector<uint8_t>& mine);
  // Every rank's `mine` (any size), in rank order, on rank 0 (empty on the others), or with `everywhere` on
  // every rank.
  std::vector<std::vector<uint8_t>> gather_v(const std::vector<uint8_t>& mine, bool everywhere = false);
  std::vector<std::vector<uint8_t>> all_gather_v(const std::vector<uint8_t>& mine) { return gather_v(mine, true); }
  // The non-empty `mine` of the lowest rank that has one (empty when no rank has), on every rank: so that an
  // error met by one rank only (a file it alone writes) stops every rank with the same message.
  std::string first_message(const std::string& mine);
  // out[r] goes to rank r; returns in[r], what rank r sent here. `sizes_s`, when given, receives the wall
  // time of the first step (the sizes), where a rank waits for the slowest one to arrive.
  std::vector<std::vector<uint8_t>> all_to_all(const std::vector<std::vector<uint8_t>>& out, double* sizes_s = nullptr);
  // One window end of the conservative protocol (mpi::link_exchange): out[r] goes to every other rank r as one
  // point-to-point message (empty or not), whose first 8 bytes this call fills with `next`; in[r] gets rank
  // r's message, those 8 bytes included (in[rank()] is left empty). Returns the minimum of every rank's
  // `next`. `wait_s` gets the wall time blocked until the messages arrived, `exchange_s` the rest.
  // Messages between two ranks are not overtaken (MPI's order), so consecutive windows cannot mix.
  uint64_t window_exchange(std::vector<std::vector<uint8_t>>& out, uint64_t next, std::vector<std::vector<uint8_t>>& in,
                           double& wait_s, double& exchange_s);
  // Stops every rank (an error on one rank would leave the others waiting in a collective).
  [[noreturn]] void abort(int code);
  void barrier();

 private:
  world();
  int m_rank = 0, m_size = 1;
};

}  // namespace fabricsim::mpi
