// What the capture tests share: where the reference captures (written by scapy, outside the repository)
// live, a skip when they are missing, and IPv4 addresses written as four octets.
#pragma once

#include <cstdint>
#include <filesystem>

#include <gtest/gtest.h>

#include "sc_models/core/packet.h"

namespace fabricsim::test {

inline const std::filesystem::path& shared_traces_dir() {
  static const std::filesystem::path dir = FABRICSIM_SHARED_TRACES_DIR;
  return dir;
}

inline core::ip_address v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return core::ip_address::v4(uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | d);
}

}  // namespace fabricsim::test

#define REQUIRE_SHARED_TRACES()                                           \
  if (!std::filesystem::is_directory(fabricsim::test::shared_traces_dir())) \
  GTEST_SKIP() << "reference captures not found at " << fabricsim::test::shared_traces_dir()
