// Fuzz target: the Chakra execution-trace reader (traces/chakra_reader) and its mapping onto the training
// task graph (testbench/training_chakra). The input is one trace file's bytes, read as a one-rank trace and
// as both ranks of a two-rank trace.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "testbench/training_chakra.h"

using namespace fabricsim;

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// What the mapper promises (testbench/training_chakra.h), checked independently of its code.
void check_graph(const testbench::training_graph& g, size_t ranks) {
  check(g.gpus == ranks, "one GPU per trace");
  for (uint32_t i = 0; i < g.tasks.size(); ++i) {
    const testbench::training_task& t = g.tasks[i];
    for (uint32_t d : t.deps) check(d < i, "every dependency comes earlier");
    if (t.compute) {
      check(t.rank < ranks, "a compute task on a GPU of the trace");
      check(t.seconds >= 0, "a compute task's duration is set");
      continue;
    }
    check(t.group < g.groups.size(), "a communication task's group exists");
    const std::vector<uint32_t>& members = g.groups[t.group].ranks;
    check(members.size() >= 2, "a group has two ranks or more");
    for (uint32_t r : members) check(r < ranks, "group members are ranks of the trace");
    check(t.bytes <= g.groups[t.group].max_bytes, "a group's buffers hold its largest task");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  traces::chakra_trace t;
  try {
    t = traces::parse_chakra_trace(bytes, "fuzz.0.et");
  } catch (const core::config_error& e) {
    check(std::string(e.what()).rfind("fuzz.0.et:", 0) == 0, "the error names the file");
    return 0;
  }
  for (size_t ranks : {size_t(1), size_t(2)}) {
    const std::vector<traces::chakra_trace> traces(ranks, t);
    const std::vector<std::string> files = {"fuzz.0.et", "fuzz.1.et"};
    try {
      check_graph(testbench::chakra_graph(traces, {files.begin(), files.begin() + long(ranks)}, 1e15), ranks);
    } catch (const core::config_error& e) {
      check(std::string(e.what()).rfind("fuzz.", 0) == 0, "the error names a file");
    }
  }
  return 0;
}
