// Capture file reader: pcap and pcapng files of Ethernet frames (read through libpcap), and a per-flow
// summary of the RoCEv2 traffic in one file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "sc_models/core/packet.h"
#include "sc_models/core/params.h"
#include "traces/roce_decoder.h"

struct pcap;  // libpcap's handle (pcap_t); kept out of this header so users need no libpcap headers

namespace fabricsim::traces {

// A capture file that cannot be used: missing, not a capture, unsupported link type, write failure. A
// capture named by a scenario is configuration input, hence the base class. The message names the file.
class capture_error : public core::config_error {
 public:
  using core::config_error::config_error;
};

// One frame as stored in the capture. `data` belongs to the reader and is valid until the next next().
struct capture_frame {
  uint64_t number = 0;         // 1-based, as tcpdump and Wireshark count
  uint64_t timestamp_ns = 0;   // since the Unix epoch; microsecond files are scaled
  const uint8_t* data = nullptr;
  uint32_t captured_bytes = 0;
  uint32_t original_bytes = 0; // length on the wire; more than captured_bytes when the snaplen cut it
};

class pcap_reader {
 public:
  // Opens a pcap or pcapng file; throws capture_error naming the file when it cannot be opened, is not a
  // capture, or its link type is not Ethernet (DLT_EN10MB).
  explicit pcap_reader(const std::string& path);
  ~pcap_reader();
  pcap_reader(const pcap_reader&) = delete;
  pcap_reader& operator=(const pcap_reader&) = delete;

  // Reads the next frame; false at the end of the file. A file cut short inside a frame ends the
  // iteration at the last whole frame and sets warning() (as tcpdump does); it is not an error. A record
  // header that cannot be right (capture length beyond the snapshot length, bad pcapng block length) throws
  // capture_error naming the file and frame.
  bool next(capture_frame& frame);

  const std::string& path() const { return m_path; }
  // Empty unless the file ended early or a read failed after the header, e.g. "x.pcap: frame 7 is cut short
  // (truncated dump file; ...); read the 6 whole frames before it".
  const std::string& warning() const { return m_warning; }
  uint64_t frames_read() const { return m_frames; }

 private:
  std::string m_path;
  struct pcap* m_handle = nullptr;
  uint64_t m_frames = 0;
  std::string m_warning;
  bool m_done = false;
};

// A flow as the summary keys it: one direction of one queue pair.
struct flow_key {
  core::ip_address src;
  core::ip_address dst;
  uint32_t dest_qp = 0;
  bool operator<(const flow_key& o) const;
  bool operator==(const flow_key& o) const { return src == o.src && dst == o.dst && dest_qp == o.dest_qp; }
};

// PSN figures of one PSN space, in 24-bit sequence order (wrap at 2^24 handled).
struct psn_stats {
  uint64_t packets = 0;
  uint32_t first = 0;         // earliest in sequence order
  uint32_t last = 0;          // latest in sequence order (the highest seen)
  uint64_t out_of_order = 0;  // new PSNs that arrived after a later PSN had been seen
  uint64_t duplicates = 0;    // PSNs seen before
  std::unordered_set<uint32_t> seen;
  void add(uint32_t psn);
};

struct flow_stats {
  uint64_t packets = 0;
  uint64_t payload_bytes = 0;
  uint64_t ecn_ce_packets = 0;                     // IP ECN = 3, marked by a switch
  std::map<uint8_t, uint64_t> packets_by_opcode;  // BTH opcode -> packets
  // PSNs of the flow's requests (SEND, WRITE, READ request, atomics, UD), which number the sender's own PSN
  // space. Responses (ACK, NAK, READ RESPONSE, ATOMIC ACKNOWLEDGE) carry the PSNs of the other direction's
  // requests and are counted apart. CNPs carry no meaningful PSN and are left out of both, though they count
  // in packets and packets_by_opcode.
  psn_stats requests;
  psn_stats responses;
};

struct capture_summary {
  std::string path;
  uint64_t frames = 0;
  uint64_t roce_packets = 0;
  uint64_t skipped_frames = 0;    // well-formed but not RoCEv2 (ARP, other UDP, other EtherTypes)
  uint64_t malformed_frames = 0;
  // RoCEv2 frames the snapshot length cut (caplen < orig_len): decoded from their headers, payload not kept.
  uint64_t header_only_frames = 0;
  // Skipped and malformed frames by roce_decoder::reason() ("not_ip", "not_udp", ..., "malformed").
  std::map<std::string, uint64_t> skipped_by_reason;
  // Earliest and latest timestamps of any frame (any kind); 0 for an empty capture.
  uint64_t first_frame_ns = 0;
  uint64_t last_frame_ns = 0;
  std::vector<std::string> malformed_messages;  // one per malformed frame, naming the frame
  std::string warning;                          // pcap_reader::warning() at the end of the file
  std::map<flow_key, flow_stats> flows;
};

// Called for every RoCEv2 packet of a capture, in file order, with its frame, decoded descriptor (whose
// payload pointer is valid only during the call) and the decoder's layout (the headers the descriptor lacks).
using roce_packet_visitor = std::function<void(const capture_frame&, const core::packet&, const frame_layout&)>;

// True for the opcodes that answer a request (ACK, READ RESPONSE, ATOMIC ACKNOWLEDGE): their PSNs belong to the
// PSN space of the reverse direction's requests.
bool is_response_opcode(uint8_t opcode);

// Reads a whole capture and summarizes it, handing every RoCEv2 packet to `visit` too when it is set;
// throws capture_error like pcap_reader.
capture_summary summarize_capture(const std::string& path, const roce_decoder_params& params = {},
                                  const roce_packet_visitor& visit = {});

// Adds one decoded RoCEv2 packet to a summary's flow table (exposed for tests and for live models).
void add_to_flows(std::map<flow_key, flow_stats>& flows, const core::packet& pkt);

}  // namespace fabricsim::traces
