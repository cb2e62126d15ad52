// Fuzz target: the capture readers (traces/pcap_reader, roce_decoder, capture_messages). The input is a
// whole capture file (pcap or pcapng); it also goes to the frame decoder as one raw Ethernet frame.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "traces/capture_messages.h"
#include "traces/roce_decoder.h"

using namespace fabricsim;

namespace {

// The readers take a path (libpcap opens the file itself): hand them an in-memory file.
struct memory_file {
  int fd = -1;
  std::string path;
  memory_file(const uint8_t* data, size_t size) {
    fd = memfd_create("fuzz_capture", 0);
    if (fd < 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t n = write(fd, data + done, size - done);
      if (n <= 0) std::abort();
      done += size_t(n);
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  ~memory_file() { close(fd); }
};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (bool icrc : {false, true}) {
    traces::roce_decoder decoder(traces::roce_decoder_params{icrc});
    core::packet pkt;
    const traces::decode_verdict v = decoder.decode(data, size, 1, pkt);
    if (v == traces::decode_verdict::roce) {
      check(decoder.message()[0] == '\0', "a RoCE verdict leaves no message");
      const traces::frame_layout& l = decoder.layout();
      check(l.bth_offset < size && l.icrc_offset + 4 <= size && l.frame_bytes <= size, "layout inside the frame");
    } else {
      check(decoder.message()[0] != '\0' || v == traces::decode_verdict::not_roce, "a malformed frame says why");
      check(decoder.reason()[0] != '\0', "a skipped frame has a reason");
    }
  }

  memory_file file(data, size);
  try {
    const traces::capture_trace t = traces::analyze_capture(file.path);
    const traces::capture_summary& s = t.summary;
    check(s.roce_packets + s.skipped_frames + s.malformed_frames == s.frames, "every frame counted once");
    check(s.malformed_messages.size() == s.malformed_frames, "one message per malformed frame");
    check(s.first_frame_ns <= s.last_frame_ns || s.frames == 0, "first frame not after the last");
    for (const traces::captured_message& m : t.messages)
      check(m.packets >= 1 && m.first_frame >= 1 && m.first_frame <= s.frames, "message frames in the capture");
  } catch (const core::config_error& e) {
    check(std::string(e.what()).find(file.path) != std::string::npos, "the error names the file");
  }
  return 0;
}
