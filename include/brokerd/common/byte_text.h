#pragma once
// Kafka `bytes` fields that carry text or opaque secrets (SASL tokens, SCRAM salts and keys)
// as std::string, and back.
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "brokerd/common/bytes.h"

namespace brokerd {

inline std::string text_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

inline Bytes bytes_of(std::string_view s) {
  Bytes out(s.size());
  if (!s.empty()) std::memcpy(out.data(), s.data(), s.size());  // an empty vector's data() may be null
  return out;
}

}  // namespace brokerd
