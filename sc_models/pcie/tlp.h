// PCIe transaction-layer packets as they travel in the model: a TLM-2.0 generic payload per request (with a
// tlp_extension naming the TLP type and attributes) and a small link-level descriptor per TLP on a wire.
// Both come from pools that grow in blocks and recycle: no heap allocation per TLP once warm.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <tlm>

#include "sc_models/core/units.h"

namespace fabricsim::pcie {

enum class tlp_type : uint8_t { mem_write, mem_read, completion_data };

// Flow-control class of a TLP type (PCIe 6.0 section 2.6.1): which credit pool it draws from.
enum class fc_class : uint8_t { posted = 0, non_posted = 1, completion = 2 };
constexpr unsigned fc_classes = 3;

constexpr fc_class class_of(tlp_type t) {
  return t == tlp_type::mem_write ? fc_class::posted
                                  : (t == tlp_type::mem_read ? fc_class::non_posted : fc_class::completion);
}

// What a request is on PCIe. An initiator may attach one to say how its request should travel (attributes);
// the switch attaches one to every TLP-sized request it issues to a device, so a target can tell a posted
// write from a read and see the requester.
class tlp_extension : public tlm::tlm_extension<tlp_extension> {
 public:
  tlp_type type = tlp_type::mem_write;
  bool relaxed_ordering = false;   // Attr[1]
  bool no_snoop = false;           // Attr[0]
  bool id_based_ordering = false;  // Attr[2]
  uint8_t traffic_class = 0;       // TC, 3 bits
  uint16_t requester_id = 0;       // bus/device/function of the requester (bus = switch port here)
  uint16_t tag = 0;                // 14-bit tag in flit mode

  // Model bookkeeping, not TLP fields: the switch's record of the request this one was cut from, the
  // completion bytes a read still waits for, and a cookie an initiator may use to find its request.
  void* origin = nullptr;
  uint32_t bytes_pending = 0;
  uint64_t cookie = 0;

  tlm::tlm_extension_base* clone() const override { return new tlp_extension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const tlp_extension&>(other);
  }
};

// The extension of a payload (nullptr when it has none).
inline tlp_extension* extension_of(tlm::tlm_generic_payload& gp) {
  tlp_extension* e = nullptr;
  gp.get_extension(e);
  return e;
}

class pcie_link;

// One TLP on a link. `trans` is the TLP-sized request it belongs to; a completion carries
// [offset, offset + payload_bytes) of that request's data.
struct tlp {
  tlp_type type = tlp_type::mem_write;
  uint16_t header_bytes = 0;
  uint32_t payload_bytes = 0;
  uint32_t offset = 0;
  uint16_t dst_port = 0;
  // The switch port it entered by: TLPs queued at one egress in the same picosecond go in port order, not
  // in the order the simulation kernel happened to run their ingress links (which differs between runs
  // whose other events differ, e.g. the ranks of a scale-out run).
  uint16_t src_port = 0;
  tlm::tlm_generic_payload* trans = nullptr;
  core::picoseconds eligible_at{};      // earliest start on the next link (cut-through)
  core::picoseconds last_byte_in{};     // when its last byte reached the holder's receiver
  pcie_link* held_by = nullptr;         // link whose receive buffer holds it: credits go back on departure
  tlp* next = nullptr;                  // intrusive queue link

  // Flow-control data units (16 bytes, PCIe 6.0 section 2.6.1) this TLP takes.
  uint32_t data_credits() const { return (payload_bytes + 15) / 16; }
};

// Fixed-size objects handed out and taken back through a free list; storage grows by blocks.
template <class T>
class object_pool {
 public:
  T* acquire() {
    if (m_free.empty()) grow();
    T* t = m_free.back();
    m_free.pop_back();
    return t;
  }
  void release(T* t) { m_free.push_back(t); }
  size_t allocated() const { return m_blocks.size() * block; }

 private:
  static constexpr size_t block = 256;
  void grow() {
    m_blocks.emplace_back(new T[block]);
    m_free.reserve(m_blocks.size() * block);
    for (size_t i = 0; i < block; ++i) m_free.push_back(&m_blocks.back()[i]);
  }
  std::vector<std::unique_ptr<T[]>> m_blocks;
  std::vector<T*> m_free;
};

// Generic payloads with a tlp_extension permanently attached, returned to the pool when their reference
// count drops to zero (tlm_mm_interface).
class payload_pool : public tlm::tlm_mm_interface {
 public:
  payload_pool() = default;
  payload_pool(const payload_pool&) = delete;
  payload_pool& operator=(const payload_pool&) = delete;
  ~payload_pool() override {
    for (auto& e : m_entries) {
      e->gp.clear_extension(&e->ext);  // the extension is a member, not heap: detach before the payload dies
      e->gp.set_mm(nullptr);
    }
  }

  // A payload with reference count 1, its extension reset.
  tlm::tlm_generic_payload* acquire() {
    tlm::tlm_generic_payload* gp;
    if (m_free.empty()) {
      m_entries.emplace_back(new entry);
      entry* e = m_entries.back().get();
      e->gp.set_extension(&e->ext);
      e->gp.set_mm(this);
      gp = &e->gp;
    } else {
      gp = m_free.back();
      m_free.pop_back();
    }
    *extension_of(*gp) = tlp_extension{};
    gp->set_byte_enable_ptr(nullptr);
    gp->set_byte_enable_length(0);
    gp->set_streaming_width(0);
    gp->set_dmi_allowed(false);
    gp->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    gp->acquire();
    return gp;
  }
  void free(tlm::tlm_generic_payload* gp) override { m_free.push_back(gp); }
  size_t allocated() const { return m_entries.size(); }

 private:
  struct entry {
    tlm::tlm_generic_payload gp;
    tlp_extension ext;
  };
  std::vector<std::unique_ptr<entry>> m_entries;
  std::vector<tlm::tlm_generic_payload*> m_free;
};


}  // namespace fabricsim::pcie
