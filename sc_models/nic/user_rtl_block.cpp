// A user's RTL block compiled at run time: the dlopen()ed shared object behind the cycle-level model.
#include "sc_models/nic/user_rtl_block.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "sc_models/core/params.h"
#include "sc_models/nic/user_rtl_abi.h"

namespace fabricsim::nic {

namespace {

template <class In, class Out>
void check_table(const std::string& path, const std::string& block, const fabricsim_user_rtl_table& t) {
  const std::string where = "user RTL object " + path + ": ";
  if (t.abi_version != FABRICSIM_USER_RTL_ABI_VERSION)
    throw core::config_error(where + "built for contract version " + std::to_string(t.abi_version) + ", expected " +
                             std::to_string(FABRICSIM_USER_RTL_ABI_VERSION) + " (delete the cache entry to rebuild)");
  if (t.block == nullptr || block != t.block)
    throw core::config_error(where + "holds block " + (t.block ? t.block : "(none)") + ", expected " + block);
  if (t.inputs_size != sizeof(In) || t.outputs_size != sizeof(Out))
    throw core::config_error(where + "port bundles of " + std::to_string(t.inputs_size) + "/" +
                             std::to_string(t.outputs_size) + " bytes, expected " + std::to_string(sizeof(In)) + "/" +
                             std::to_string(sizeof(Out)) + " (built by another compiler or version?)");
}

}  // namespace

std::shared_ptr<const user_rtl_library> user_rtl_library::open(const std::string& path, const std::string& block) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const user_rtl_library>> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) {
    if (block != it->second->table().block)
      throw core::config_error("user RTL object " + path + ": holds block " + it->second->table().block +
                               ", expected " + block);
    return it->second;
  }
  // RTLD_LOCAL: the object's own copy of the Verilator runtime stays private to it.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw core::config_error("user RTL object " + path + ": cannot load: " + dlerror());
  auto entry = reinterpret_cast<fabricsim_user_rtl_entry_fn>(dlsym(handle, "fabricsim_user_rtl_entry"));
  if (entry == nullptr)
    throw core::config_error("user RTL object " + path + ": no fabricsim_user_rtl_entry (not built by fabricsim)");
  const fabricsim_user_rtl_table* table = entry();
  if (block == "reorder_tracker") {
    check_table<reorder_tracker_inputs, reorder_tracker_outputs>(path, block, *table);
  } else if (block == "cnp_gen") {
    check_table<cnp_gen_inputs, cnp_gen_outputs>(path, block, *table);
  } else if (block == "dcqcn_rp") {
    check_table<dcqcn_rp_inputs, dcqcn_rp_ports>(path, block, *table);
  } else {
    throw core::config_error("user RTL object " + path + ": block " + block + " has no user-RTL binding");
  }
  auto library = std::make_shared<const user_rtl_library>(path, table);
  loaded.emplace(path, library);
  return library;
}

user_rtl_instance::user_rtl_instance(std::shared_ptr<const user_rtl_library> library, const std::string& fst_path,
                                     bool traceable)
    : m_library(std::move(library)) {
  char error[512] = "";
  m_block = m_library->table().create(fst_path.c_str(), traceable ? 1 : 0, error, sizeof error);
  if (m_block == nullptr)
    throw core::config_error("user RTL object " + m_library->path() + ": cannot create the block: " + error);
}

user_rtl_instance::~user_rtl_instance() { m_library->table().destroy(m_block); }

void user_rtl_instance::step(const void* in, void* out) { m_library->table().step(m_block, in, out); }

void user_rtl_instance::peek(void* out) const { m_library->table().peek(m_block, out); }

void user_rtl_instance::start_trace(const std::string& fst_path) {
  char error[512] = "";
  if (m_library->table().start_trace(m_block, fst_path.c_str(), error, sizeof error) != 0)
    throw std::logic_error(std::string("user ") + m_library->table().block + ": " + error);
}

namespace {
// The user's reaction point as the shipped adapter's port.
class dcqcn_rp_user_port final : public dcqcn_rp_rtl::port {
 public:
  dcqcn_rp_user_port(std::shared_ptr<const user_rtl_library> library, const std::string& fst_path, bool traceable)
      : m_block(std::move(library), fst_path, traceable) {}
  dcqcn_rp_ports step(const dcqcn_rp_inputs& in) override {
    dcqcn_rp_ports out;
    m_block.step(&in, &out);
    return out;
  }
  dcqcn_rp_ports peek() const override {
    dcqcn_rp_ports out;
    m_block.peek(&out);
    return out;
  }
  void start_trace(const std::string& fst_path) override { m_block.start_trace(fst_path); }

 private:
  user_rtl_instance m_block;
};
}  // namespace

std::unique_ptr<dcqcn_rp_rtl> make_dcqcn_rp_user(std::shared_ptr<const user_rtl_library> library,
                                                 const dcqcn_params& params, uint64_t now_cycles,
                                                 const std::string& fst_path, bool traceable) {
  return std::make_unique<dcqcn_rp_rtl>(std::make_unique<dcqcn_rp_user_port>(std::move(library), fst_path, traceable),
                                        "user", params, now_cycles);
}

const std::vector<std::string>& user_rtl_fabric_blocks() {
  static const std::vector<std::string> blocks{"reorder_tracker", "cnp_gen", "dcqcn_rp"};
  return blocks;
}

namespace {
user_rtl_provider& provider_of(const std::string& block) {
  static std::map<std::string, user_rtl_provider> providers;
  const auto& known = user_rtl_fabric_blocks();
  if (std::find(known.begin(), known.end(), block) == known.end())
    throw std::invalid_argument("user_block: no fabric block " + block);
  return providers[block];
}
}  // namespace

void set_user_block(const std::string& block, user_rtl_provider provider) { provider_of(block) = std::move(provider); }

const user_rtl_provider& user_block(const std::string& block) { return provider_of(block); }

}  // namespace fabricsim::nic
