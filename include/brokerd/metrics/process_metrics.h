#pragma once
// The standard process_* metrics, read from /proc/self at scrape time.
#include <optional>
#include <string_view>

#include "brokerd/metrics/text_format.h"

namespace brokerd::metrics {

struct ProcessStats {
  double cpu_seconds = 0;        // user + system
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double open_fds = 0;
  double max_fds = 0;
  double start_time_seconds = 0; // since the Unix epoch
};

// Parses /proc/<pid>/stat text (the comm field may hold spaces and parentheses).
// ticks_per_second: sysconf(_SC_CLK_TCK); boot_time: btime from /proc/stat.
std::optional<ProcessStats> parse_proc_stat(std::string_view stat, double ticks_per_second, double boot_time,
                                            double page_size);

std::optional<ProcessStats> read_process_stats();
void write_process_metrics(TextWriter& out);

}  // namespace brokerd::metrics
