#include "producer_worker.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "stamp.h"

namespace loadgen {
namespace {

constexpr int flush_timeout_ms = 30000;

uint64_t next_random(uint64_t& state) {  // xorshift64*
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1DULL;
}

}  // namespace

ProducerWorker::ProducerWorker(const Options& o, int index, double rate, uint64_t limit)
    : _o(o), _index(index), _rate(rate), _limit(limit), _rng(0x9E3779B97F4A7C15ULL * uint64_t(index + 1)) {
  rd_kafka_conf_t* conf = make_conf(o, ClientKind::producer, fmt::format("brokerd-load-p{}", index));
  rd_kafka_conf_set_dr_msg_cb(conf, &ProducerWorker::on_delivery);
  rd_kafka_conf_set_opaque(conf, this);
  if (o.transactional()) {
    TxnControl::configure(conf, o, index);
    _txn = std::make_unique<TxnControl>(o);
  }
  _rk = make_client(conf, RD_KAFKA_PRODUCER);
  _rkt = rd_kafka_topic_new(_rk.get(), o.topic.c_str(), nullptr);
  // Text-like filler (36 symbols, ~5.2 bits of entropy a byte): compressible, but not
  // trivially, so compressed runs do real work.
  _value.resize(size_t(o.record_size));
  static constexpr char symbols[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (auto& c : _value) c = symbols[next_random(_rng) % 36];
}

ProducerWorker::~ProducerWorker() {
  if (_thread.joinable()) _thread.join();
  if (_rkt != nullptr) rd_kafka_topic_destroy(_rkt);
}

void ProducerWorker::start() { _thread = std::thread([this] { run(); }); }
void ProducerWorker::stop() { _stop.store(true, std::memory_order_relaxed); }
void ProducerWorker::join() {
  if (_thread.joinable()) _thread.join();
}

void ProducerWorker::on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<ProducerWorker*>(opaque);
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->_stats.error();
    // An aborted transaction's records fail with a purge error: the abort is reported.
    bool purged = msg->err == RD_KAFKA_RESP_ERR__PURGE_QUEUE || msg->err == RD_KAFKA_RESP_ERR__PURGE_INFLIGHT;
    if (self->_failure.empty() && !(purged && self->_txn)) self->_failure = rd_kafka_err2str(msg->err);
    return;
  }
  auto sent_ns = reinterpret_cast<intptr_t>(msg->_private);
  auto& stats = sent_ns < self->_measure_from_ns ? self->_warmup_stats : self->_stats;
  stats.record(msg->len + msg->key_len, (steady_ns() - sent_ns) / 1000);
}

bool ProducerWorker::send_one(rd_kafka_t* rk) {
  write_stamp(_value.data(), wall_clock_us());
  char key[24];
  size_t key_len = 0;
  if (_o.keys > 0) key_len = size_t(fmt::format_to(key, "k{}", next_random(_rng) % uint64_t(_o.keys)) - key);
  // The send time rides in the message's opaque and comes back in the delivery report.
  auto sent_ns = steady_ns();
  int rc = rd_kafka_produce(_rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, _value.data(), _value.size(),
                            key_len ? key : nullptr, key_len, reinterpret_cast<void*>(intptr_t(sent_ns)));
  if (rc == 0) return true;
  rd_kafka_resp_err_t err = rd_kafka_last_error();
  if (_txn && _txn->on_send_error(err)) return false;  // the transaction must end first
  if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
    _stats.error();
    if (_failure.empty()) _failure = rd_kafka_err2str(err);
  }
  return false;
}

void ProducerWorker::run() {
  rd_kafka_t* rk = _rk.get();
  bool ok = !_txn || _txn->start(rk);
  if (ok) ok = send_loop(rk);
  if (ok && _txn) ok = _txn->finish(rk);  // commits (and so flushes) the last transaction
  if (_txn && !_txn->failure().empty()) {
    // Fatal: nothing more will be delivered; fail what is queued at once.
    _failure = _txn->failure() + (_failure.empty() ? "" : "; first delivery error: " + _failure);
    rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  }
  if (rd_kafka_flush(rk, flush_timeout_ms) != RD_KAFKA_RESP_ERR_NO_ERROR && _failure.empty())
    _failure = fmt::format("{} records not delivered {} ms after the end", rd_kafka_outq_len(rk), flush_timeout_ms);
  _done.store(true, std::memory_order_release);
}

bool ProducerWorker::send_loop(rd_kafka_t* rk) {
  using clock = std::chrono::steady_clock;
  const auto begin = clock::now();
  uint64_t sent = 0;
  while (!_stop.load(std::memory_order_relaxed) && (_limit == 0 || sent < _limit)) {
    if (_txn && !_txn->turn(rk)) return false;  // commits a transaction whose time is up
    if (_rate <= 0) {
      // Unthrottled: keep the client's queue full; when it is, serve delivery reports.
      if (send_one(rk)) {
        if ((++sent & 63) == 0) rd_kafka_poll(rk, 0);
      } else if (!_txn || !_txn->must_end()) {
        rd_kafka_poll(rk, 1);
      }
      continue;
    }
    // Paced: send every record whose scheduled time has come, then sleep until the next.
    double elapsed = std::chrono::duration<double>(clock::now() - begin).count();
    auto due = uint64_t(elapsed * _rate);
    if (_limit > 0) due = std::min(due, _limit);
    while (sent < due && !_stop.load(std::memory_order_relaxed)) {
      if (send_one(rk)) ++sent;
      else if (_txn && _txn->must_end()) break;
      else rd_kafka_poll(rk, 1);
    }
    rd_kafka_poll(rk, 0);
    auto next = begin + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(double(sent + 1) / _rate));
    auto wait = next - clock::now();
    if (wait > std::chrono::microseconds(50)) {
      // Delivery reports are served while waiting; poll's resolution is 1 ms. A transaction
      // due to commit cuts the wait short.
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wait).count();
      ms = std::min<int64_t>(ms, 100);
      if (_txn) ms = std::min(ms, _txn->ms_until_due());
      if (ms >= 1) rd_kafka_poll(rk, int(ms));
      else if (!_txn || _txn->ms_until_due() > 0) std::this_thread::sleep_until(next);
    }
  }
  return true;
}

}  // namespace loadgen
