#include "openssl_errors.h"

#include <openssl/err.h>

namespace brokerd::net {

std::string openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no reason given by OpenSSL" : out;
}

}  // namespace brokerd::net
