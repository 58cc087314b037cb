#include "models/pcie/pcie_host.h"

#include <cstring>

namespace fabricsim::models {

host_memory::host_memory(const sc_core::sc_module_name& name, const node_config&, const host_memory_params& p)
    : sc_module(name), mem("mem"), p_(p) {
  if (p_.functional) data_.assign(p_.bytes, 0);
  mem.register_b_transport(this, &host_memory::b_transport);
}

void host_memory::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time&) {
  const std::uint64_t a = tx.get_address(), n = tx.get_data_length();
  if (a > p_.bytes || n > p_.bytes - a) {
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (p_.functional && tx.get_data_ptr()) {
    if (tx.is_write())
      std::memcpy(data_.data() + a, tx.get_data_ptr(), n);
    else
      std::memcpy(tx.get_data_ptr(), data_.data() + a, n);
  }
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

FABRICSIM_REGISTER_MODEL("host-memory", host_memory);

}  // namespace fabricsim::models
