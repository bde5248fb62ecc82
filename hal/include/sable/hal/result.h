// Result<T>: the one error-carrying return type of Sable (DESIGN.md, STYLE.md "errors are values").
// An Error carries an NN HAL ErrorStatus and a message; exceptions never cross a layer boundary.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "sable/hal/types.h"

namespace sable::hal {

struct Error {
  ErrorStatus status = ErrorStatus::GENERAL_FAILURE;
  std::string message;
  // Only for OUTPUT_INSUFFICIENT_SIZE: the shape of every output, as the HAL returns it.
  std::vector<OutputShape> outputShapes;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { assert(!ok()); return std::get<1>(state_); }
  Error&& error() && { assert(!ok()); return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { assert(!ok_); return error_; }
  Error&& error() && { assert(!ok_); return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

template <typename... Args>
Error makeError(ErrorStatus status, fmt::format_string<Args...> format, Args&&... args) {
  return Error{status, fmt::format(format, std::forward<Args>(args)...), {}};
}

template <typename... Args>
Error invalidArgument(fmt::format_string<Args...> format, Args&&... args) {
  return makeError(ErrorStatus::INVALID_ARGUMENT, format, std::forward<Args>(args)...);
}

template <typename... Args>
Error generalFailure(fmt::format_string<Args...> format, Args&&... args) {
  return makeError(ErrorStatus::GENERAL_FAILURE, format, std::forward<Args>(args)...);
}

}  // namespace sable::hal

#define SABLE_CONCAT_INNER(a, b) a##b
#define SABLE_CONCAT(a, b) SABLE_CONCAT_INNER(a, b)

// SABLE_TRY(expr): returns the error of a failed Result<void>-like expression.
#define SABLE_TRY(expr)                                        \
  do {                                                         \
    auto&& sable_try_result_ = (expr);                         \
    if (!sable_try_result_.ok()) return std::move(sable_try_result_).error(); \
  } while (0)

// SABLE_ASSIGN_OR_RETURN(lhs, expr): unwraps a Result<T> into lhs or returns its error.
#define SABLE_ASSIGN_OR_RETURN(lhs, expr) \
  SABLE_ASSIGN_OR_RETURN_IMPL(SABLE_CONCAT(sable_result_, __COUNTER__), lhs, expr)
#define SABLE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).error();     \
  lhs = std::move(tmp).value()
