#pragma once
// OpenSSL's queued errors as one line ("error:...; error:..."), the queue emptied: the reason
// that ends a TLS error message, so "no reason given by OpenSSL" when none was queued.
#include <boost/system/error_code.hpp>

#include <string>

namespace brokerd::net {

std::string openssl_errors();

// The same after a Boost.Asio call that failed with `popped`: Asio takes the first queued
// error off the queue into the error_code, so it leads the line (e.g. "ca md too weak",
// OpenSSL 3's refusal of a SHA-1 signature at security level 2), then what is still queued.
std::string openssl_errors(const boost::system::error_code& popped);

}  // namespace brokerd::net
