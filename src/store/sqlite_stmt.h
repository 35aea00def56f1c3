// kiln/store: internals shared by the store's source files (not part of its interface).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace kiln::store::internal {

// RAII prepared statement with 1-based binds.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &st_, nullptr); }
  ~Stmt() { sqlite3_finalize(st_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, const std::string& s) {
    sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Stmt& Bind(int i, std::optional<double> v) {
    if (v)
      sqlite3_bind_double(st_, i, *v);
    else
      sqlite3_bind_null(st_, i);
    return *this;
  }
  Stmt& BindD(int i, double v) {
    sqlite3_bind_double(st_, i, v);
    return *this;
  }
  int Step() { return sqlite3_step(st_); }
  std::string Text(int c) const {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), sqlite3_column_bytes(st_, c)) : "";
  }
  int64_t Int(int c) const { return sqlite3_column_int64(st_, c); }
  std::optional<double> Double(int c) const {
    if (sqlite3_column_type(st_, c) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(st_, c);
  }
  std::string Error() const { return sqlite3_errmsg(db_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  int rc_;
};

inline bool Busy(int rc) { return rc == SQLITE_BUSY || rc == SQLITE_LOCKED; }

// The error of a step that did not finish: kUnavailable while the database is busy or locked (so that
// Store::WithRetry tries again), kIo otherwise.
inline Status StepError(int rc, const Stmt& st) {
  return Status(Busy(rc) ? Code::kUnavailable : Code::kIo, st.Error());
}

// Steps a write to its end: ok when it is done, else StepError.
inline Status StepDone(Stmt& st) {
  int rc = st.Step();
  return rc == SQLITE_DONE ? Status::Ok() : StepError(rc, st);
}

inline constexpr const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

}  // namespace kiln::store::internal
