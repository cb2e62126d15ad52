// Fuzz target: the scenario loader (testbench/scenario + config_yaml): YAML text and `--set` overrides. The
// input is a scenario file; the lines after a line `#--set` (a YAML comment, so the seeds stay valid
// scenarios) are overrides, one per line, as `--set` passes them.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "testbench/scenario.h"

using namespace fabricsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  const std::string marker = "#--set\n";
  const size_t at = text.rfind(marker);
  if (at != std::string::npos && (at == 0 || text[at - 1] == '\n')) {
    std::string rest = text.substr(at + marker.size());
    text.resize(at);
    for (size_t start = 0; start <= rest.size();) {
      size_t end = rest.find('\n', start);
      if (end == std::string::npos) end = rest.size();
      if (end > start) overrides.push_back(rest.substr(start, end - start));
      start = end + 1;
    }
  }
  try {
    const testbench::scenario s = testbench::load_scenario_text(text, "fuzz.yaml", overrides);
    if (s.source != "fuzz.yaml") std::abort();
  } catch (const core::config_error& e) {
    const std::string what = e.what();
    if (what.find("fuzz.yaml") == std::string::npos && what.find("--set") == std::string::npos) {
      std::fprintf(stderr, "error names neither the file nor --set: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
