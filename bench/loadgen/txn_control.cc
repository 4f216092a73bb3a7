#include "txn_control.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "stamp.h"

namespace loadgen {
namespace {

constexpr int init_timeout_ms = 30000;
constexpr int max_attempts = 4;  // calls of one operation while it answers "retriable"

struct ErrorDeleter {
  void operator()(rd_kafka_error_t* e) const { rd_kafka_error_destroy(e); }
};
using Error = std::unique_ptr<rd_kafka_error_t, ErrorDeleter>;

// Calls `op` again while it fails with a retriable error (a time-out: the operation goes on
// in the background and the call resumes it), at most max_attempts times.
template <typename Op>
Error with_retries(Op op) {
  Error e(op());
  for (int attempt = 1; e && rd_kafka_error_is_retriable(e.get()) && attempt < max_attempts; ++attempt) e.reset(op());
  return e;
}

}  // namespace

void TxnControl::configure(rd_kafka_conf_t* conf, const Options& o, int index) {
  char err[512];
  auto id = fmt::format("{}-{}", o.transactional_id, index);
  if (rd_kafka_conf_set(conf, "transactional.id", id.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(fmt::format("librdkafka setting transactional.id={}: {}", id, err));
  }
}

TxnControl::TxnControl(const Options& o) : _interval_ns(int64_t(o.commit_interval_ms * 1e6)) {}

void TxnControl::fatal(const char* what, rd_kafka_error_t* error) {
  if (_failure.empty())
    _failure = fmt::format("{}: {}{}", what, error ? rd_kafka_error_string(error) : "unknown error",
                           error && rd_kafka_error_is_fatal(error) ? " (fatal)" : "");
}

bool TxnControl::start(rd_kafka_t* rk) {
  Error e = with_retries([&] { return rd_kafka_init_transactions(rk, init_timeout_ms); });
  if (e) {
    fatal("init_transactions", e.get());
    return false;
  }
  return begin(rk);
}

bool TxnControl::begin(rd_kafka_t* rk) {
  Error e(rd_kafka_begin_transaction(rk));
  if (e) {
    fatal("begin_transaction", e.get());
    return false;
  }
  _open = true;
  _must_end = false;
  _due_ns = steady_ns() + _interval_ns;
  return true;
}

TxnControl::Outcome TxnControl::commit(rd_kafka_t* rk) {
  _open = false;
  int64_t began = steady_ns();
  Error e = with_retries([&] { return rd_kafka_commit_transaction(rk, -1); });
  if (!e) {
    (began < _measure_from_ns ? _warmup_stats : _stats).commit((steady_ns() - began) / 1000);
    return Outcome::ok;
  }
  if (rd_kafka_error_txn_requires_abort(e.get())) {
    if (_abort_reason.empty()) _abort_reason = rd_kafka_error_string(e.get());
    return Outcome::aborted;
  }
  fatal("commit_transaction", e.get());
  return Outcome::fatal;
}

bool TxnControl::abort(rd_kafka_t* rk) {
  Error e = with_retries([&] { return rd_kafka_abort_transaction(rk, -1); });
  if (e) {
    fatal("abort_transaction", e.get());
    return false;
  }
  (steady_ns() < _measure_from_ns ? _warmup_stats : _stats).abort();
  return true;
}

bool TxnControl::turn(rd_kafka_t* rk) {
  if (!_must_end && steady_ns() < _due_ns) return true;
  switch (commit(rk)) {
    case Outcome::ok: break;
    case Outcome::aborted:
      if (!abort(rk)) return false;
      break;
    case Outcome::fatal: return false;
  }
  return begin(rk);
}

bool TxnControl::finish(rd_kafka_t* rk) {
  if (!_open) return true;
  switch (commit(rk)) {
    case Outcome::ok: return true;
    case Outcome::aborted: return abort(rk);
    case Outcome::fatal: return false;
  }
  return false;
}

bool TxnControl::on_send_error(rd_kafka_resp_err_t err) {
  // __STATE: the transaction is in its abortable error state and takes no more records;
  // __FATAL: the producer is done. Either way the commit call says which and what to do.
  if (err != RD_KAFKA_RESP_ERR__STATE && err != RD_KAFKA_RESP_ERR__FATAL) return false;
  _must_end = true;
  return true;
}

int64_t TxnControl::ms_until_due() const {
  if (_must_end) return 0;
  return std::max<int64_t>(0, (_due_ns - steady_ns() + 999999) / 1000000);  // rounded up
}

}  // namespace loadgen
