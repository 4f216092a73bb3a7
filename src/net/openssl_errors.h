#pragma once
// OpenSSL's queued errors as one line ("error:...; error:..."), the queue emptied: the reason
// that ends a TLS error message, so "no reason given by OpenSSL" when none was queued.
#include <string>

namespace brokerd::net {

std::string openssl_errors();

}  // namespace brokerd::net
