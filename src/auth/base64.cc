#include "brokerd/auth/base64.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <climits>
#include <cstdint>
#include <stdexcept>

namespace brokerd::auth {

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("no randomness available");
  return out;
}

std::string base64_encode(std::string_view in) {
  // EVP_EncodeBlock writes 4 characters per 3 bytes (padded) plus a NUL.
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Every 12-bit value as its two characters: three input bytes are two lookups.
struct PairTable {
  char pairs[4096][2];
  constexpr PairTable() : pairs() {
    for (int i = 0; i < 4096; ++i) {
      pairs[i][0] = kAlphabet[i >> 6];
      pairs[i][1] = kAlphabet[i & 63];
    }
  }
};
constexpr PairTable kPairs;

}  // namespace

void base64_append(std::string& out, std::string_view in) {
  const size_t start = out.size();
  out.resize(start + 4 * ((in.size() + 2) / 3));
  char* o = out.data() + start;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (uint32_t(p[i]) << 16) | (uint32_t(p[i + 1]) << 8) | uint32_t(p[i + 2]);
    const char* a = kPairs.pairs[v >> 12];
    const char* b = kPairs.pairs[v & 0xFFF];
    o[0] = a[0];
    o[1] = a[1];
    o[2] = b[0];
    o[3] = b[1];
    o += 4;
  }
  if (const size_t left = in.size() - i; left > 0) {
    const uint32_t v = (uint32_t(p[i]) << 16) | (left == 2 ? uint32_t(p[i + 1]) << 8 : 0u);
    o[0] = kAlphabet[(v >> 18) & 63];
    o[1] = kAlphabet[(v >> 12) & 63];
    o[2] = left == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    o[3] = '=';
  }
}

static bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// Strict: EVP_DecodeBlock skips whitespace and counts padding as zero bytes, so we check the
// alphabet and padding ourselves and drop the padded bytes from its result.
std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0 || in.size() > INT_MAX) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < in.size() && in[in.size() - 1 - pad] == '=') ++pad;
  for (size_t i = 0; i < in.size() - pad; ++i)
    if (!is_base64_char(in[i])) return std::nullopt;
  if (in.empty()) return std::string();
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0 || static_cast<size_t>(n) != out.size()) return std::nullopt;
  out.resize(out.size() - pad);
  // Refuse non-zero unused bits in the last group: one value, one encoding.
  if (base64_encode(out) != in) return std::nullopt;
  return out;
}

}  // namespace brokerd::auth
