// Faults of one direction of a cable.
#include "sc_models/core/fault_injector.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::core {

void fault_params::visit(param_visitor& v) {
  v.field({"detect_us", "us",
           "a carrier change (down or back up) reaches the switches at the cable's ends this long after it "
           "happens; until then they keep routing into a dead link (estimate: PHY loss of lock, PCS fault "
           "signalling, port-state interrupt)",
           0.0, 1e6},
          detect_us);
  v.field({"remote_notification", "",
           "Spectrum fabrics: switches away from a failed cable learn of it (notification_us after its ends "
           "detect it) and stop routing towards it; false: only the cable's ends learn (docs/faults.md)"},
          remote_notification);
  v.field({"notification_us", "us",
           "Spectrum fabrics: from the detection at a failed cable's ends to the other switches no longer "
           "routing towards it (adaptive-routing fault notification or route withdrawal; estimate)",
           0.0, 1e6},
          notification_us);
  v.field({"sample_us", "us",
           "with faults and run.sample_us 0: the period at which delivered payload is sampled to measure time to "
           "recover (run.sample_us when set); sampling adds no model event",
           0.01, 1e6},
          sample_us);
}

fault_injector::fault_injector(const std::string& instance, uint64_t seed, picoseconds detect,
                               std::vector<fault_counters>& counters)
    : m_detect(detect), m_counters(counters), m_rng(make_stream(seed, instance, "fault")) {}

void fault_injector::add_down(picoseconds from, picoseconds until, size_t entry) {
  if (until <= from) return;
  interval iv{from, until, entry};
  m_down.insert(std::upper_bound(m_down.begin(), m_down.end(), iv,
                                 [](const interval& x, const interval& y) { return x.from < y.from; }),
                iv);
  m_reach.resize(m_down.size());
  picoseconds reach{};
  for (size_t i = 0; i < m_down.size(); ++i) m_reach[i] = reach = std::max(reach, m_down[i].until);
}

void fault_injector::set_loss(double p, size_t entry, picoseconds from, picoseconds until) {
  m_loss = {p, entry, from, until};
}

void fault_injector::set_ber(double ber, size_t entry, picoseconds from, picoseconds until) {
  m_ber = {ber, entry, from, until};
}

const fault_injector::interval* fault_injector::down_at(picoseconds a, picoseconds b) const {
  // Scan the intervals starting before b, latest first, while one of them (or one before) reaches past a:
  // m_reach stops the scan after one step in the common case, however many flap windows there are.
  size_t i = size_t(std::lower_bound(m_down.begin(), m_down.end(), b,
                                     [](const interval& x, picoseconds t) { return x.from < t; }) -
                    m_down.begin());
  while (i > 0 && m_reach[i - 1] > a) {
    --i;
    if (m_down[i].until > a) return &m_down[i];
  }
  return nullptr;
}

bool fault_injector::down(picoseconds t) const { return down_at(t, t + picoseconds{1}) != nullptr; }

bool fault_injector::known_down(picoseconds t) const {
  // The ends see the carrier as it was `detect` ago.
  if (t < m_detect) return false;
  return down(t - m_detect);
}

picoseconds fault_injector::down_time(size_t entry, picoseconds end) const {
  uint64_t ps = 0;
  for (const interval& iv : m_down)
    if (iv.entry == entry && iv.from < end) ps += (std::min(iv.until, end) - iv.from).value;
  return picoseconds{ps};
}

double fault_injector::frame_error_probability(double ber, uint64_t frame_bytes) {
  // 1 - (1 - ber)^n without cancellation for tiny ber.
  return -std::expm1(double(frame_bytes * 8) * std::log1p(-ber));
}

picoseconds fault_injector::up_at(picoseconds t) const {
  while (const interval* iv = down_at(t, t + picoseconds{1})) {
    if (iv->until.value == UINT64_MAX) return iv->until;
    t = iv->until;
  }
  return t;
}

picoseconds fault_injector::next_known_change(picoseconds t) const {
  // known_down(x) is down(x - detect): it can change only at an interval's start or end plus detect.
  picoseconds best{UINT64_MAX};
  auto later = [&](picoseconds x) {
    if (x.value == UINT64_MAX) return;
    const picoseconds k = x + m_detect;
    if (k > t && k < best) best = k;
  };
  // The first interval starting after t - detect; then the ends of the intervals before it that reach past
  // t - detect (m_reach stops the scan, as in down_at).
  const picoseconds base = t.value > m_detect.value ? t - m_detect : picoseconds{0};
  size_t i = size_t(std::upper_bound(m_down.begin(), m_down.end(), base,
                                     [](picoseconds x, const interval& iv) { return x < iv.from; }) -
                    m_down.begin());
  if (i < m_down.size()) later(m_down[i].from);
  while (i > 0 && m_reach[i - 1] > base) {
    --i;
    if (m_down[i].until > base) later(m_down[i].until);
    if (m_down[i].from > base) later(m_down[i].from);
  }
  return best;
}

fault_injector::verdict fault_injector::judge(const packet& p, picoseconds start, picoseconds end) {
  const verdict v = decide(p, start, end);
  if (v != verdict::pass && m_listener != nullptr) m_listener->on_wire_loss(p, start, end);
  return v;
}

fault_injector::verdict fault_injector::decide(const packet& p, picoseconds start, picoseconds end) {
  if (const interval* iv = down_at(start, end)) {
    fault_counters& c = m_counters[iv->entry];
    ++c.frames_lost;
    c.last_loss = std::max(c.last_loss, start);
    return verdict::lost;
  }
  if (m_loss.p > 0.0 && start >= m_loss.from && start < m_loss.until) {
    fault_counters& c = m_counters[m_loss.entry];
    ++c.frames_judged;
    if ((m_rng() >> 11) < threshold(m_loss.p)) {
      ++c.frames_lost;
      c.last_loss = std::max(c.last_loss, start);
      return verdict::lost;
    }
  }
  if (m_ber.p > 0.0 && start >= m_ber.from && start < m_ber.until) {
    fault_counters& c = m_counters[m_ber.entry];
    ++c.frames_judged;
    // Ethernet: destination MAC to FCS; InfiniBand: LRH to VCRC (its wire size has no preamble or gap).
    const uint64_t frame = p.kind == frame_kind::infiniband
                               ? p.wire().value
                               : p.wire().value - header_bytes::preamble_sfd - header_bytes::inter_frame_gap;
    if ((m_rng() >> 11) < threshold(frame_error_probability(m_ber.p, frame))) {
      ++c.fcs_errors;
      c.last_loss = std::max(c.last_loss, start);
      return verdict::corrupted;
    }
  }
  return verdict::pass;
}

}  // namespace fabricsim::core
