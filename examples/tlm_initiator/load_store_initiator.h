#pragma once
// A CPU-like load/store generator written only against the standard
// SystemC / TLM-2.0 headers: nothing of fabricsim is included here, so the
// module plugs into any TLM-2.0 LT target (docs/user-guide.md "Attaching
// your own SystemC model").
//
// It stores a byte pattern at `base` in accesses of `access_bytes` (one
// blocking b_transport each, one access outstanding, like an in-order core),
// loads it back the same way, then reads the whole pattern in one burst.
// Loosely timed with temporal decoupling: every delay the target annotates
// is added to the local time offset of a tlm_utils::tlm_quantumkeeper, which
// synchronises with SystemC time when the global quantum is used up.
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include <cstdint>
#include <string>
#include <vector>

class load_store_initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<load_store_initiator> socket;

  /// What the run measured. Latencies are from issuing an access (its local
  /// time) to its completion as annotated by the target, in ps.
  struct result {
    bool done = false;
    bool read_back_ok = false;
    std::string error;                 ///< first failed access, if any
    std::uint64_t first_store_ps = 0;  ///< first store
    std::uint64_t first_load_ps = 0;   ///< first load: round trip (request out, data back)
    std::uint64_t burst_read_ps = 0;   ///< the whole pattern in one load
    std::uint64_t total_ps = 0;        ///< start to end, local time
  };

  /// `base`: global byte address of the pattern; `pattern_bytes`: its size;
  /// `access_bytes`: bytes per load / store (pattern_bytes a multiple of it).
  load_store_initiator(const sc_core::sc_module_name& name, std::uint64_t base, unsigned pattern_bytes,
                       unsigned access_bytes)
      : sc_module(name), socket("socket"), base_(base), bytes_(pattern_bytes), access_(access_bytes) {
    SC_HAS_PROCESS(load_store_initiator);
    SC_THREAD(run);
  }

  const result& outcome() const { return res_; }
  /// The byte stored at offset i of the pattern.
  static unsigned char pattern(unsigned i) { return static_cast<unsigned char>((i * 7u + 3u) ^ (i >> 8)); }

 private:
  // One blocking access at the local time of qk_; returns its latency (ps),
  // or ~0 on an error response.
  std::uint64_t access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len) {
    tlm::tlm_generic_payload tx;
    tx.set_command(cmd);
    tx.set_address(addr);
    tx.set_data_ptr(data);
    tx.set_data_length(len);
    tx.set_streaming_width(len);
    tx.set_byte_enable_ptr(nullptr);
    tx.set_dmi_allowed(false);
    tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    // Issued at local time now + offset; a target may also wait inside
    // b_transport (SystemC time moves on), so both parts count.
    const sc_core::sc_time issued = qk_.get_current_time();
    sc_core::sc_time delay = qk_.get_local_time();
    socket->b_transport(tx, delay);
    if (tx.is_response_error()) {
      if (res_.error.empty()) res_.error = tx.get_response_string() + " at address " + std::to_string(addr);
      return ~0ull;
    }
    qk_.set(delay);  // the local time offset now ends at the access's completion
    const std::uint64_t latency = (qk_.get_current_time() - issued).value();
    if (qk_.need_sync()) qk_.sync();
    return latency;
  }

  void run() {
    qk_.reset();
    const sc_core::sc_time t0 = qk_.get_current_time();
    std::vector<unsigned char> out(bytes_), in(bytes_, 0), burst(bytes_, 0);
    for (unsigned i = 0; i < bytes_; ++i) out[i] = pattern(i);
    for (unsigned off = 0; off < bytes_; off += access_) {
      const std::uint64_t l = access(tlm::TLM_WRITE_COMMAND, base_ + off, out.data() + off, access_);
      if (off == 0) res_.first_store_ps = l;
    }
    for (unsigned off = 0; off < bytes_; off += access_) {
      const std::uint64_t l = access(tlm::TLM_READ_COMMAND, base_ + off, in.data() + off, access_);
      if (off == 0) res_.first_load_ps = l;
    }
    res_.burst_read_ps = access(tlm::TLM_READ_COMMAND, base_, burst.data(), bytes_);
    res_.total_ps = (qk_.get_current_time() - t0).value();
    qk_.sync();
    res_.read_back_ok = res_.error.empty() && in == out && burst == out;
    res_.done = true;
  }

  std::uint64_t base_;
  unsigned bytes_, access_;
  tlm_utils::tlm_quantumkeeper qk_;
  result res_;
};
