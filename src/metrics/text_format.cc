#include "brokerd/metrics/text_format.h"

#include <fmt/format.h>

#include <cmath>

namespace brokerd::metrics {

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Counters and sizes are integers; print them without an exponent while exact.
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

void TextWriter::family(std::string_view name, std::string_view help, std::string_view type) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += escape_help(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void TextWriter::labels(std::span<const Label> labels, std::string_view le) {
  if (labels.empty() && le.empty()) return;
  out_ += '{';
  bool first = true;
  for (const auto& l : labels) {
    if (!first) out_ += ',';
    first = false;
    out_ += l.name;
    out_ += "=\"";
    out_ += escape_label_value(l.value);
    out_ += '"';
  }
  if (!le.empty()) {
    if (!first) out_ += ',';
    out_ += "le=\"";
    out_ += le;
    out_ += '"';
  }
  out_ += '}';
}

void TextWriter::sample(std::string_view name, std::span<const Label> ls, double value) {
  out_ += name;
  labels(ls);
  out_ += ' ';
  out_ += format_value(value);
  out_ += '\n';
}

void TextWriter::histogram(std::string_view name, std::span<const Label> ls, const HistogramSnapshot& h) {
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= h.bounds.size(); ++i) {
    cumulative += i < h.counts.size() ? h.counts[i] : 0;
    out_ += bucket;
    labels(ls, i < h.bounds.size() ? format_value(h.bounds[i]) : std::string("+Inf"));
    out_ += ' ';
    out_ += format_value(static_cast<double>(cumulative));
    out_ += '\n';
  }
  sample(std::string(name) + "_sum", ls, h.sum);
  sample(std::string(name) + "_count", ls, static_cast<double>(cumulative));
}

}  // namespace brokerd::metrics
