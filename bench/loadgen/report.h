#pragma once
// What a run prints: a progress line per second, and the final figures as text or JSON.

#include <optional>
#include <string>
#include <vector>

#include "options.h"
#include "stats.h"

namespace loadgen {

struct RunResult {
  int partitions = 0;
  std::optional<bool> group_served;  // set when --group was asked for
  std::string group_detail;
  Interval produce;                  // after the warm-up
  Interval consume;
  TxnInterval txn;                   // transactional producers, after the warm-up
  double produce_seconds = 0;        // measured window of each side
  double consume_seconds = 0;
  std::vector<std::string> failures; // first error of each worker that had one
  std::vector<std::string> abort_reasons;  // first abortable error of each transactional producer that had one
};

void print_progress(double at_s, double interval_s, const Options& o, const Interval& produce,
                    const Interval& consume, const TxnInterval& txn);
void print_text(const Options& o, const RunResult& r);
void print_json(const Options& o, const RunResult& r);

}  // namespace loadgen
