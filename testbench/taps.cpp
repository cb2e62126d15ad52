// Packet captures of a run: a link observer that writes each tapped link's frames to its own pcap file.
#include "testbench/taps.h"

#include <cerrno>
#include <cstdlib>

#include "sc_models/mpi/mpi_world.h"
#include "traces/pcap_writer.h"

namespace fabricsim::testbench {

tap_spec parse_tap(const std::string& value) {
  tap_spec t;
  t.option = value;
  auto fail = [&](const std::string& why) {
    throw core::config_error("--tap " + value + ": " + why +
                             " (expected NODE:PORT=FILE.pcap, e.g. h0:0=h0.pcap or sw0:3=p3.pcap, or "
                             "LINK=FILE.pcap, e.g. leaf1_to_spine3=up.pcap)");
  };
  const size_t eq = value.find('=');
  if (eq == std::string::npos) fail("no '=FILE'");
  const std::string where = value.substr(0, eq);
  t.file = value.substr(eq + 1);
  if (t.file.empty()) fail("empty file name");
  if (where.empty()) fail("no node or link before '='");
  const size_t colon = where.rfind(':');
  if (colon == std::string::npos) {
    t.link = where;
    return t;
  }
  t.node = where.substr(0, colon);
  const std::string port = where.substr(colon + 1);
  if (t.node.empty()) fail("no node before ':'");
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 9)
    fail("port '" + port + "' is not a port number");
  t.port = unsigned(std::strtoul(port.c_str(), nullptr, 10));
  return t;
}

std::string tap_for_value(const std::string& tap, const std::string& value) {
  const size_t eq = tap.find('=');
  if (eq == std::string::npos) return tap;  // malformed: parse_tap() reports it
  const size_t dot = tap.rfind('.'), slash = tap.rfind('/');
  const bool has_ext = dot != std::string::npos && dot > eq && (slash == std::string::npos || dot > slash);
  return has_ext ? tap.substr(0, dot) + "." + value + tap.substr(dot) : tap + "." + value;
}

tap_set::tap_set(const std::vector<std::string>& values, topology::fabric& fab, tap_log log, link_filter here)
    : m_log(std::move(log)) {
  mpi::world& world = mpi::world::get();
  m_distributed = world.distributed();
  m_taps.reserve(values.size());
  std::string error;  // the first file this rank could not create (every rank resolves the same links)
  for (const std::string& value : values) {
    tap t{parse_tap(value), nullptr, nullptr, 0, 0};
    // By index, which every rank of a scale-out run resolves alike (the link itself may be another rank's).
    size_t index = 0;
    try {
      const auto k = t.spec.node.empty() ? fab.link_index(t.spec.link)
                                         : std::optional<size_t>(fab.egress_link_index(t.spec.node, t.spec.port));
      if (!k)
        throw core::config_error("no link named '" + t.spec.link + "' (links are named <from>_to_<to>, e.g. " +
                                 fab.layout().link_name(0) + "; docs/topology.md)");
      index = *k;
    } catch (const core::config_error& e) {
      throw core::config_error("--tap " + value + ": " + e.what());
    }
    t.index = index;
    t.link_name = fab.layout().link_name(index);
    for (const tap& other : m_taps)
      if (other.index == index)
        throw core::config_error("--tap " + value + ": link " + fab.layout().link_name(index) +
                                 " is already tapped by --tap " + other.spec.option);
    if (!here || here(index)) {
      t.link = fab.links()[index].get();
      try {
        if (error.empty()) t.writer = std::make_unique<traces::pcap_writer>(t.spec.file);
      } catch (const traces::capture_error& e) {
        if (!m_distributed) throw core::config_error("--tap " + value + ": " + e.what());
        error = "--tap " + value + ": " + e.what();
      }
    }
    m_taps.push_back(std::move(t));
  }
  if (m_distributed) {
    error = world.first_message(error);
    if (!error.empty()) throw core::config_error(error);
  }
  for (tap& t : m_taps)
    if (t.writer) t.link->set_observer(this);
}

tap_set::~tap_set() {
  for (tap& t : m_taps)
    if (t.link && t.link->observer() == this) t.link->set_observer(nullptr);
}

tap_set::tap* tap_set::find(const core::link& l) {
  // A handful of taps per run: a scan is cheaper than any map.
  for (tap& t : m_taps)
    if (t.link == &l) return &t;
  return nullptr;
}

void tap_set::on_transmit(const core::link& l, const core::packet& p, core::picoseconds start) {
  tap* t = find(l);
  if (t == nullptr) return;
  // The frame's first bit (the destination MAC) follows the preamble and SFD; simulated time 0 is the Unix
  // epoch, and the picoseconds below a nanosecond are cut.
  const core::picoseconds first_bit = start + l.serialization(core::bytes(core::header_bytes::preamble_sfd));
  const uint64_t ts_ns = first_bit.value / 1000;
  if (!m_error.empty()) return;  // under mpirun, after a write error: reported by close()
  if (p.int_requested) ++t->int_frames;
  try {
    t->writer->write(p, ts_ns);
  } catch (const traces::capture_error& e) {
    // Under mpirun the other ranks do not know: throwing here would leave them waiting at the next window.
    if (!m_distributed) throw core::config_error("--tap " + t->spec.option + ": " + e.what());
    m_error = "--tap " + t->spec.option + ": " + e.what();
  }
  if (m_log) m_log(l, p, ts_ns);
}

void tap_set::close() {
  for (tap& t : m_taps) {
    if (!t.writer) continue;
    try {
      if (m_error.empty()) t.writer->close();
    } catch (const traces::capture_error& e) {
      if (!m_distributed) throw core::config_error("--tap " + t.spec.option + ": " + e.what());
      m_error = "--tap " + t.spec.option + ": " + e.what();
    }
    t.frames = t.writer->frames_written();
  }
  if (!m_distributed) return;
  mpi::world& world = mpi::world::get();
  const std::string error = world.first_message(m_error);
  if (!error.empty()) throw core::config_error(error);
  // Only the capturing rank counted a tap's frames: the sum is its count.
  std::vector<uint64_t> counts;
  for (const tap& t : m_taps) {
    counts.push_back(t.frames);
    counts.push_back(t.int_frames);
  }
  world.sum(counts.data(), counts.size());
  for (size_t i = 0; i < m_taps.size(); ++i) {
    m_taps[i].frames = counts[2 * i];
    m_taps[i].int_frames = counts[2 * i + 1];
  }
}

nlohmann::json tap_set::to_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const tap& t : m_taps)
    a.push_back({{"tap", t.spec.option},
                 {"link", t.link_name},
                 {"file", t.spec.file},
                 {"frames", t.writer ? t.writer->frames_written() : t.frames},
                 {"int_frames_without_telemetry", t.int_frames}});
  return a;
}

}  // namespace fabricsim::testbench
