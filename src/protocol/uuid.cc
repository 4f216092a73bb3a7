#include "brokerd/protocol/uuid.h"

#include <random>

namespace brokerd::protocol {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

}  // namespace

Uuid Uuid::random() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  Uuid metadata_topic_id;
  metadata_topic_id.bytes[15] = 1;
  for (;;) {
    Uuid u;
    for (int i = 0; i < 2; ++i) {
      uint64_t v = rng();
      for (int j = 0; j < 8; ++j) u.bytes[i * 8 + j] = static_cast<uint8_t>(v >> (8 * j));
    }
    u.bytes[6] = static_cast<uint8_t>((u.bytes[6] & 0x0f) | 0x40);  // version 4
    u.bytes[8] = static_cast<uint8_t>((u.bytes[8] & 0x3f) | 0x80);  // IETF variant
    if (u.is_zero() || u == metadata_topic_id) continue;
    if (u.to_string()[0] == '-') continue;
    return u;
  }
}

std::string Uuid::to_string() const {
  std::string out;
  out.reserve(22);
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 0x3f]);
  return out;
}

std::optional<Uuid> Uuid::from_string(std::string_view text) {
  if (text.size() != 22) return std::nullopt;
  Uuid u;
  uint32_t acc = 0;
  int bits = 0;
  size_t out = 0;
  for (char c : text) {
    int v = decode_char(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (out < 16) u.bytes[out++] = static_cast<uint8_t>(acc >> bits);
    }
  }
  // The last character carries 2 padding bits that must be zero for a canonical form.
  if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return u;
}

}  // namespace brokerd::protocol
