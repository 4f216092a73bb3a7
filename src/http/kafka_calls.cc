#include "http/kafka_calls.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <variant>

#include "brokerd/net/request.h"
#include "http/node_links.h"

namespace brokerd::http {

namespace asio = boost::asio;

namespace {

constexpr std::string_view kClientId = "brokerd-http";

// The response's bytes in one buffer (not zeroed first: every byte is written): file ranges
// (a fetch's records) are read here. The read path has already brought cold ranges into the
// page cache off the reactor.
SharedBytes flatten(const std::vector<OutChunk>& chunks) {
  size_t total = 0;
  for (const auto& c : chunks) total += chunk_size(c);
  std::shared_ptr<std::byte[]> buffer = std::make_unique_for_overwrite<std::byte[]>(total);
  std::byte* out = buffer.get();
  size_t at = 0;
  for (const auto& c : chunks) {
    if (const auto* b = std::get_if<Bytes>(&c)) {
      std::memcpy(out + at, b->data(), b->size());
      at += b->size();
    } else if (const auto* s = std::get_if<SharedBytes>(&c)) {
      std::memcpy(out + at, s->data.data(), s->size());
      at += s->size();
    } else {
      const auto& f = std::get<FileSlice>(c);
      size_t done = 0;
      while (done < f.size) {
        const ssize_t n = ::pread(f.file->fd(), out + at + done, f.size - done,
                                  static_cast<off_t>(f.position + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error(std::string("reading a log segment: ") + (n < 0 ? std::strerror(errno) : "short file"));
        done += static_cast<size_t>(n);
      }
      at += f.size;
    }
  }
  return SharedBytes{buffer, std::span<const std::byte>(out, total)};
}

}  // namespace

asio::awaitable<SharedBytes> KafkaCalls::here(net::ConnectionContext& connection, int16_t api_key, int16_t version,
                                        Bytes body) {
  protocol::Writer w;
  protocol::encode_request_header(w, api_key, version, 0, kClientId);
  const size_t header_end = 2 + 2 + 4 + 2 + kClientId.size();
  auto frame = std::make_shared<Bytes>(std::move(w).finish_bytes());
  frame->insert(frame->end(), body.begin(), body.end());
  net::Request req;
  req.api_key = api_key;
  req.api_version = version;
  req.correlation_id = 0;
  req.client_id = std::string(kClientId);
  req.frame = SharedBytes{frame, std::span<const std::byte>(frame->data(), frame->size())};
  req.header_end = header_end;
  req.connection = &connection;
  net::Response res = co_await local_.dispatch(std::move(req));
  if (!res.send || res.chunks.empty()) throw std::runtime_error("the request was refused");
  SharedBytes whole = flatten(res.chunks);
  protocol::Reader r(whole.data);
  protocol::decode_response_header(r, api_key, version);
  co_return SharedBytes{whole.owner, whole.data.subspan(whole.size() - r.remaining())};
}

asio::awaitable<std::optional<Bytes>> KafkaCalls::at(int32_t node, int16_t api_key, int16_t version, Bytes body,
                                                     int64_t timeout_ms) {
  co_return co_await links_.call(node, api_key, version, std::move(body), timeout_ms);
}

}  // namespace brokerd::http
