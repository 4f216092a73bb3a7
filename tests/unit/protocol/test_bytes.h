#pragma once
// Byte-vector helpers for codec tests.
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "brokerd/common/bytes.h"

namespace brokerd::protocol::test {

inline Bytes bytes_of(std::initializer_list<int> values) {
  Bytes b;
  for (int v : values) b.push_back(static_cast<std::byte>(v));
  return b;
}

inline void append(Bytes& b, std::initializer_list<int> values) {
  for (int v : values) b.push_back(static_cast<std::byte>(v));
}

inline void append(Bytes& b, std::string_view s) {
  for (char c : s) b.push_back(static_cast<std::byte>(c));
}

inline void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

}  // namespace brokerd::protocol::test
