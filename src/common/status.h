// kiln/common: Status and Result<T>, the error values every module returns.
//
// Roadmap: recoverable failures travel as values (Status / Result<T>) with a message; programmer
// errors are KILN_CHECK asserts. Third-party exceptions are caught at the adapter that calls them.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // bad input from the user (file content, flags)
  kNotFound,         // missing file, kernel, task
  kIo,               // read/write failure
  kParse,            // syntax error in user input
  kUnavailable,      // a tool or device is not there (ncu, GPU)
  kTimeout,
  kInternal,
};

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {Code::kIo, std::move(m)}; }
inline Status ParseError(std::string m) { return {Code::kParse, std::move(m)}; }
inline Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status Timeout(std::string m) { return {Code::kTimeout, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

// A value or an error Status. Accessing value() of an error is a programmer error.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(v_).ok()) {
      std::fprintf(stderr, "kiln: internal error: Result constructed from an ok Status\n");
      std::abort();
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    Check();
    return std::get<T>(v_);
  }
  const T& value() const& {
    Check();
    return std::get<T>(v_);
  }
  T&& value() && {
    Check();
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!ok()) {
      std::fprintf(stderr, "kiln: internal error: value() of an error Result: %s\n",
                   std::get<Status>(v_).message().c_str());
      std::abort();
    }
  }
  std::variant<T, Status> v_;
};

}  // namespace kiln

#define KILN_CHECK(cond, msg)                                                                           \
  do {                                                                                                  \
    if (!(cond)) {                                                                                      \
      std::fprintf(stderr, "kiln: internal error at %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond); \
      std::abort();                                                                                     \
    }                                                                                                   \
  } while (0)

#define KILN_RETURN_IF_ERROR(expr) \
  do {                             \
    ::kiln::Status _st = (expr);   \
    if (!_st.ok()) return _st;     \
  } while (0)

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)
#define KILN_ASSIGN_OR_RETURN(lhs, expr)                                                \
  auto KILN_CONCAT(_res_, __LINE__) = (expr);                                           \
  if (!KILN_CONCAT(_res_, __LINE__).ok()) return KILN_CONCAT(_res_, __LINE__).status(); \
  lhs = std::move(KILN_CONCAT(_res_, __LINE__)).value()
