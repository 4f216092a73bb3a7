#include "brokerd/quorum/voters.h"

#include <charconv>
#include <set>
#include <stdexcept>
#include <string_view>

namespace brokerd::quorum {

namespace {

template <typename T>
bool parse_int(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<Voter> parse_voters(const std::string& text) {
  std::vector<Voter> out;
  std::set<int32_t> ids;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (entry.empty()) continue;
    const size_t at = entry.find('@');
    const size_t colon = entry.rfind(':');
    Voter v;
    int32_t port = 0;
    if (at == std::string_view::npos || colon == std::string_view::npos || colon < at ||
        !parse_int(entry.substr(0, at), v.id) || v.id < 0 || !parse_int(entry.substr(colon + 1), port) ||
        port <= 0 || port > 65535 || colon == at + 1) {
      throw std::invalid_argument("'" + std::string(entry) + "' is not id@host:port");
    }
    v.host = std::string(entry.substr(at + 1, colon - at - 1));
    if (v.host.size() > 2 && v.host.front() == '[' && v.host.back() == ']') v.host = v.host.substr(1, v.host.size() - 2);
    v.port = static_cast<uint16_t>(port);
    if (!ids.insert(v.id).second) throw std::invalid_argument("voter id " + std::to_string(v.id) + " is listed twice");
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace brokerd::quorum
