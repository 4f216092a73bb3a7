#pragma once
// The transactions of one transactional producer (--transactional-id): init_transactions,
// then begin, send for --commit-interval-ms, commit, begin again. Errors are handled as
// librdkafka documents them: retriable -> call again, abortable -> abort the transaction
// (its records fail with a purge error) and begin the next, fatal -> the worker stops.
// Used only on the producer's own thread; the figures go to TxnStats for the reporter.

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>

#include "options.h"
#include "stats.h"

namespace loadgen {

class TxnControl {
public:
  // Sets transactional.id PREFIX-index on a producer's configuration (before the handle is
  // made); throws if librdkafka refuses it.
  static void configure(rd_kafka_conf_t* conf, const Options& o, int index);

  explicit TxnControl(const Options& o);

  // Commits that start before `steady_ns` go to warmup_stats(), the rest to stats().
  void measure_from(int64_t steady_ns) { _measure_from_ns = steady_ns; }
  TxnStats& stats() { return _stats; }
  TxnStats& warmup_stats() { return _warmup_stats; }
  const std::string& failure() const { return _failure; }      // the fatal error, if any
  const std::string& abort_reason() const { return _abort_reason; }  // the first abortable error

  // init_transactions and the first begin. False: a fatal error, the worker stops.
  bool start(rd_kafka_t* rk);
  // Ends the transaction when its time is up or a send found it unusable, and begins the
  // next. False: a fatal error, the worker stops.
  bool turn(rd_kafka_t* rk);
  // Commits the open transaction at the end of the run. False on a fatal error.
  bool finish(rd_kafka_t* rk);
  // A send failed with `err`: true when that needs the transaction ended now (it is in an
  // abortable or fatal state), and turn() will do so.
  bool on_send_error(rd_kafka_resp_err_t err);
  // Milliseconds until the transaction is due to commit, rounded up (0 when due), for a
  // paced wait.
  int64_t ms_until_due() const;
  bool must_end() const { return _must_end; }

private:
  enum class Outcome { ok, aborted, fatal };
  Outcome commit(rd_kafka_t* rk);
  bool abort(rd_kafka_t* rk);
  bool begin(rd_kafka_t* rk);
  void fatal(const char* what, rd_kafka_error_t* error);

  int64_t _interval_ns;
  int64_t _due_ns = 0;       // when the open transaction is to be committed
  bool _open = false;
  bool _must_end = false;
  int64_t _measure_from_ns = 0;
  TxnStats _stats;
  TxnStats _warmup_stats;
  std::string _failure;
  std::string _abort_reason;
};

}  // namespace loadgen
