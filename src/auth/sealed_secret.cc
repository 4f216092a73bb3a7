#include "brokerd/auth/sealed_secret.h"

#include <openssl/evp.h>

#include <memory>
#include <stdexcept>

#include "brokerd/auth/base64.h"

namespace brokerd::auth {
namespace {

constexpr std::string_view kPrefix = "sealed:v1:";
constexpr size_t kSalt = 16, kNonce = 12, kTag = 16, kKey = 32;
constexpr int kIterations = 4096;

using Cipher = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

std::string derive_key(std::string_view secret, std::string_view salt) {
  std::string key(kKey, '\0');
  if (PKCS5_PBKDF2_HMAC(secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), kIterations, EVP_sha256(), static_cast<int>(kKey),
                        reinterpret_cast<unsigned char*>(key.data())) != 1)
    throw std::runtime_error("sealing a secret: PBKDF2 failed");
  return key;
}

const unsigned char* u(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }
unsigned char* u(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

}  // namespace

bool is_sealed(std::string_view value) { return value.starts_with(kPrefix); }

std::string seal(std::string_view plain, std::string_view secret) {
  const std::string salt = random_bytes(kSalt), nonce = random_bytes(kNonce);
  const std::string key = derive_key(secret, salt);
  Cipher ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  std::string out(plain.size(), '\0'), tag(kTag, '\0');
  int n = 0, tail = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, u(key), u(nonce)) != 1 ||
      EVP_EncryptUpdate(ctx.get(), u(out), &n, u(plain), static_cast<int>(plain.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), u(out) + n, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTag), u(tag)) != 1)
    throw std::runtime_error("sealing a secret: AES-GCM failed");
  return std::string(kPrefix) + base64_encode(salt + nonce + out + tag);
}

std::optional<std::string> unseal(std::string_view sealed, std::string_view secret) {
  if (!is_sealed(sealed)) return std::nullopt;
  const auto raw = base64_decode(sealed.substr(kPrefix.size()));
  if (!raw || raw->size() < kSalt + kNonce + kTag) return std::nullopt;
  const std::string_view all(*raw);
  const auto salt = all.substr(0, kSalt), nonce = all.substr(kSalt, kNonce);
  const auto body = all.substr(kSalt + kNonce, all.size() - kSalt - kNonce - kTag);
  std::string tag(all.substr(all.size() - kTag));
  const std::string key = derive_key(secret, salt);
  Cipher ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  std::string out(body.size(), '\0');
  int n = 0, tail = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, u(key), u(nonce)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), u(out), &n, u(body), static_cast<int>(body.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTag), u(tag)) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), u(out) + n, &tail) != 1)
    return std::nullopt;  // the tag does not verify: another secret, or altered
  return out;
}

}  // namespace brokerd::auth
