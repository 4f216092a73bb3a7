#include "brokerd/auth/base64.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <climits>
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
