#include "brokerctl/output.h"

#include "brokerd/common/json_text.h"

#include <algorithm>
#include <cstdio>

namespace brokerctl {

Json& Json::set(std::string key, Json value) {
  std::get<Object>(v_).emplace_back(std::move(key), std::move(value));
  return *this;
}

Json& Json::push(Json value) {
  std::get<Array>(v_).push_back(std::move(value));
  return *this;
}

std::string json_escape(std::string_view s) {
  std::string out = "\"";
  brokerd::append_json_escaped(out, s);
  return out + "\"";
}

void Json::dump_to(std::string& out) const {
  struct Visitor {
    std::string& out;
    void operator()(std::monostate) { out += "null"; }
    void operator()(bool b) { out += b ? "true" : "false"; }
    void operator()(int64_t v) { out += std::to_string(v); }
    void operator()(const std::string& s) { out += json_escape(s); }
    void operator()(const Array& a) {
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += ',';
        a[i].dump_to(out);
      }
      out += ']';
    }
    void operator()(const Object& o) {
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += ',';
        out += json_escape(o[i].first);
        out += ':';
        o[i].second.dump_to(out);
      }
      out += '}';
    }
  };
  std::visit(Visitor{out}, v_);
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

std::string Table::render() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  };
  emit(header_);
  for (const auto& r : rows_) emit(r);
  return out;
}

void print_json(const Json& j) {
  std::string s = j.dump();
  s += '\n';
  std::fwrite(s.data(), 1, s.size(), stdout);
}

void print_text(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
}

std::string join(const std::vector<int32_t>& ids, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(ids[i]);
  }
  return out;
}

}  // namespace brokerctl
