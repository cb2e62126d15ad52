// The SuperNIC requester's work requests and send queue.
#include "sc_models/nic/work_request.h"

namespace fabricsim::nic {

const char* to_string(rdma_op op) {
  switch (op) {
    case rdma_op::write:
      return "write";
    case rdma_op::write_imm:
      return "write_imm";
    case rdma_op::send:
      return "send";
    case rdma_op::send_imm:
      return "send_imm";
    case rdma_op::read:
      return "read";
  }
  return "invalid";
}

const char* to_string(completion_status s) {
  switch (s) {
    case completion_status::success:
      return "success";
    case completion_status::retry_exceeded:
      return "retry_exceeded";
    case completion_status::flushed:
      return "flushed";
    case completion_status::rnr_retry_exceeded:
      return "rnr_retry_exceeded";
    case completion_status::length_error:
      return "length_error";
  }
  return "invalid";
}

size_t send_queue::find_wr(uint32_t psn) const {
  // The PSNs asked for are near una, i.e. near the front: the scan is short.
  for (size_t i = 0; i < wqes.size(); ++i)
    if (((psn - wqes[i].first_psn) & core::psn_mask) < wqes[i].packets) return i;
  return wqes.size();
}

}  // namespace fabricsim::nic
