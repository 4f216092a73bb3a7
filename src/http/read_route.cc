// GET /v1/topics/{topic}/partitions/{p}/records?offset=&max_bytes=&wait_ms=&encoding=: one
// partition read through this node's Fetch path (a long poll woken by the next append), or
// through its leader's when another node leads it. Records at or after `offset`, up to the
// high watermark; control batches are not records.

#include "brokerd/auth/base64.h"
#include "brokerd/common/json_text.h"
#include "brokerd/protocol/messages/fetch_request.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "brokerd/storage/record_batch.h"
#include "http/api_routes.h"

namespace brokerd::http {

namespace asio = boost::asio;

namespace {

constexpr int64_t kDefaultMaxBytes = 1 << 20;

bool valid_utf8(std::span<const std::byte> bytes) {
  size_t i = 0;
  const size_t n = bytes.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    size_t extra = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= n) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(bytes[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((extra == 1 && cp < 0x80) || (extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += extra + 1;
  }
  return true;
}

// A key, value or header value as the reader asked for it, appended to the reply: null, a
// JSON string of the text, or of its base64; false when it is not UTF-8 text.
bool append_bytes(std::string& out, const std::optional<std::span<const std::byte>>& bytes, bool base64) {
  if (!bytes) {
    out += "null";
    return true;
  }
  std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  out += '"';
  if (base64) {
    auth::base64_append(out, text);
  } else {
    if (!valid_utf8(*bytes)) return false;
    append_json_escaped(out, text);
  }
  out += '"';
  return true;
}

}  // namespace

asio::awaitable<Reply> read_records(ApiContext& ctx, Call& call, const std::string& topic, int32_t partition,
                                    const Query& query) {
  std::string error;
  auto offset = query.integer("offset", 0, INT64_MAX, error);
  auto max_bytes = query.integer("max_bytes", 1, INT32_MAX, error);
  auto wait_ms = query.integer("wait_ms", 0, ctx.request_timeout_ms, error);
  if (!error.empty()) co_return bad_request(error);
  const auto encoding = query.text("encoding");
  if (encoding && *encoding != "base64" && *encoding != "utf8")
    co_return bad_request("unknown encoding \"" + std::string(*encoding) + "\": base64 or utf8");
  const bool base64 = encoding && *encoding == "base64";

  protocol::FetchRequest req;
  req.replica_id = -1;
  req.max_wait_ms = static_cast<int32_t>(wait_ms.value_or(0));
  req.min_bytes = 1;
  req.max_bytes = static_cast<int32_t>(max_bytes.value_or(kDefaultMaxBytes));
  req.isolation_level = 0;
  req.session_id = 0;
  req.session_epoch = -1;
  auto& t = req.topics.emplace_back();
  t.topic = topic;
  auto& p = t.partitions.emplace_back();
  p.partition = partition;
  p.fetch_offset = offset.value_or(0);
  p.partition_max_bytes = req.max_bytes;

  auto resp = co_await ctx.kafka.here<protocol::FetchResponse>(call.connection, req, kFetchVersion);
  auto answer_of = [&](const protocol::FetchResponse& r) -> const protocol::FetchResponse::PartitionData* {
    if (r.responses.size() != 1 || r.responses.front().partitions.size() != 1) return nullptr;
    return &r.responses.front().partitions.front();
  };
  const auto* data = answer_of(resp);
  if (!data) co_return error_reply(static_cast<ErrorCode>(resp.error_code ? resp.error_code : -1), "the read failed");
  std::optional<protocol::FetchResponse> forwarded;
  if (static_cast<ErrorCode>(data->error_code) == ErrorCode::not_leader_or_follower) {
    // Authorized here; led elsewhere.
    auto described = co_await describe_topic(ctx, call, topic);
    if (auto* r = std::get_if<Reply>(&described)) co_return std::move(*r);
    int32_t leader = -1;
    for (const auto& mp : std::get<protocol::MetadataResponse::MetadataResponseTopic>(described).partitions)
      if (mp.partition_index == partition) leader = mp.leader_id;
    if (leader < 0 || leader == ctx.node_id)
      co_return error_reply(ErrorCode::leader_not_available, "partition " + std::to_string(partition) + " has no leader now");
    forwarded = co_await ctx.kafka.at<protocol::FetchResponse>(leader, req, kFetchVersion,
                                                              req.max_wait_ms + ctx.request_timeout_ms);
    if (!forwarded)
      co_return error_reply(ErrorCode::request_timed_out, "the leader (node " + std::to_string(leader) + ") did not answer");
    data = answer_of(*forwarded);
    if (!data) co_return error_reply(ErrorCode::unknown_server_error, "the leader's answer names no partition");
  }
  mute_for(ctx, call.connection, resp.throttle_time_ms);
  const auto code = static_cast<ErrorCode>(data->error_code);
  if (code == ErrorCode::unknown_topic_or_partition)
    co_return not_found("topic " + topic + " has no partition " + std::to_string(partition));
  if (code == ErrorCode::offset_out_of_range) {
    Reply r = error_reply(code, "offset " + std::to_string(p.fetch_offset) + " is outside [" +
                                    std::to_string(data->log_start_offset) + ", " + std::to_string(data->high_watermark) + "]");
    co_return r;
  }
  if (code != ErrorCode::none) co_return error_reply(code, "reading " + topic + "-" + std::to_string(partition));

  // The reply is written as it is read: a record becomes its JSON at once, without a
  // document in between (a 1 MiB read is about a thousand records).
  // Decoded from one buffer, the records are one view of it; anything else is joined once.
  const auto& stored = data->records;
  Bytes joined;
  std::span<const std::byte> rest;
  if (stored.parts.size() == 1 && std::holds_alternative<SharedBytes>(stored.parts[0])) {
    rest = std::get<SharedBytes>(stored.parts[0]).data;
  } else {
    joined = stored.to_bytes();
    rest = joined;
  }
  std::string out;
  out.reserve(rest.size() * (base64 ? 4 : 1) / (base64 ? 3 : 1) + 256);
  out += "{\"records\":[";
  bool first = true;
  int64_t next_offset = p.fetch_offset;
  while (rest.size() >= storage::batch_layout::header_size) {
    storage::RecordBatchView batch(rest);
    if (batch.batch_length() <= 0 || batch.size() > rest.size()) break;  // a batch cut by max_bytes
    rest = rest.subspan(batch.size());
    if (batch.is_control()) {
      next_offset = std::max(next_offset, batch.next_offset());
      continue;
    }
    storage::RecordReader reader(batch);
    storage::Record rec;
    while (reader.next(rec)) {
      if (rec.offset < p.fetch_offset) continue;
      if (!first) out += ',';
      first = false;
      out += "{\"offset\":";
      out += std::to_string(rec.offset);
      out += ",\"timestamp\":";
      out += std::to_string(rec.timestamp);
      out += ",\"key\":";
      bool text_ok = append_bytes(out, rec.key, base64);
      out += ",\"value\":";
      text_ok = text_ok && append_bytes(out, rec.value, base64);
      out += ",\"headers\":[";
      for (size_t i = 0; i < rec.headers.size(); ++i) {
        if (i) out += ',';
        out += "{\"key\":";
        text_ok = text_ok && append_bytes(out, std::optional(rec.headers[i].key), false);
        out += ",\"value\":";
        text_ok = text_ok && append_bytes(out, rec.headers[i].value, base64);
        out += '}';
      }
      out += "]}";
      if (!text_ok)
        co_return bad_request("the record at offset " + std::to_string(rec.offset) +
                              " is not UTF-8 text: read with ?encoding=base64");
      next_offset = rec.offset + 1;
    }
    if (reader.error() != ErrorCode::none)
      co_return error_reply(reader.error(), "a stored batch could not be read");
    next_offset = std::max(next_offset, batch.next_offset());
  }
  out += "],\"latest_offset\":";
  out += std::to_string(data->high_watermark);
  out += ",\"next_offset\":";
  out += std::to_string(next_offset);
  out += '}';
  Reply reply;
  reply.body = std::move(out);
  co_return reply;
}

}  // namespace brokerd::http
