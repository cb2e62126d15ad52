// Fuzz target: the flow-list reader (traces/flow_list) and the flow-size CDF reader (traces/flow_generator).
// The input is the text of one file, read as both.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sc_models/core/rng.h"
#include "traces/flow_generator.h"
#include "traces/flow_list.h"

using namespace fabricsim;

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // 256 hosts: the shared permutation list's; a small fabric too, so that host ranges are exercised.
  for (size_t hosts : {size_t(256), size_t(4)}) {
    try {
      for (const traces::flow_entry& f : traces::parse_flow_list(text, "fuzz.csv", hosts)) {
        // What the reader promises (traces/flow_list.h), checked independently of its code.
        check(f.src < hosts && f.dst < hosts && f.src != f.dst, "hosts in range and distinct");
        check(f.bytes >= 1 && f.bytes <= traces::k_max_flow_bytes, "bytes in 1 .. 2^40");
        check(std::isfinite(f.start_ns) && f.start_ns >= 0 && f.start_ns <= traces::k_max_flow_start_ns,
              "start in 0 .. 1e12 ns");
      }
    } catch (const core::config_error& e) {
      check(std::string(e.what()).rfind("fuzz.csv:", 0) == 0, "the error names the file");
    }
  }
  try {
    const traces::flow_size_cdf cdf = traces::parse_cdf(text, "fuzz.cdf");
    const double lo = cdf.points().front().bytes, hi = cdf.points().back().bytes;
    check(std::isfinite(lo) && std::isfinite(hi) && lo >= 0 && lo <= hi, "sizes finite and ordered");
    for (double u : {0.0, 0.25, 0.5, 0.999999}) {
      const double q = cdf.quantile(u);
      check(std::isfinite(q) && q >= lo && q <= hi, "quantile inside the table");
    }
    const double mean = cdf.mean();
    check(std::isfinite(mean) && mean >= lo && mean <= hi, "mean inside the table");
    core::rng_stream rng = core::make_stream(1, "fuzz");
    for (int i = 0; i < 8; ++i) check(cdf.sample(rng, 0) >= 1, "a sampled size is at least 1 byte");
  } catch (const core::config_error& e) {
    check(std::string(e.what()).rfind("fuzz.cdf", 0) == 0, "the error names the file");
  }
  return 0;
}
