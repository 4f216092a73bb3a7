#include "openssl_errors.h"

#include <openssl/err.h>

#include <boost/asio/ssl/error.hpp>

namespace brokerd::net {
namespace {

void append(std::string& out, unsigned long e) {
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  if (!out.empty()) out += "; ";
  out += buf;
}

std::string queued(std::string out) {
  while (unsigned long e = ERR_get_error()) append(out, e);
  return out.empty() ? "no reason given by OpenSSL" : out;
}

}  // namespace

std::string openssl_errors() { return queued({}); }

std::string openssl_errors(const boost::system::error_code& popped) {
  std::string out;
  if (popped && popped.category() == boost::asio::error::get_ssl_category()) {
    // Asio keeps OpenSSL's packed code as an int; OpenSSL 3's codes fit in 31 bits.
    append(out, static_cast<unsigned long>(static_cast<unsigned int>(popped.value())));
  } else if (popped) {
    out = popped.message();
  }
  return queued(std::move(out));
}

}  // namespace brokerd::net
