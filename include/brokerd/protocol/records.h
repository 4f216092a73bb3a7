#pragma once
// The value of a `records` field: a record-batch byte stream that the codecs never copy.
// Decoded requests alias the request frame; fetch responses hold file slices for sendfile.
#include <variant>
#include <vector>

#include "brokerd/common/bytes.h"

namespace brokerd::protocol {

struct Records {
  using Part = std::variant<SharedBytes, FileSlice>;

  bool is_null = true;      // null and empty are distinct on the wire
  std::vector<Part> parts;  // concatenated in order

  static Records null_records() { return {}; }
  static Records of(SharedBytes b) { Records r; r.is_null = false; r.parts.emplace_back(std::move(b)); return r; }
  static Records empty() { Records r; r.is_null = false; return r; }

  size_t size() const {
    size_t n = 0;
    for (const auto& p : parts) n += std::visit([](const auto& v) { return byte_size(v); }, p);
    return n;
  }
  // Bytes of all parts, reading file slices with pread (tests and tools only).
  Bytes to_bytes() const;
  bool operator==(const Records& o) const;
};

}  // namespace brokerd::protocol
