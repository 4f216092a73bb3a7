#include "brokerd/metrics/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace brokerd::metrics {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double boot_time() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime") {
      in >> value;
      return value;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

std::optional<ProcessStats> parse_proc_stat(std::string_view stat, double ticks_per_second, double boot,
                                            double page_size) {
  // Fields after "(comm)" start at field 3 (state); the comm itself may contain ") ".
  auto close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;
  size_t i = close + 1;
  while (i < stat.size()) {
    while (i < stat.size() && stat[i] == ' ') ++i;
    size_t j = i;
    while (j < stat.size() && stat[j] != ' ' && stat[j] != '\n') ++j;
    if (j > i) fields.push_back(stat.substr(i, j - i));
    i = j + 1;
  }
  // fields[0] is field 3 of proc(5): utime is 14, stime 15, starttime 22, vsize 23, rss 24.
  auto field = [&](size_t n) -> double {
    if (n - 3 >= fields.size()) return 0;
    double v = 0;
    auto f = fields[n - 3];
    std::from_chars(f.data(), f.data() + f.size(), v);
    return v;
  };
  if (fields.size() < 22) return std::nullopt;
  ProcessStats s;
  s.cpu_seconds = (field(14) + field(15)) / ticks_per_second;
  s.start_time_seconds = boot + field(22) / ticks_per_second;
  s.virtual_bytes = field(23);
  s.resident_bytes = field(24) * page_size;
  return s;
}

std::optional<ProcessStats> read_process_stats() {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  static const double boot = boot_time();
  static const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  auto s = parse_proc_stat(read_file("/proc/self/stat"), ticks, boot, page);
  if (!s) return s;
  std::error_code ec;
  double fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++fds;
  s->open_fds = fds > 0 ? fds - 1 : 0;  // minus the descriptor of the listing itself
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) s->max_fds = static_cast<double>(rl.rlim_cur);
  return s;
}

void write_process_metrics(TextWriter& out) {
  auto s = read_process_stats();
  if (!s) return;
  out.family("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter");
  out.sample("process_cpu_seconds_total", {}, s->cpu_seconds);
  out.family("process_resident_memory_bytes", "Resident memory size in bytes.", "gauge");
  out.sample("process_resident_memory_bytes", {}, s->resident_bytes);
  out.family("process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge");
  out.sample("process_virtual_memory_bytes", {}, s->virtual_bytes);
  out.family("process_open_fds", "Number of open file descriptors.", "gauge");
  out.sample("process_open_fds", {}, s->open_fds);
  out.family("process_max_fds", "Maximum number of open file descriptors.", "gauge");
  out.sample("process_max_fds", {}, s->max_fds);
  out.family("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge");
  out.sample("process_start_time_seconds", {}, s->start_time_seconds);
}

}  // namespace brokerd::metrics
