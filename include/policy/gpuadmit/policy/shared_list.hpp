// SharedList<T>: a list of immutable objects that several snapshots share. The watcher's cache and every
// snapshot built from it point at the same objects, so a rebuild after one node changed copies pointers,
// not 65,000 nodes, and freeing the old snapshot frees only what no newer one still holds. Readers see
// plain `const T&`: `list[i]`, `for (const T& x : list)`.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

namespace gpuadmit::policy {

template <class T>
class SharedList {
 public:
  using Pointer = std::shared_ptr<const T>;

  class const_iterator {  // NOLINT(readability-identifier-naming): the standard container name
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;

    const_iterator() = default;
    explicit const_iterator(typename std::vector<Pointer>::const_iterator at) : at_(at) {}

    reference operator*() const { return **at_; }
    pointer operator->() const { return at_->get(); }
    reference operator[](difference_type n) const { return *at_[n]; }
    const_iterator& operator++() {
      ++at_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(at_++); }
    const_iterator& operator--() {
      --at_;
      return *this;
    }
    const_iterator operator--(int) { return const_iterator(at_--); }
    const_iterator& operator+=(difference_type n) {
      at_ += n;
      return *this;
    }
    const_iterator& operator-=(difference_type n) {
      at_ -= n;
      return *this;
    }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.at_ - b.at_;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) = default;
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) = default;

   private:
    typename std::vector<Pointer>::const_iterator at_;
  };
  using iterator = const_iterator;  // NOLINT(readability-identifier-naming)
  using value_type = T;             // NOLINT(readability-identifier-naming)

  SharedList() = default;
  // Shares each value (the CLI and tests, which build a snapshot once).
  explicit SharedList(std::vector<T> values) {
    items_.reserve(values.size());
    for (T& value : values) items_.push_back(std::make_shared<const T>(std::move(value)));
  }

  void reserve(std::size_t n) { items_.reserve(n); }
  void push_back(Pointer item) { items_.push_back(std::move(item)); }

  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  [[nodiscard]] const T& operator[](std::size_t i) const { return *items_[i]; }
  [[nodiscard]] const_iterator begin() const noexcept { return const_iterator(items_.begin()); }
  [[nodiscard]] const_iterator end() const noexcept { return const_iterator(items_.end()); }
  // The pointers themselves, to reorder them or to share one item with another list.
  [[nodiscard]] std::vector<Pointer>& pointers() noexcept { return items_; }
  [[nodiscard]] const std::vector<Pointer>& pointers() const noexcept { return items_; }

 private:
  std::vector<Pointer> items_;
};

}  // namespace gpuadmit::policy
