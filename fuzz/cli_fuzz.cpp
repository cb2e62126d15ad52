// Fuzz target: the command-line parser of testbench/cli.cpp (CLI11) and the option values it parses
// itself (--compare, --timing). The input is argv, one argument per line; nothing runs after parsing.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "sc_models/core/params.h"
#include "testbench/cli.h"
#include "testbench/compare.h"
#include "testbench/replay.h"


using namespace fabricsim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args{"fabricsim"};
  for (size_t start = 0; start < text.size() && args.size() < 64;) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int status = fabricsim_cli(int(args.size()), argv.data(), true);
  if (status < 0 || status > 255) std::abort();

  for (size_t i = 1; i < args.size(); ++i) {
    try {
      testbench::parse_compare_option(args[i]);
    } catch (const core::config_error&) {
    }
    try {
      testbench::parse_replay_timing(args[i]);
    } catch (const core::config_error&) {
    }
  }
  return 0;
}
