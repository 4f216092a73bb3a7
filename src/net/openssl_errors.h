#pragma once
// OpenSSL's queued errors as one line ("error:...; error:..."), the queue emptied; empty when
// there were none.
#include <string>

namespace brokerd::net {

std::string openssl_errors();

}  // namespace brokerd::net
