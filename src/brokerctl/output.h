#pragma once
// What brokerctl prints: aligned tables for people, JSON for scripts.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace brokerctl {

enum class OutputFormat { table, json };

// A JSON value; objects keep their keys in insertion order so output reads naturally.
class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int v) : v_(int64_t(v)) {}
  Json(int64_t v) : v_(v) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  template <typename T>
  Json(const std::optional<T>& o) { if (o) *this = Json(*o); }

  static Json array() { Json j; j.v_ = Array{}; return j; }
  static Json object() { Json j; j.v_ = Object{}; return j; }

  // Object member (added at the end) and array append.
  Json& set(std::string key, Json value);
  Json& push(Json value);

  std::string dump() const;

 private:
  void dump_to(std::string& out) const;
  std::variant<std::monostate, bool, int64_t, std::string, Array, Object> v_;
};

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Columns padded to their widest cell, two spaces apart.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

void print_json(const Json& j);
void print_text(std::string_view text);  // adds a newline if missing

std::string join(const std::vector<int32_t>& ids, std::string_view sep = ",");
std::string json_escape(std::string_view s);

}  // namespace brokerctl
