// A FIFO ring buffer that grows by doubling and never shrinks: after warm-up a run allocates nothing per
// packet. Used for packets in flight on a link and for queue occupancy records.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace fabricsim::core {

template <class T>
class ring {
 public:
  explicit ring(size_t initial_capacity = 16)
      : m_slots(std::make_unique<T[]>(round_up(initial_capacity))), m_mask(round_up(initial_capacity) - 1) {}
  ring(const ring& o) : m_slots(std::make_unique<T[]>(o.capacity())), m_mask(o.m_mask), m_size(o.m_size) {
    for (size_t i = 0; i < m_size; ++i) m_slots[i] = o[i];
  }
  ring& operator=(const ring& o) {
    if (this != &o) *this = ring(o);
    return *this;
  }
  ring(ring&&) noexcept = default;
  ring& operator=(ring&&) noexcept = default;
  ~ring() = default;

  bool empty() const { return m_size == 0; }
  size_t size() const { return m_size; }
  size_t capacity() const { return m_mask + 1; }

  // Indexing is a mask of the slot number (the capacity is a power of two, its mask kept: no size computed
  // from the storage's bounds, which for an element of 24 bytes is a division at every access).
  T& front() { return m_slots[m_head]; }
  const T& front() const { return m_slots[m_head]; }
  T& back() { return m_slots[(m_head + m_size - 1) & m_mask]; }
  T& operator[](size_t i) { return m_slots[(m_head + i) & m_mask]; }
  const T& operator[](size_t i) const { return m_slots[(m_head + i) & m_mask]; }

  void push_back(const T& v) {
    if (m_size > m_mask) grow();
    m_slots[(m_head + m_size) & m_mask] = v;
    ++m_size;
  }
  void pop_front() {
    m_head = (m_head + 1) & m_mask;
    --m_size;
  }
  void clear() { m_head = m_size = 0; }

 private:
  static size_t round_up(size_t n) {
    size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }
  void grow() {
    const size_t cap = capacity() * 2;
    std::unique_ptr<T[]> bigger = std::make_unique<T[]>(cap);
    for (size_t i = 0; i < m_size; ++i) bigger[i] = std::move((*this)[i]);
    m_slots = std::move(bigger);
    m_mask = cap - 1;
    m_head = 0;
  }

  std::unique_ptr<T[]> m_slots;
  size_t m_mask;  // capacity - 1
  size_t m_head = 0;
  size_t m_size = 0;
};

}  // namespace fabricsim::core
