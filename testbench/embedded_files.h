// A text file of the source tree carried inside the binary (testbench/embed_files.cmake writes the tables).
#pragma once

#include <cstddef>

namespace fabricsim::testbench {

struct embedded_file {
  const char* path;  // relative to the repository root
  const char* text;
};

}  // namespace fabricsim::testbench
