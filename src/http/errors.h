#pragma once
// Kafka's error codes as the /v1 API answers them: the HTTP status of each, and the JSON error
// body {"error_code", "error" (Kafka's name in lower case), "message"}.
#include <string>
#include <string_view>

#include "brokerd/http/routes.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::http {

using protocol::ErrorCode;

unsigned status_of(ErrorCode code);
// "offset_out_of_range"
std::string json_error_name(ErrorCode code);

// The reply for `code`; a 503 or 429 carries Retry-After (seconds, at least 1).
Reply error_reply(ErrorCode code, std::string_view message, int retry_after_s = 1);
// 400 invalid_request: what the request got wrong (bad JSON, a wrong type, a bad parameter).
Reply bad_request(std::string_view message);
Reply not_found(std::string_view message);

}  // namespace brokerd::http
