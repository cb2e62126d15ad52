// The message of the config_error a piece of code throws, for tests of error messages.
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "sc_models/core/params.h"

namespace fabricsim::test {

// The message of the core::config_error `f` throws; a test failure when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a config_error";
  return "";
}

}  // namespace fabricsim::test
