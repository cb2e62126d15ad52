// A FIFO ring buffer that grows by doubling and never shrinks: after warm-up a run allocates nothing per
// packet. Used for packets in flight on a link and for queue occupancy records.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace fabricsim::core {

template <class T>
class ring {
 public:
  explicit ring(size_t initial_capacity = 16) : m_slots(round_up(initial_capacity)) {}

  bool empty() const { return m_size == 0; }
  size_t size() const { return m_size; }
  size_t capacity() const { return m_slots.size(); }

  T& front() { return m_slots[m_head]; }
  const T& front() const { return m_slots[m_head]; }
  T& back() { return m_slots[(m_head + m_size - 1) & (m_slots.size() - 1)]; }
  T& operator[](size_t i) { return m_slots[(m_head + i) & (m_slots.size() - 1)]; }
  const T& operator[](size_t i) const { return m_slots[(m_head + i) & (m_slots.size() - 1)]; }

  void push_back(const T& v) {
    if (m_size == m_slots.size()) grow();
    m_slots[(m_head + m_size) & (m_slots.size() - 1)] = v;
    ++m_size;
  }
  void pop_front() {
    m_head = (m_head + 1) & (m_slots.size() - 1);
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
    std::vector<T> bigger(m_slots.size() * 2);
    for (size_t i = 0; i < m_size; ++i) bigger[i] = std::move((*this)[i]);
    m_slots.swap(bigger);
    m_head = 0;
  }

  std::vector<T> m_slots;
  size_t m_head = 0;
  size_t m_size = 0;
};

}  // namespace fabricsim::core
