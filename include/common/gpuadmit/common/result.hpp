// Result<T>: a value or an Error, for code that must not throw across layer boundaries.
// The policy core reports every failure this way; adapters (server, CLI) turn it into a status or exit code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gpuadmit {

struct Error {
  std::string message;
  // The member of the object being read that the error is about, as a JSON Pointer (RFC 6901, for example
  // "/spec/containers/0/resources/limits/nvidia.com~1gpu"); empty when it is about no one member. Readers
  // of YAML turn it into the member's line and column.
  std::string pointer;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  [[nodiscard]] const T& value() const& { return std::get<0>(state_); }
  [[nodiscard]] T& value() & { return std::get<0>(state_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(state_)); }
  [[nodiscard]] const Error& error() const { return std::get<1>(state_); }

  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  // `*make()` and `*std::move(result)` move the value out rather than copying it.
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Error> state_;
};

inline Error make_error(std::string message) {
  return Error{std::move(message), {}};
}

}  // namespace gpuadmit
