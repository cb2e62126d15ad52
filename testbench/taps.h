// Packet captures of a run (`fabricsim run --tap`): one pcap file per tapped link, written as frames leave
// their transmitter. Syntax, timestamps and what is written: README.md (CLI) and docs/report.md (`taps`).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sc_models/core/link.h"
#include "sc_models/topology/fabric.h"

namespace fabricsim::traces {
class pcap_writer;
}

namespace fabricsim::testbench {

// One --tap value: NODE:PORT=FILE (the link leaving NODE through PORT) or LINK=FILE (a link by name).
struct tap_spec {
  std::string option;  // the value as given, for messages
  std::string node;    // empty: `link` names the link
  unsigned port = 0;
  std::string link;
  std::string file;
};

// Parses a --tap value; throws core::config_error "--tap VALUE: ..." when it is malformed.
tap_spec parse_tap(const std::string& value);

// The --tap value for one run of a comparison: its file FILE.pcap becomes FILE.<value>.pcap (FILE.<value>
// without an extension), as run.timeseries_csv does.
std::string tap_for_value(const std::string& tap, const std::string& value);

// Called for every captured frame with the link, the descriptor and the timestamp written (ns); for tests
// that compare a capture with the model's own record of the same frames.
using tap_log = std::function<void(const core::link&, const core::packet&, uint64_t timestamp_ns)>;

// Which links this process captures. Under mpirun a frame leaves a link only on the rank that simulates the
// link's transmitter (a crossing link hands it to the other rank after serialization), so that rank alone
// observes the link and writes its file (testbench/scale_out.h tap_filter). Empty: every link.
using link_filter = std::function<bool(size_t link)>;  // an index into fabric::links()

// The capture files of one run. Resolves every tap against the fabric and creates its file at elaboration
// (before anything is simulated), observes the tapped links, and closes the files at the end.
// Under mpirun (docs/scale_out.md) the constructor and close() are collective: every rank resolves every tap,
// only the capturing rank creates and writes a file, an error on any rank stops every rank with its message,
// and close() sums the frame counts so that to_json() lists every tap on every rank as one process would.
class tap_set : public core::link_observer {
 public:
  // Throws core::config_error "--tap VALUE: ..." for an unknown node or link, a port out of range, a link
  // tapped twice, or a file that cannot be created.
  tap_set(const std::vector<std::string>& values, topology::fabric& fab, tap_log log = {}, link_filter here = {});
  ~tap_set() override;
  tap_set(const tap_set&) = delete;
  tap_set& operator=(const tap_set&) = delete;

  void on_transmit(const core::link& l, const core::packet& p, core::picoseconds start) override;
  // Flushes and closes every file; throws core::config_error naming the option on a write failure.
  void close();
  // The `taps` array of the report (docs/report.md).
  nlohmann::json to_json() const;

 private:
  struct tap {
    tap_spec spec;
    core::link* link;
    std::unique_ptr<traces::pcap_writer> writer;  // null on a rank that does not capture this link
    uint64_t frames = 0;      // frames written (after close(): on every rank)
    uint64_t int_frames = 0;  // frames written without their telemetry shim and records
    size_t index = 0;         // the link's index in fabric::links()
    std::string link_name;
  };
  tap* find(const core::link& l);

  std::vector<tap> m_taps;
  tap_log m_log;
  bool m_distributed = false;
  std::string m_error;  // under mpirun: the first write error, reported by close() on every rank
};

}  // namespace fabricsim::testbench
