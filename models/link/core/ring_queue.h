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
  /// Construct the element in its slot. (push_back of a braced temporary
  /// hands the callee a stack copy written field by field, which one wide
  /// load reads back: that load cannot be store-forwarded and waits for the
  /// store buffer to drain, cold stores included.)
  template <typename... A>
  void emplace_back(A&&... a) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = T{std::forward<A>(a)...};
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
  }

 private:
  [[gnu::noinline, gnu::cold]] void grow() {
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


/// FIFO whose first N slots live inside the object (N a power of two, >= 1):
/// while it holds at most N elements no separate buffer line is touched, so
/// a short queue of a link direction sits in that direction's own cache
/// lines. Beyond N it spills to a heap buffer (grown as RingQueue's, kept
/// for reuse) and returns to the inline slots once it is empty again. The
/// object is 32 + N x sizeof(T) bytes: a 24-byte header, the slots, the spill
/// buffer's pointer. Same interface and order as RingQueue; at most 2^31
/// elements (std::length_error beyond). T must be default-constructible and copyable.
template <typename T, std::uint32_t N>
class InlineRingQueue {
  static_assert(N >= 1 && (N & (N - 1)) == 0, "InlineRingQueue: N must be a power of two");

 public:
  InlineRingQueue() = default;
  InlineRingQueue(const InlineRingQueue& o) { copy_from(o); }
  InlineRingQueue(InlineRingQueue&& o) noexcept { take_from(o); }
  InlineRingQueue& operator=(const InlineRingQueue& o) {
    if (this != &o) {
      clear_storage();
      copy_from(o);
    }
    return *this;
  }
  InlineRingQueue& operator=(InlineRingQueue&& o) noexcept {
    if (this != &o) {
      clear_storage();
      take_from(o);
    }
    return *this;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// True while the elements are in the inline slots.
  bool is_inline() const { return buf_ == slots_; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  /// i-th element from the front (i < size()).
  const T& at(std::size_t i) const { return buf_[(head_ + i) & (cap_ - 1)]; }
  /// Address of the front slot (for a prefetch; not to be read when empty).
  const T* head_address() const { return buf_ + head_; }
  T& back() { return buf_[(head_ + size_ - 1) & (cap_ - 1)]; }
  const T& back() const { return buf_[(head_ + size_ - 1) & (cap_ - 1)]; }
  void push_back(const T& v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }
  /// Construct the element in its slot. (push_back of a braced temporary
  /// hands the callee a stack copy written field by field, which one wide
  /// load reads back: that load cannot be store-forwarded and waits for the
  /// store buffer to drain, cold stores included.)
  template <typename... A>
  void emplace_back(A&&... a) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = T{std::forward<A>(a)...};
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (cap_ - 1);
    if (--size_ == 0 && buf_ != slots_) {  // empty: back to the inline slots
      buf_ = slots_;
      cap_ = N;
      head_ = 0;
    }
  }
  /// Allocate the spill buffer now with room for at least n elements (none
  /// for n <= N), so that a structure's buffers can be allocated together,
  /// before use. The elements stay where they are.
  void reserve(std::size_t n) {
    if (n <= N || n <= spill_cap_) return;
    std::uint32_t c = spill_cap_ == 0 ? 2 * N : spill_cap_;
    while (c < n) {
      if (c >= (1u << 31)) throw std::length_error("InlineRingQueue: more than 2^31 elements");
      c *= 2;
    }
    if (!is_inline()) {  // move the elements into the larger buffer
      std::unique_ptr<T[]> b(new T[c]);
      for (std::uint32_t i = 0; i < size_; ++i) b[i] = std::move(buf_[(head_ + i) & (cap_ - 1)]);
      spill_.swap(b);
      buf_ = spill_.get();
      head_ = 0;
      cap_ = c;
    } else {
      spill_.reset(new T[c]);
    }
    spill_cap_ = c;
  }

 private:
  [[gnu::noinline, gnu::cold]] void grow() {
    if (cap_ >= (1u << 31)) throw std::length_error("InlineRingQueue: more than 2^31 elements");
    const std::uint32_t n = cap_ * 2;
    if (is_inline() && spill_cap_ >= n) {  // reuse the spill buffer
      for (std::uint32_t i = 0; i < size_; ++i) spill_[i] = std::move(buf_[(head_ + i) & (cap_ - 1)]);
      buf_ = spill_.get();
      head_ = 0;
      cap_ = spill_cap_;
      return;
    }
    std::unique_ptr<T[]> b(new T[n]);
    for (std::uint32_t i = 0; i < size_; ++i) b[i] = std::move(buf_[(head_ + i) & (cap_ - 1)]);
    spill_.swap(b);
    buf_ = spill_.get();
    head_ = 0;
    cap_ = spill_cap_ = n;
  }
  void clear_storage() {
    buf_ = slots_;
    head_ = size_ = 0;
    cap_ = N;
    spill_.reset();
    spill_cap_ = 0;
  }
  void copy_from(const InlineRingQueue& o) {
    if (o.spill_cap_ > 0) {
      spill_.reset(new T[o.spill_cap_]);
      spill_cap_ = o.spill_cap_;
    }
    buf_ = o.is_inline() ? slots_ : spill_.get();
    cap_ = o.cap_;
    head_ = 0;
    size_ = o.size_;
    for (std::uint32_t i = 0; i < size_; ++i) buf_[i] = o.at(i);
  }
  void take_from(InlineRingQueue& o) {
    const bool was_inline = o.is_inline();
    spill_ = std::move(o.spill_);
    spill_cap_ = o.spill_cap_;
    cap_ = o.cap_;
    size_ = o.size_;
    if (was_inline) {
      buf_ = slots_;
      head_ = 0;
      for (std::uint32_t i = 0; i < size_; ++i) slots_[i] = o.at(i);
    } else {
      buf_ = spill_.get();
      head_ = o.head_;
    }
    o.buf_ = o.slots_;
    o.head_ = o.size_ = 0;
    o.cap_ = N;
    o.spill_cap_ = 0;
  }
  // Hot first: the header, then the inline slots; the spill buffer's owner last.
  T* buf_ = slots_;
  std::uint32_t head_ = 0, size_ = 0, cap_ = N, spill_cap_ = 0;
  T slots_[N];
  std::unique_ptr<T[]> spill_;
};

}  // namespace fabricsim::link
