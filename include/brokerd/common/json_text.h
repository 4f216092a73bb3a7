#pragma once
// Text as the inside of a JSON string (RFC 8259): quote, backslash and control characters
// escaped, everything else (UTF-8 included) copied as it is. For JSON written by hand where a
// document would cost more than the text (brokerctl's output, the HTTP API's reads).
#include <string>
#include <string_view>

namespace brokerd {

void append_json_escaped(std::string& out, std::string_view text);

}  // namespace brokerd
