#pragma once
// The Prometheus text exposition format (version 0.0.4): what a scrape of /metrics returns.
// A family is written as "# HELP", "# TYPE", then its samples, all together.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace brokerd::metrics {

inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

struct Label {
  std::string_view name;
  std::string_view value;
};

// Counts per bucket (not cumulative) for bounds[i], and a last one for +Inf.
struct HistogramSnapshot {
  std::span<const double> bounds;
  std::vector<uint64_t> counts;  // bounds.size() + 1
  double sum = 0;
};

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
std::string escape_label_value(std::string_view v);
std::string escape_help(std::string_view v);
// Integers exactly, otherwise the shortest round-trip form; +Inf, -Inf, NaN as Prometheus spells them.
std::string format_value(double v);

class TextWriter {
 public:
  // type: "counter", "gauge", "histogram" or "untyped".
  void family(std::string_view name, std::string_view help, std::string_view type);
  void sample(std::string_view name, std::span<const Label> labels, double value);
  void sample(std::string_view name, std::initializer_list<Label> labels, double value) {
    sample(name, std::span<const Label>(labels.begin(), labels.size()), value);
  }
  // name_bucket{...,le="b"} cumulative, then name_sum and name_count.
  void histogram(std::string_view name, std::span<const Label> labels, const HistogramSnapshot& h);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void labels(std::span<const Label> labels, std::string_view le = {});
  std::string out_;
};

}  // namespace brokerd::metrics
