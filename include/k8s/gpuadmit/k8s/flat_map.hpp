// FlatMap: a map from string to V kept as one sorted vector. The typed pod holds a handful of entries per
// map (cpu, memory, nvidia.com/gpu), read back after every fix: a std::map made a heap node per entry and a
// pointer chase per lookup, on memory the TLS and kernel work between two reviews had just evicted.
//
// It keeps std::map's interface where the code uses it (find, contains, at, try_emplace, operator[],
// ordered iteration over pairs with `first` and `second`) and its order (std::string's operator<). Unlike
// std::map, an insertion moves the entries after it: references and iterators do not survive one.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuadmit::k8s {

template <class V>
class FlatMap {
 public:
  using value_type = std::pair<std::string, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  FlatMap() = default;
  // As std::map's: a repeated key keeps its first value.
  FlatMap(std::initializer_list<value_type> entries) {
    for (const value_type& entry : entries) {
      try_emplace(entry.first, entry.second);
    }
  }

  [[nodiscard]] iterator begin() noexcept { return entries_.begin(); }
  [[nodiscard]] iterator end() noexcept { return entries_.end(); }
  [[nodiscard]] const_iterator begin() const noexcept { return entries_.begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return entries_.end(); }
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  void clear() noexcept { entries_.clear(); }
  void reserve(std::size_t n) { entries_.reserve(n); }

  [[nodiscard]] iterator find(std::string_view key) noexcept {
    return unconst(std::as_const(*this).find(key));
  }
  [[nodiscard]] const_iterator find(std::string_view key) const noexcept {
    const auto it = lower_bound(key);
    return it != entries_.end() && std::string_view(it->first) == key ? it : entries_.end();
  }
  [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != entries_.end(); }

  [[nodiscard]] const V& at(std::string_view key) const {
    const auto it = find(key);
    if (it == entries_.end()) {
      missing(key);
    }
    return it->second;
  }
  [[nodiscard]] V& at(std::string_view key) {
    const auto it = find(key);
    if (it == entries_.end()) {
      missing(key);
    }
    return it->second;
  }

  // Inserts {key, V(args...)} unless the key is there; returns the entry and whether it was inserted.
  template <class... Args>
  std::pair<iterator, bool> try_emplace(std::string_view key, Args&&... args) {
    auto it = lower_bound(key);
    if (it != entries_.end() && std::string_view(it->first) == key) {
      return {it, false};
    }
    it = entries_.emplace(it, std::piecewise_construct, std::forward_as_tuple(key),
                          std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  V& operator[](std::string_view key) { return try_emplace(key).first->second; }

  // Appends an entry known to sort after every entry present (a parser reading keys in order); any other
  // key takes the sorted path. A repeated key keeps the last value, as JSON readers do.
  V& append(std::string_view key, V value) {
    if (entries_.empty() || std::string_view(entries_.back().first) < key) {
      return entries_.emplace_back(std::string(key), std::move(value)).second;
    }
    V& slot = (*this)[key];
    slot = std::move(value);
    return slot;
  }

  bool operator==(const FlatMap&) const = default;

  // std::erase_if's counterpart: removes the entries `pred` holds for, returns how many.
  template <class Pred>
  friend std::size_t erase_if(FlatMap& map, Pred pred) {
    return std::erase_if(map.entries_, pred);
  }

 private:
  [[nodiscard]] iterator lower_bound(std::string_view key) noexcept {
    return unconst(std::as_const(*this).lower_bound(key));
  }
  [[noreturn]] static void missing(std::string_view key) {
    throw std::out_of_range("FlatMap::at: no entry " + std::string(key));
  }
  // The non-const lookups are the const ones, with the position handed back as a mutable iterator.
  [[nodiscard]] iterator unconst(const_iterator it) noexcept {
    return entries_.begin() + (it - entries_.cbegin());
  }
  [[nodiscard]] const_iterator lower_bound(std::string_view key) const noexcept {
    return std::lower_bound(
        entries_.begin(), entries_.end(), key,
        [](const value_type& entry, std::string_view k) { return std::string_view(entry.first) < k; });
  }

  std::vector<value_type> entries_;
};

}  // namespace gpuadmit::k8s
