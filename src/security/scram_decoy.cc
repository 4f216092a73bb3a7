#include "brokerd/security/scram_decoy.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "brokerd/auth/base64.h"
#include "brokerd/config/broker_config.h"

namespace brokerd::security {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr std::string_view kFileName = "scram-decoy.key";
// Keeps this key apart from the secret's other use (sealing passwords).
constexpr std::string_view kLabel = "brokerd SCRAM decoy salt key";

std::string derived_key(const std::string& secret) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
            reinterpret_cast<const unsigned char*>(kLabel.data()), kLabel.size(),
            reinterpret_cast<unsigned char*>(out.data()), &len))
    throw std::runtime_error("SCRAM decoy key: HMAC failed");
  out.resize(len);
  return out;
}

std::string kept_key(const std::filesystem::path& dir) {
  const auto file = dir / kFileName;
  {
    std::ifstream in(file, std::ios::binary);
    if (in) {
      std::string text(std::istreambuf_iterator<char>(in), {});
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      auto key = auth::base64_decode(text);
      if (!key || key->size() != kKeyBytes)
        throw std::runtime_error(fmt::format("{}: not a {}-byte base64 key", file.string(), kKeyBytes));
      return *key;
    }
  }
  const std::string key = auth::random_bytes(kKeyBytes);
  const std::string text = auth::base64_encode(key) + "\n";
  const auto tmp = dir / (std::string(kFileName) + ".tmp");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!written) throw std::runtime_error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)));
  std::filesystem::rename(tmp, file);
  return key;
}

}  // namespace

auth::ScramDecoy scram_decoy(const config::BrokerConfig& cfg, const std::filesystem::path& data_dir) {
  auth::ScramDecoy decoy;
  const std::string secret = cfg.raw("password.encoder.secret");
  decoy.key = secret.empty() ? kept_key(data_dir) : derived_key(secret);
  return decoy;
}

}  // namespace brokerd::security
