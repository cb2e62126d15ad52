// Go-back-N loss recovery: NAK "PSN sequence error" for PSN p rewinds the send queue to p (unless it is behind
// p already); a timeout rewinds it to una; a READ missing a response is re-issued from una for the rest of
// its message.
#include "sc_models/nic/go_back_n_recovery.h"

namespace fabricsim::nic {
namespace {

class go_back_n_recovery final : public loss_recovery {
 public:
  go_back_n_recovery(const supernic_params& params, recovery_host& host, const std::string& instance,
                     core::stats_registry* stats)
      : loss_recovery(params, host, instance, stats) {}
  bool whole_read() const override { return true; }
  const char* name() const override { return "go_back_n"; }

 private:
  void resend_nak(size_t, send_queue& s, uint32_t psn) override {
    if (core::psn_before(psn, s.next_psn)) s.seek(psn);
  }
  void resend_timeout(size_t, send_queue& s, core::picoseconds) override { s.seek(s.una); }
  void resend_read(size_t, send_queue& s) override {
    if (core::psn_before(s.una, s.next_psn)) s.seek(s.una);
  }
};

}  // namespace

std::unique_ptr<loss_recovery> make_go_back_n_recovery(const supernic_params& params, recovery_host& host,
                                                       const std::string& instance, core::stats_registry* stats) {
  return std::make_unique<go_back_n_recovery>(params, host, instance, stats);
}

}  // namespace fabricsim::nic
