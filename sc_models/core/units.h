// Units of the model: simulated time in picoseconds, sizes in bytes, rates in bits per second.
// Each is a distinct type so that a time can never be passed where a size is expected; conversions to
// SystemC time and from scenario figures (ns, Gb/s) happen once, at the boundary, through the helpers here.
#pragma once

#include <cstdint>
#include <systemc>

namespace fabricsim::core {

// Simulated time, integer picoseconds (the SystemC time resolution of every run).
struct picoseconds {
  uint64_t value = 0;

  constexpr picoseconds() = default;
  constexpr explicit picoseconds(uint64_t ps) : value(ps) {}

  static constexpr picoseconds from_ns(double ns) { return picoseconds(static_cast<uint64_t>(ns * 1000.0 + 0.5)); }
  constexpr double ns() const { return static_cast<double>(value) / 1000.0; }
  constexpr double us() const { return static_cast<double>(value) / 1e6; }

  constexpr picoseconds operator+(picoseconds o) const { return picoseconds(value + o.value); }
  constexpr picoseconds operator-(picoseconds o) const { return picoseconds(value - o.value); }
  constexpr picoseconds& operator+=(picoseconds o) { value += o.value; return *this; }
  constexpr bool operator<(picoseconds o) const { return value < o.value; }
  constexpr bool operator<=(picoseconds o) const { return value <= o.value; }
  constexpr bool operator>(picoseconds o) const { return value > o.value; }
  constexpr bool operator>=(picoseconds o) const { return value >= o.value; }
  constexpr bool operator==(picoseconds o) const { return value == o.value; }
  constexpr bool operator!=(picoseconds o) const { return value != o.value; }
};

constexpr picoseconds max(picoseconds a, picoseconds b) { return a < b ? b : a; }

// The time that never comes: no wake-up pending, no deadline set.
inline constexpr picoseconds never{UINT64_MAX};

// A size in bytes.
struct bytes {
  uint64_t value = 0;

  constexpr bytes() = default;
  constexpr explicit bytes(uint64_t b) : value(b) {}

  constexpr uint64_t bits() const { return value * 8; }
  constexpr bytes operator+(bytes o) const { return bytes(value + o.value); }
  constexpr bytes operator-(bytes o) const { return bytes(value - o.value); }
  constexpr bytes& operator+=(bytes o) { value += o.value; return *this; }
  constexpr bytes& operator-=(bytes o) { value -= o.value; return *this; }
  constexpr bool operator<(bytes o) const { return value < o.value; }
  constexpr bool operator<=(bytes o) const { return value <= o.value; }
  constexpr bool operator>(bytes o) const { return value > o.value; }
  constexpr bool operator==(bytes o) const { return value == o.value; }
  constexpr bool operator!=(bytes o) const { return value != o.value; }
};

// A line rate in bits per second.
struct bits_per_second {
  uint64_t value = 0;

  constexpr bits_per_second() = default;
  constexpr explicit bits_per_second(uint64_t bps) : value(bps) {}

  static constexpr bits_per_second from_gbps(double gbps) {
    return bits_per_second(static_cast<uint64_t>(gbps * 1e9 + 0.5));
  }
  constexpr double gbps() const { return static_cast<double>(value) / 1e9; }
};

// Time to clock `size` onto a wire running at `rate`, rounded up to the next picosecond.
// bits * 1e12 stays below 2^64 for any frame up to 2 MB, far above every MTU the model allows.
constexpr picoseconds serialization_time(bytes size, bits_per_second rate) {
  const uint64_t num = size.bits() * 1'000'000'000'000ull;
  return picoseconds((num + rate.value - 1) / rate.value);
}

// A MAC pause (IEEE 802.3 Annex 31B, 802.1Qbb per priority) lasts `quanta` times 512 bit times at the link's
// rate, truncated to the picosecond. quanta x 512 x 10^12 passes 2^64 for a full 65535-quanta pause, hence the
// 128-bit product; the result (at most 33.6 ms, at 1 Gb/s) fits easily.
constexpr uint64_t pfc_quantum_bits = 512;
constexpr picoseconds pause_duration(uint64_t quanta, bits_per_second rate) {
  return picoseconds(uint64_t((unsigned __int128)quanta * pfc_quantum_bits * 1'000'000'000'000ull / rate.value));
}

// The boundary to the SystemC kernel: every run sets a 1 ps time resolution (see sim_kernel.h).
inline sc_core::sc_time to_sc_time(picoseconds t) { return sc_core::sc_time::from_value(t.value); }
inline picoseconds from_sc_time(const sc_core::sc_time& t) { return picoseconds(t.value()); }
// The kernel's current time, read inline from the current simulation context (what sc_time_stamp() returns:
// that function is not inline, and the hot paths ask for the time hundreds of thousands of times a run).
inline picoseconds kernel_now() { return from_sc_time(sc_core::sc_get_curr_simcontext()->time_stamp()); }
namespace detail {
// The model's time while the arrival calendar serves a picosecond later than the kernel's within one
// activation (core/arrival_calendar.cpp), UINT64_MAX otherwise. Beside the kernel's own (one per process, as
// SystemC's simulation context is), so that now() needs no context argument.
inline uint64_t model_time_ahead = UINT64_MAX;
// The end of the sc_start running now, when its caller opened a kernel_run_window; 0: none (no pass runs ahead).
inline uint64_t kernel_run_limit = 0;
// Bumped by the arrival and transmit calendars whenever they notify their kernel event. Where the arrival
// calendar runs ahead, those two events are the only ones its clients can notify (start_of_simulation allows
// it only when no other process exists), so while this count stands still the kernel's pending activity does
// too and need not be asked for again (each ask walks the kernel's event queues).
inline uint64_t kernel_notifications = 0;
}  // namespace detail
// The model's time: the kernel's, or the later picosecond the arrival calendar is serving ahead of it. Every
// notification of a kernel event is timed against kernel_now(), never against this.
inline picoseconds now() {
  const uint64_t ahead = detail::model_time_ahead;
  return ahead != UINT64_MAX ? picoseconds(ahead) : kernel_now();
}
// Opened around one sc_start to `stop` by a caller that knows it (link_exchange::start in one process): the
// arrival calendar may then serve times before `stop` ahead of the kernel's clock, never `stop` itself (an
// sc_start to a time leaves that time's events pending). Closed on every way out, exceptions included.
class kernel_run_window {
 public:
  explicit kernel_run_window(picoseconds stop) { detail::kernel_run_limit = stop.value; }
  ~kernel_run_window() {
    detail::kernel_run_limit = 0;
    detail::model_time_ahead = UINT64_MAX;  // a pass left by an exception (an RTL divergence) ends here too
  }
  kernel_run_window(const kernel_run_window&) = delete;
  kernel_run_window& operator=(const kernel_run_window&) = delete;
};

}  // namespace fabricsim::core
