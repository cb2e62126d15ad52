// Reachability for InfiniBand rerouting, computed over the whole fabric at once.
#include "sc_models/switch/quantum/reachability.h"

namespace fabricsim::sw {

namespace {

class reach_solver {
 public:
  explicit reach_solver(const reach_inputs& in) : m_in(in), m_state(in.peer.size() * size_t(in.lids), unknown) {}

  bool reaches(size_t sw, uint16_t dlid) {
    uint8_t& s = m_state[sw * m_in.lids + dlid];
    if (s == yes || s == busy) return true;
    if (s == no) return false;
    s = busy;
    bool ok = false;
    for (unsigned p : m_in.group(sw, dlid)) {
      if (m_in.down(sw, p)) continue;
      const size_t next = p < m_in.peer[sw].size() ? m_in.peer[sw][p] : reach_inputs::no_switch;
      if (next == reach_inputs::no_switch || reaches(next, dlid)) {
        ok = true;
        break;
      }
    }
    s = ok ? yes : no;  // m_state never grows, so the reference still holds
    return ok;
  }

 private:
  enum : uint8_t { unknown, busy, no, yes };
  const reach_inputs& m_in;
  std::vector<uint8_t> m_state;  // [switch * lids + dlid]
};

}  // namespace

std::vector<reach_rows> reach_beyond(const reach_inputs& in) {
  reach_solver solver(in);
  std::vector<reach_rows> out(in.peer.size());
  for (size_t sw = 0; sw < in.peer.size(); ++sw) {
    out[sw].resize(in.peer[sw].size());
    for (size_t p = 0; p < in.peer[sw].size(); ++p) {
      const size_t next = in.peer[sw][p];
      if (next == reach_inputs::no_switch) continue;
      std::vector<bool>& row = out[sw][p];
      row.resize(in.lids);
      for (uint16_t d = 0; d < in.lids; ++d) row[d] = solver.reaches(next, d);
    }
  }
  return out;
}

}  // namespace fabricsim::sw
