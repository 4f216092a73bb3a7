#include "report.h"

#include <fmt/core.h>

#include <cstdio>

namespace loadgen {
namespace {

constexpr double mb = 1e6;  // MB/s means 10^6 bytes of keys and values per second

double ms(uint64_t us) { return double(us) / 1000.0; }
double per_s(uint64_t n, double seconds) { return seconds > 0 ? double(n) / seconds : 0.0; }

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", int(c));
    else out += c;
  }
  return out + "\"";
}

std::string json_latency(const Histogram& h) {
  return fmt::format(R"({{"count": {}, "p50": {:.3f}, "p99": {:.3f}, "p99_9": {:.3f}, "max": {:.3f}, "mean": {:.3f}}})",
                     h.count(), ms(h.percentile(50)), ms(h.percentile(99)), ms(h.percentile(99.9)), ms(h.max()),
                     h.mean() / 1000.0);
}

std::string json_side(const Interval& i, double seconds, const char* latency_name) {
  return fmt::format(
      R"({{"records": {}, "bytes": {}, "errors": {}, "seconds": {:.3f}, "records_per_s": {:.1f}, "mb_per_s": {:.3f}, "{}": {}}})",
      i.records, i.bytes, i.errors, seconds, per_s(i.records, seconds), per_s(i.bytes, seconds) / mb, latency_name,
      json_latency(i.latency_us));
}

std::string json_txn(const Options& o, const RunResult& r) {
  if (!o.transactional() || !o.producing()) return "null";
  return fmt::format(R"({{"commits": {}, "aborts": {}, "commits_per_s": {:.1f}, "commit_latency_ms": {}}})",
                     r.txn.commits, r.txn.aborts, per_s(r.txn.commits, r.produce_seconds), json_latency(r.txn.commit_us));
}

void text_latency(const char* what, const Histogram& h) {
  if (h.count() == 0) {
    fmt::print("  {:<22} no samples\n", what);
    return;
  }
  fmt::print("  {:<22} p50 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  max {:.3f} ms  (mean {:.3f}, {} samples)\n", what,
             ms(h.percentile(50)), ms(h.percentile(99)), ms(h.percentile(99.9)), ms(h.max()), h.mean() / 1000.0,
             h.count());
}

}  // namespace

void print_progress(double at_s, double interval_s, const Options& o, const Interval& p, const Interval& c,
                    const TxnInterval& t) {
  std::string line = fmt::format("[{:6.1f}s]", at_s);
  if (o.producing())
    line += fmt::format(" produce {:9.0f} rec/s {:8.2f} MB/s lat p50 {:7.2f} p99 {:8.2f} ms",
                        per_s(p.records, interval_s), per_s(p.bytes, interval_s) / mb, ms(p.latency_us.percentile(50)),
                        ms(p.latency_us.percentile(99)));
  if (o.producing() && o.transactional())
    line += fmt::format(" | commits {:4d} p99 {:7.2f} ms{}", t.commits, ms(t.commit_us.percentile(99)),
                        t.aborts ? fmt::format(" aborts {}", t.aborts) : std::string());
  if (o.consuming())
    line += fmt::format(" | consume {:9.0f} rec/s {:8.2f} MB/s e2e p50 {:7.2f} p99 {:8.2f} ms",
                        per_s(c.records, interval_s), per_s(c.bytes, interval_s) / mb, ms(c.latency_us.percentile(50)),
                        ms(c.latency_us.percentile(99)));
  if (p.errors + c.errors > 0) line += fmt::format(" | errors {}", p.errors + c.errors);
  std::fprintf(stderr, "%s\n", line.c_str());
}

void print_text(const Options& o, const RunResult& r) {
  fmt::print("workload {}: topic {} ({} partitions), {} producers, {} consumers, {} B records, {} keys, acks={}, "
             "compression={}, rate {}, {} s (warm-up {} s)\n",
             o.workload_name.empty() ? "(flags)" : o.workload_name, o.topic, r.partitions, o.producing() ? o.producers : 0,
             o.consuming() ? o.consumers : 0, o.record_size, o.keys, o.acks, o.compression,
             o.rate > 0 ? fmt::format("{:.0f} rec/s", o.rate) : std::string("unthrottled"), o.duration_s, o.warmup_s);
  if (r.group_served) fmt::print("group {}: {}\n", o.group, *r.group_served ? "served" : "NOT served: " + r.group_detail);
  if (o.producing()) {
    fmt::print("produced {} records in {:.2f} s: {:.0f} records/s, {:.2f} MB/s, {} errors\n", r.produce.records,
               r.produce_seconds, per_s(r.produce.records, r.produce_seconds),
               per_s(r.produce.bytes, r.produce_seconds) / mb, r.produce.errors);
    text_latency("produce latency", r.produce.latency_us);
    if (o.transactional()) {
      fmt::print("transactions ({}-N, {:g} ms each): {} committed ({:.1f}/s), {} aborted\n", o.transactional_id,
                 o.commit_interval_ms, r.txn.commits, per_s(r.txn.commits, r.produce_seconds), r.txn.aborts);
      text_latency("commit latency", r.txn.commit_us);
    }
  }
  if (o.consuming()) {
    fmt::print("consumed {} records in {:.2f} s: {:.0f} records/s, {:.2f} MB/s, {} errors\n", r.consume.records,
               r.consume_seconds, per_s(r.consume.records, r.consume_seconds),
               per_s(r.consume.bytes, r.consume_seconds) / mb, r.consume.errors);
    text_latency("end-to-end latency", r.consume.latency_us);
  }
  for (const auto& f : r.failures) fmt::print("error: {}\n", f);
  for (const auto& a : r.abort_reasons) fmt::print("aborted: {}\n", a);
}

void print_json(const Options& o, const RunResult& r) {
  std::string failures;
  for (const auto& f : r.failures) failures += (failures.empty() ? "" : ", ") + json_string(f);
  std::string aborts;
  for (const auto& a : r.abort_reasons) aborts += (aborts.empty() ? "" : ", ") + json_string(a);
  fmt::print(
      R"({{"workload": {}, "mode": "{}", "bootstrap": {}, "topic": {}, "partitions": {}, "producers": {}, )"
      R"("consumers": {}, "record_size": {}, "keys": {}, "acks": "{}", "compression": "{}", "target_rate": {}, )"
      R"("duration_s": {}, "warmup_s": {}, "group": {}, "group_served": {}, "produce": {}, "consume": {}, )"
      R"("transactional_id": {}, "commit_interval_ms": {}, "transactions": {}, "failures": [{}], "abort_reasons": [{}]}})"
      "\n",
      json_string(o.workload_name), mode_name(o.mode), json_string(o.bootstrap), json_string(o.topic), r.partitions,
      o.producing() ? o.producers : 0, o.consuming() ? o.consumers : 0, o.record_size, o.keys, o.acks, o.compression,
      o.rate, o.duration_s, o.warmup_s, o.group.empty() ? "null" : json_string(o.group),
      r.group_served ? (*r.group_served ? "true" : "false") : "null",
      o.producing() ? json_side(r.produce, r.produce_seconds, "latency_ms") : "null",
      o.consuming() ? json_side(r.consume, r.consume_seconds, "e2e_latency_ms") : "null",
      o.transactional() ? json_string(o.transactional_id) : "null", o.commit_interval_ms, json_txn(o, r), failures,
      aborts);
}

}  // namespace loadgen
