// Cut-through readiness, shared by the Spectrum and Quantum pipelines: a frame whose egress port is idle
// may leave once the parser has its headers, before its tail has arrived; it then leaves earlier than a
// stored frame by the time its tail beyond those headers takes to arrive.
#pragma once

#include "sc_models/core/units.h"

namespace fabricsim::sw {

// How much earlier than store-and-forward a cut-through frame of `frame` wire bytes may leave, once the
// first `header` bytes are in: the rest serialised at the ingress rate. Nothing when the egress is faster
// than the ingress (it would run dry mid-frame) or the frame is no longer than the header.
constexpr core::picoseconds cut_through_advance(core::bytes frame, core::bytes header, core::bits_per_second in_rate,
                                                core::bits_per_second out_rate) {
  if (out_rate.value > in_rate.value || frame.value <= header.value) return core::picoseconds(0);
  return core::serialization_time(frame - header, in_rate);
}

}  // namespace fabricsim::sw
