#pragma once
// FIFO on a power-of-two circular buffer that only grows: no allocation or
// free in steady state (std::deque allocates and frees a chunk every few
// hundred elements, which dominated the fabric's per-flit cost).
#include <cstddef>
#include <utility>
#include <vector>

namespace fabricsim::link {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return buf_[head_]; }
  /// i-th element from the front (i < size()).
  const T& at(std::size_t i) const { return buf_[(head_ + i) & mask_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return buf_[(head_ + size_ - 1) & mask_]; }
  const T& back() const { return buf_[(head_ + size_ - 1) & mask_]; }
  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & mask_] = v;
    ++size_;
  }
  template <typename... A>
  void emplace_back(A&&... a) {
    push_back(T{std::forward<A>(a)...});
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }

 private:
  void grow() {
    std::vector<T> b(buf_.empty() ? 16 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) b[i] = std::move(buf_[(head_ + i) & mask_]);
    buf_.swap(b);
    head_ = 0;
    mask_ = buf_.size() - 1;
  }
  std::vector<T> buf_;
  std::size_t head_ = 0, size_ = 0, mask_ = 0;
};

}  // namespace fabricsim::link
