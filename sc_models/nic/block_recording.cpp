// Recording adapters of the SuperNIC's RTL blocks: forward, then log the transaction.
#include "sc_models/nic/block_recording.h"

#include <ostream>

namespace fabricsim::nic {

void reorder_tracker_params::visit(core::param_visitor& v) {
  v.field({"window", "PSNs", "PSNs tracked beyond the in-order head", 16, 4096}, window);
}

namespace {

class recording_reorder_tracker final : public reorder_tracker {
 public:
  recording_reorder_tracker(std::unique_ptr<reorder_tracker> block, core::transaction_log& log,
                            const std::string& instance)
      : m_block(std::move(block)), m_out(log.stream("reorder_tracker")) {
    reorder_tracker_params p;
    p.window = m_block->window();
    m_id = log.add_instance("reorder_tracker", instance, core::format_param_fields(p));
  }
  void reset(uint32_t expected_psn) override {
    m_out << "reset " << m_id << ' ' << expected_psn << '\n';
    m_block->reset(expected_psn);
  }
  psn_result arrive(uint32_t psn) override {
    m_out << "arrive " << m_id << ' ' << psn << '\n';
    return m_block->arrive(psn);
  }
  uint32_t window() const override { return m_block->window(); }
  const char* kind() const override { return m_block->kind(); }

 private:
  std::unique_ptr<reorder_tracker> m_block;
  std::ostream& m_out;
  uint64_t m_id = 0;
};

class recording_dcqcn_rate_engine final : public dcqcn_rate_engine {
 public:
  recording_dcqcn_rate_engine(std::unique_ptr<dcqcn_rate_engine> block, const dcqcn_params& built_with,
                              core::transaction_log& log, const std::string& instance)
      : m_block(std::move(block)), m_out(log.stream("dcqcn_rp")) {
    m_id = log.add_instance("dcqcn_rp", instance, core::format_param_fields(built_with));
  }
  void reset(const dcqcn_params& params, uint64_t now_cycles) override {
    m_out << "reset " << m_id << ' ' << now_cycles << ' ' << core::format_param_fields(params) << '\n';
    m_block->reset(params, now_cycles);
  }
  void cnp(uint64_t now_cycles) override {
    m_out << "cnp " << m_id << ' ' << now_cycles << '\n';
    m_block->cnp(now_cycles);
  }
  void sent(uint32_t bytes, uint64_t now_cycles) override {
    m_out << "sent " << m_id << ' ' << bytes << ' ' << now_cycles << '\n';
    m_block->sent(bytes, now_cycles);
  }
  void advance(uint64_t now_cycles) override {
    m_out << "advance " << m_id << ' ' << now_cycles << '\n';
    m_block->advance(now_cycles);
  }
  const dcqcn_outputs& outputs() const override { return m_block->outputs(); }
  const char* kind() const override { return m_block->kind(); }
  uint64_t last_cycles() const override { return m_block->last_cycles(); }

 private:
  std::unique_ptr<dcqcn_rate_engine> m_block;
  std::ostream& m_out;
  uint64_t m_id = 0;
};

class recording_cnp_gen final : public cnp_gen {
 public:
  recording_cnp_gen(std::unique_ptr<cnp_gen> block, const cnp_gen_params& built_with, core::transaction_log& log,
                    const std::string& instance)
      : m_block(std::move(block)), m_out(log.stream("cnp_gen")) {
    cnp_gen_params p = built_with;
    p.flows = m_block->flows();
    m_id = log.add_instance("cnp_gen", instance, core::format_param_fields(p));
  }
  void reset(const cnp_gen_params& params) override {
    m_out << "reset " << m_id << ' ' << core::format_param_fields(params) << '\n';
    m_block->reset(params);
  }
  bool marked_arrival(uint32_t flow, uint64_t now_cycles) override {
    m_out << "mark " << m_id << ' ' << flow << ' ' << now_cycles << '\n';
    return m_block->marked_arrival(flow, now_cycles);
  }
  cnp_gen_counters counters() const override { return m_block->counters(); }
  uint32_t flows() const override { return m_block->flows(); }
  const char* kind() const override { return m_block->kind(); }

 private:
  std::unique_ptr<cnp_gen> m_block;
  std::ostream& m_out;
  uint64_t m_id = 0;
};

}  // namespace

std::unique_ptr<reorder_tracker> record_reorder_tracker(std::unique_ptr<reorder_tracker> block,
                                                        core::transaction_log& log, const std::string& instance) {
  return std::make_unique<recording_reorder_tracker>(std::move(block), log, instance);
}

std::unique_ptr<dcqcn_rate_engine> record_dcqcn_rate_engine(std::unique_ptr<dcqcn_rate_engine> block,
                                                            const dcqcn_params& built_with, core::transaction_log& log,
                                                            const std::string& instance) {
  return std::make_unique<recording_dcqcn_rate_engine>(std::move(block), built_with, log, instance);
}

std::unique_ptr<cnp_gen> record_cnp_gen(std::unique_ptr<cnp_gen> block, const cnp_gen_params& built_with,
                                        core::transaction_log& log, const std::string& instance) {
  return std::make_unique<recording_cnp_gen>(std::move(block), built_with, log, instance);
}

}  // namespace fabricsim::nic
