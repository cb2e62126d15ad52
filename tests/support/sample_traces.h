// What the capture tests share: where the sample captures live (traces/samples/, written by scapy through
// scripts/make_samples; their contents are the table in traces/samples/README.md), and IPv4 addresses written
// as four octets.
#pragma once

#include <cstdint>
#include <filesystem>

#include "sc_models/core/packet.h"

namespace fabricsim::test {

inline const std::filesystem::path& sample_traces_dir() {
  static const std::filesystem::path dir = FABRICSIM_SAMPLE_TRACES_DIR;
  return dir;
}

inline core::ip_address v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return core::ip_address::v4(uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d);
}

}  // namespace fabricsim::test
