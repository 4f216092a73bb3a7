#pragma once
// The framing of a coordinator's records in its internal topic (__consumer_offsets,
// __transaction_state): a key or value is a 2-byte version and then the message's fields at
// that version, and nothing after them.
#include <string>
#include <utility>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::protocol {

template <typename Msg>
Bytes versioned_record(int16_t version, const Msg& msg) {
  Writer w;
  w.i16(version);
  msg.encode(w, version);
  return std::move(w).finish_bytes();
}

// A record is exactly its fields: bytes after them mean it was not written as this version.
inline void expect_record_end(const Reader& r, const char* what) {
  if (r.remaining() != 0) throw DecodeError(std::to_string(r.remaining()) + " bytes after the fields of a " + what);
}

}  // namespace brokerd::protocol
