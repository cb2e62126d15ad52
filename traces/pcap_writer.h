// Capture file writer: classic pcap (nanosecond timestamps, Ethernet) of the frames a RoCEv2 NIC would
// put on the wire for the model's packet descriptors, so Wireshark and tshark can read a simulation.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sc_models/core/packet.h"
#include "traces/pcap_reader.h"  // capture_error

namespace fabricsim::traces {

// Serializes a descriptor into `out` (resized to the frame) as sent by a NIC: Ethernet [802.1Q] IPv4|IPv6
// UDP BTH [RETH] [AETH] [ImmDt] [CNP reserved] payload pad ICRC, padded with zeros to the 60-byte minimum,
// without the FCS; a frame_kind::pfc descriptor becomes an 802.1Qbb PFC MAC control frame. The telemetry
// (INT) shim and records of an int_requested packet are not written: the frame is the RoCEv2 frame without
// them (frame_size() minus the telemetry bytes). The payload comes from pkt.payload, or zeros when it is
// null. Throws capture_error for a descriptor that cannot be put on the wire (the message names the packet
// id and the field).
void serialize_frame(const core::packet& pkt, std::vector<uint8_t>& out);

class pcap_writer {
 public:
  static constexpr uint32_t snaplen_bytes = 65535;
  static constexpr uint32_t nanosecond_magic = 0xa1b23c4d;  // classic pcap, timestamps in ns

  // Creates (or truncates) the file and writes the pcap file header; throws capture_error naming the file.
  explicit pcap_writer(const std::string& path);
  // Closes the file; a failure here cannot be reported, so call close() to see it.
  ~pcap_writer();
  pcap_writer(const pcap_writer&) = delete;
  pcap_writer& operator=(const pcap_writer&) = delete;

  // Serializes and writes one descriptor as a frame stamped `timestamp_ns` (since the Unix epoch).
  void write(const core::packet& pkt, uint64_t timestamp_ns);
  // Writes raw frame bytes; `original_bytes` (0: same as bytes) lets a test write a snaplen-cut record.
  void write_frame(const uint8_t* data, size_t bytes, uint64_t timestamp_ns, size_t original_bytes = 0);
  // Flushes and closes; throws capture_error naming the file if the data did not reach it.
  void close();

  const std::string& path() const { return m_path; }
  uint64_t frames_written() const { return m_frames; }

 private:
  void put(const void* data, size_t bytes);

  std::string m_path;
  std::FILE* m_file = nullptr;
  uint64_t m_frames = 0;
  std::vector<uint8_t> m_frame;  // reused per frame
};

}  // namespace fabricsim::traces
