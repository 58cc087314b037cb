#pragma once
// FIFO on a power-of-two circular buffer that only grows: no allocation or
// free in steady state (std::deque allocates and frees a chunk every few
// hundred elements, which dominated the fabric's per-flit cost). The header
// is 24 bytes (buffer pointer, 32-bit head, size and capacity) so that the
// several queues of one link direction share few cache lines.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

namespace fabricsim::link {

/// FIFO of at most 2^31 elements (std::length_error beyond). T must be
/// default-constructible and copyable.
template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  RingQueue(const RingQueue& o) : head_(0), size_(o.size_), cap_(o.cap_) {
    if (cap_ == 0) return;
    buf_.reset(new T[cap_]);
    for (std::uint32_t i = 0; i < size_; ++i) buf_[i] = o.at(i);
  }
  RingQueue(RingQueue&& o) noexcept : buf_(std::move(o.buf_)), head_(o.head_), size_(o.size_), cap_(o.cap_) {
    o.head_ = o.size_ = o.cap_ = 0;
  }
  RingQueue& operator=(RingQueue o) noexcept {
    buf_.swap(o.buf_);
    std::swap(head_, o.head_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
    return *this;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  /// i-th element from the front (i < size()).
  const T& at(std::size_t i) const { return buf_[(head_ + i) & (cap_ - 1)]; }
  const T& front() const { return buf_[head_]; }
  /// Address of the front slot (for a prefetch; not to be read when empty).
  const T* head_address() const { return buf_.get() + head_; }
  T& back() { return buf_[(head_ + size_ - 1) & (cap_ - 1)]; }
  const T& back() const { return buf_[(head_ + size_ - 1) & (cap_ - 1)]; }
  void push_back(const T& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }
  /// Allocate room for at least n elements now (capacities stay powers of
  /// two, as if grown by push_back), so that a structure's buffers can be
  /// allocated together, before use.
  void reserve(std::size_t n) {
    while (cap_ < n) grow();
  }
  template <typename... A>
  void emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
  }
  void pop_front() {
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
  }

 private:
  void grow() {
    if (cap_ >= (1u << 31)) throw std::length_error("RingQueue: more than 2^31 elements");
    const std::uint32_t n = cap_ == 0 ? 16 : cap_ * 2;
    std::unique_ptr<T[]> b(new T[n]);
    for (std::uint32_t i = 0; i < size_; ++i) b[i] = std::move(buf_[(head_ + i) & (cap_ - 1)]);
    buf_.swap(b);
    head_ = 0;
    cap_ = n;
  }
  std::unique_ptr<T[]> buf_;
  std::uint32_t head_ = 0, size_ = 0, cap_ = 0;
};

}  // namespace fabricsim::link
