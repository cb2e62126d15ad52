// The processes of a scale-out run.
#include "sc_models/mpi/mpi_world.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "sc_models/core/params.h"

#ifdef FABRICSIM_HAVE_MPI
#include <mpi.h>
#endif

namespace fabricsim::mpi {

namespace {
// The size of the world a launcher announced in the environment (Open MPI, MPICH/Hydra, PMIx), or 1.
int launcher_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* v = std::getenv(var)) {
      const int n = std::atoi(v);
      if (n > 0) return n;
    }
  }
  return 1;
}
}  // namespace

bool launched_as_rank() { return launcher_world_size() > 1; }

#ifdef FABRICSIM_HAVE_MPI

bool available() { return true; }

world::world() {
  if (!launched_as_rank()) return;  // a plain run: no MPI at all (no launcher, nothing to talk to)
  int init = 0;
  MPI_Initialized(&init);
  if (!init) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m_size);
  std::atexit([] {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
  });
}

void world::sum(uint64_t* v, size_t n) {
  if (distributed()) MPI_Allreduce(MPI_IN_PLACE, v, int(n), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}
void world::sum(double* v, size_t n) {
  if (distributed()) MPI_Allreduce(MPI_IN_PLACE, v, int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
uint64_t world::min(uint64_t v) {
  if (distributed()) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  return v;
}
uint64_t world::max(uint64_t v) {
  if (distributed()) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

void world::max(uint64_t* v, size_t n) {
  if (distributed()) MPI_Allreduce(MPI_IN_PLACE, v, int(n), MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
}

std::vector<uint8_t> world::all_gather(const std::vector<uint8_t>& mine) {
  if (!distributed()) return mine;
  std::vector<uint8_t> all(mine.size() * size_t(m_size));
  MPI_Allgather(mine.data(), int(mine.size()), MPI_BYTE, all.data(), int(mine.size()), MPI_BYTE, MPI_COMM_WORLD);
  return all;
}

std::vector<std::vector<uint8_t>> world::gather_v(const std::vector<uint8_t>& mine, bool everywhere) {
  if (!distributed()) return {mine};
  // Every rank's size first, for the counts and displacements (MPI counts are int: at most 2 GiB in all).
  const size_t n = size_t(m_size);
  std::vector<uint64_t> sizes(n, 0);
  sizes[size_t(m_rank)] = mine.size();
  sum(sizes.data(), n);
  std::vector<int> counts(n), displs(n);
  uint64_t total = 0;
  for (size_t r = 0; r < n; ++r) {
    if (total + sizes[r] > uint64_t(INT32_MAX))
      throw std::runtime_error("scale-out: more than 2 GiB to gather from the ranks in one step");
    counts[r] = int(sizes[r]);
    displs[r] = int(total);
    total += sizes[r];
  }
  const bool here = everywhere || m_rank == 0;
  std::vector<uint8_t> all(here ? total : 0);
  if (everywhere)
    MPI_Allgatherv(mine.data(), int(mine.size()), MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                   MPI_COMM_WORLD);
  else
    MPI_Gatherv(mine.data(), int(mine.size()), MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> out;
  if (here)
    for (size_t r = 0; r < n; ++r) out.emplace_back(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

std::vector<std::vector<uint8_t>> world::all_to_all(const std::vector<std::vector<uint8_t>>& out, double* sizes_s) {
  if (!distributed()) return out;
  const size_t n = size_t(m_size);
  std::vector<int> send_counts(n), recv_counts(n), send_displs(n), recv_displs(n);
  for (size_t r = 0; r < n; ++r) send_counts[r] = int(out[r].size());
  const auto t0 = std::chrono::steady_clock::now();
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  if (sizes_s) *sizes_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<uint8_t> send, recv;
  int s = 0, q = 0;
  for (size_t r = 0; r < n; ++r) {
    send_displs[r] = s;
    recv_displs[r] = q;
    s += send_counts[r];
    q += recv_counts[r];
  }
  send.reserve(size_t(s));
  for (const auto& b : out) send.insert(send.end(), b.begin(), b.end());
  recv.resize(size_t(q));
  MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv.data(), recv_counts.data(),
                recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<uint8_t>> in(n);
  for (size_t r = 0; r < n; ++r)
    in[r].assign(recv.begin() + recv_displs[r], recv.begin() + recv_displs[r] + recv_counts[r]);
  return in;
}

uint64_t world::window_exchange(std::vector<std::vector<uint8_t>>& out, uint64_t next,
                                std::vector<std::vector<uint8_t>>& in, double& wait_s, double& exchange_s) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const size_t n = size_t(m_size), me = size_t(m_rank);
  constexpr int k_tag = 0x5ca1e;  // the window protocol's messages, apart from any other point-to-point traffic
  std::vector<MPI_Request> sends;
  sends.reserve(n);
  for (size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    if (out[r].size() < sizeof next) throw std::logic_error("window_exchange: a buffer without its 8-byte header");
    std::memcpy(out[r].data(), &next, sizeof next);
    if (out[r].size() > size_t(INT32_MAX))
      throw std::runtime_error("scale-out: more than 2 GiB for one rank in a window");
    sends.emplace_back();
    MPI_Isend(out[r].data(), int(out[r].size()), MPI_BYTE, int(r), k_tag, MPI_COMM_WORLD, &sends.back());
  }
  in.resize(n);
  double blocked = 0.0;
  for (size_t k = 1; k < n; ++k) {
    // From the next rank on, round the ring: the ranks do not all wait for rank 0 first.
    const size_t r = (me + k) % n;
    MPI_Status st;
    const auto p0 = clock::now();
    MPI_Probe(int(r), k_tag, MPI_COMM_WORLD, &st);
    blocked += std::chrono::duration<double>(clock::now() - p0).count();
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    in[r].resize(size_t(count));
    MPI_Recv(in[r].data(), count, MPI_BYTE, int(r), k_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    uint64_t theirs = 0;
    std::memcpy(&theirs, in[r].data(), sizeof theirs);
    next = std::min(next, theirs);
  }
  in[me].clear();
  MPI_Waitall(int(sends.size()), sends.data(), MPI_STATUSES_IGNORE);
  wait_s = blocked;
  exchange_s = std::chrono::duration<double>(clock::now() - t0).count() - blocked;
  return next;
}

void world::abort(int code) {
  if (distributed()) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void world::barrier() {
  if (distributed()) MPI_Barrier(MPI_COMM_WORLD);
}

#else  // built without MPI: a world of one

bool available() { return false; }

world::world() {
  if (launched_as_rank())
    throw core::config_error("this fabricsim was built without MPI (cmake -DFABRICSIM_MPI=ON with libopenmpi-dev "
                             "installed), but it was started as one of " +
                             std::to_string(launcher_world_size()) + " MPI ranks; docs/scale_out.md");
}
void world::sum(uint64_t*, size_t) {}
void world::sum(double*, size_t) {}
uint64_t world::min(uint64_t v) { return v; }
uint64_t world::max(uint64_t v) { return v; }
void world::max(uint64_t*, size_t) {}
std::vector<uint8_t> world::all_gather(const std::vector<uint8_t>& mine) { return mine; }
std::vector<std::vector<uint8_t>> world::gather_v(const std::vector<uint8_t>& mine, bool) { return {mine}; }
std::vector<std::vector<uint8_t>> world::all_to_all(const std::vector<std::vector<uint8_t>>& out, double* sizes_s) {
  if (sizes_s) *sizes_s = 0.0;
  return out;
}
uint64_t world::window_exchange(std::vector<std::vector<uint8_t>>&, uint64_t next,
                                std::vector<std::vector<uint8_t>>& in, double& wait_s, double& exchange_s) {
  in.assign(1, {});
  wait_s = exchange_s = 0.0;
  return next;
}
void world::abort(int code) { std::_Exit(code); }
void world::barrier() {}

#endif

std::string world::first_message(const std::string& mine) {
  if (!distributed()) return mine;
  // all_gather takes equal sizes: every rank pads to the longest.
  const size_t longest = size_t(max(uint64_t(mine.size())));
  if (longest == 0) return {};
  std::vector<uint8_t> padded(longest + 8, 0);
  const uint64_t length = mine.size();
  std::memcpy(padded.data(), &length, 8);
  std::memcpy(padded.data() + 8, mine.data(), mine.size());
  const std::vector<uint8_t> all = all_gather(padded);
  for (size_t r = 0; r < size_t(m_size); ++r) {
    const uint8_t* at = all.data() + r * padded.size();
    uint64_t n;
    std::memcpy(&n, at, 8);
    if (n > 0) return std::string(reinterpret_cast<const char*>(at + 8), size_t(n));
  }
  return {};
}

world& world::get() {
  static world w;
  return w;
}

}  // namespace fabricsim::mpi
