#pragma once
// Payload extension of a DMA operation posted by an accelerator to the
// fabric kernel (socket accelerator.dma -> fabric_kernel.dma_in).
#include <tlm>

#include <cstdint>

namespace fabricsim::models {

/// Written by the accelerator, read by the kernel. For a WRITE the payload's
/// data is the source bytes (copied by the kernel at posting: posted write);
/// for a READ the payload's data pointer and length give the local
/// destination, which the kernel fills through the rank's `mem` socket when
/// the data has arrived.
struct dma_ext : tlm::tlm_extension<dma_ext> {
  int peer = -1;                 ///< WRITE: destination rank; READ: rank read from
  std::uint64_t peer_addr = 0;   ///< address in the peer's memory
  std::uint64_t local_addr = 0;  ///< READ: local destination address
  int flag = -1;                 ///< WRITE: destination flag incremented when the data has landed
  std::uint64_t op = 0;          ///< the rank's operation id, echoed in op_complete

  tlm::tlm_extension_base* clone() const override { return new dma_ext(*this); }
  void copy_from(const tlm::tlm_extension_base& o) override { *this = static_cast<const dma_ext&>(o); }
};

/// Address of flag `f` in an accelerator's target address space: writes there
/// ADD their 8-byte little-endian value to the flag (a doorbell counter).
constexpr std::uint64_t kFlagBase = 1ull << 48;
constexpr std::uint64_t flag_address(int f) { return kFlagBase + 8ull * static_cast<std::uint64_t>(f); }

}  // namespace fabricsim::models
