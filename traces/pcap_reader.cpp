// Capture file reader over libpcap (pcap and pcapng), and the per-flow summary of a capture.
#include "traces/pcap_reader.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstring>

namespace fabricsim::traces {

pcap_reader::pcap_reader(const std::string& path) : m_path(path) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  // Nanosecond precision: libpcap scales microsecond files up, so simulated and captured times share a unit.
  m_handle = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!m_handle) throw capture_error(path + ": cannot read as a pcap or pcapng capture (libpcap: " + errbuf + ")");
  const int link_type = pcap_datalink(m_handle);
  if (link_type != DLT_EN10MB) {
    const char* name = pcap_datalink_val_to_name(link_type);
    pcap_close(m_handle);
    m_handle = nullptr;
    throw capture_error(path + ": link type " + std::to_string(link_type) + " (" + (name ? name : "unknown") +
                        ") is not supported; only Ethernet (DLT_EN10MB, 1) is");
  }
}

pcap_reader::~pcap_reader() {
  if (m_handle) pcap_close(m_handle);
}

bool pcap_reader::next(capture_frame& frame) {
  if (m_done) return false;
  struct pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(m_handle, &header, &data);
  if (rc == 1) {
    ++m_frames;
    frame.number = m_frames;
    // With nanosecond precision requested, tv_usec holds nanoseconds.
    frame.timestamp_ns = uint64_t(header->ts.tv_sec) * 1000000000u + uint64_t(header->ts.tv_usec);
    frame.data = data;
    frame.captured_bytes = header->caplen;
    frame.original_bytes = header->len;
    return true;
  }
  m_done = true;
  if (rc == PCAP_ERROR) {
    const std::string what = pcap_geterr(m_handle);
    // A record header that cannot be right (a capture length beyond the snapshot length or libpcap's
    // limit, a pcapng block length that does not add up) is a damaged file, not one cut short: refuse it
    // rather than present the frames before it as the whole capture.
    if (what.rfind("truncated", 0) != 0)  // "truncated dump file" (pcap), "truncated pcapng dump file"
      throw capture_error(m_path + ": frame " + std::to_string(m_frames + 1) +
                          ": corrupt record header (libpcap: " + what +
                          "); expected a capture length within the snapshot length and block lengths that add up");
    // libpcap reports a record cut short ("truncated dump file; tried to read ...") as an error after the
    // last whole record; everything read so far is good, so this is a warning, as tcpdump treats it.
    m_warning = m_path + ": frame " + std::to_string(m_frames + 1) + " is cut short or unreadable (libpcap: " +
                pcap_geterr(m_handle) + "); read the " + std::to_string(m_frames) + " whole frames before it";
  }
  return false;  // PCAP_ERROR_BREAK: clean end of file
}

bool flow_key::operator<(const flow_key& o) const {
  if (int c = std::memcmp(src.octets.data(), o.src.octets.data(), src.octets.size())) return c < 0;
  if (int c = std::memcmp(dst.octets.data(), o.dst.octets.data(), dst.octets.size())) return c < 0;
  return dest_qp < o.dest_qp;
}

bool is_response_opcode(uint8_t opcode) {
  return opcode >> 5 == 0 && (opcode & 0x1f) >= 0x0d && (opcode & 0x1f) <= 0x12;  // RC 0x0d .. 0x12
}

void psn_stats::add(uint32_t psn) {
  if (packets++ == 0) {
    first = last = psn;
    seen.insert(psn);
    return;
  }
  if (!seen.insert(psn).second) {
    ++duplicates;
    return;
  }
  if (core::psn_before(psn, last)) {
    ++out_of_order;  // arrived after a later PSN
    if (core::psn_before(psn, first)) first = psn;
  } else {
    last = psn;
  }
}

void add_to_flows(std::map<flow_key, flow_stats>& flows, const core::packet& pkt) {
  flow_stats& f = flows[flow_key{pkt.ip.src, pkt.ip.dst, pkt.bth.dest_qp}];
  ++f.packets;
  f.payload_bytes += pkt.payload_bytes;
  if (pkt.ip.ecn == 3) ++f.ecn_ce_packets;
  ++f.packets_by_opcode[uint8_t(pkt.bth.opcode)];
  if (pkt.bth.opcode == core::bth_opcode::cnp) return;

  const uint32_t psn = pkt.bth.psn & core::psn_mask;
  (is_response_opcode(uint8_t(pkt.bth.opcode)) ? f.responses : f.requests).add(psn);
}

capture_summary summarize_capture(const std::string& path, const roce_decoder_params& params,
                                  const roce_packet_visitor& visit) {
  capture_summary s;
  s.path = path;
  pcap_reader reader(path);
  roce_decoder decoder(params);
  capture_frame frame;
  core::packet pkt;
  while (reader.next(frame)) {
    // Earliest and latest, not first and last: captures merged from several queues need not be in time order.
    if (s.frames++ == 0) s.first_frame_ns = s.last_frame_ns = frame.timestamp_ns;
    s.first_frame_ns = std::min(s.first_frame_ns, frame.timestamp_ns);
    s.last_frame_ns = std::max(s.last_frame_ns, frame.timestamp_ns);
    switch (decoder.decode(frame.data, frame.captured_bytes, frame.number, pkt, frame.original_bytes)) {
      case decode_verdict::roce:
        ++s.roce_packets;
        s.header_only_frames += decoder.layout().header_only;
        add_to_flows(s.flows, pkt);
        if (visit) visit(frame, pkt, decoder.layout());
        break;
      case decode_verdict::not_roce:
        ++s.skipped_frames;
        ++s.skipped_by_reason[decoder.reason()];
        break;
      case decode_verdict::malformed:
        ++s.malformed_frames;
        ++s.skipped_by_reason[decoder.reason()];
        s.malformed_messages.emplace_back(path + ": " + decoder.message());
        break;
    }
  }
  s.warning = reader.warning();
  return s;
}

}  // namespace fabricsim::traces
