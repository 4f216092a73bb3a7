#include "brokerd/controller/controller_client.h"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/protocol/framing.h"

namespace brokerd::controller {

ControllerClient::ControllerClient(std::string client_id, int timeout_ms, security::ClientCredentials credentials)
    : client_id_(std::move(client_id)),
      timeout_ms_(timeout_ms),
      credentials_(std::move(credentials)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

ControllerClient::~ControllerClient() {
  close();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ControllerClient::interrupt() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] const auto n = ::write(wake_fd_, &one, sizeof one);
}

void ControllerClient::close() {
  stream_.reset();
  connected_to_ = -1;
}

bool ControllerClient::connect(const quorum::Voter& to) {
  if (stream_ && connected_to_ == to.id) return true;
  close();
  std::string error;
  stream_ = net::ClientStream::connect(to.host, static_cast<uint16_t>(to.port), timeout_ms_, credentials_.tls, error,
                                       wake_fd_);
  if (!stream_) {
    // A TLS refusal is worth an operator's attention; a node that is down is not news.
    if (credentials_.tls && error.starts_with("TLS")) note_refusal(error, fmt::format("node {}: {}", to.id, error));
    return false;
  }
  connected_to_ = to.id;
  if (!credentials_.enabled()) return true;
  auto refused = security::authenticate(credentials_, [this](int16_t api_key, int16_t version, const Bytes& body) {
    auto got = exchange(api_key, version, body);
    return got ? std::optional<Bytes>(std::in_place, got->data.begin(), got->data.end()) : std::nullopt;
  });
  if (!refused) return true;
  note_refusal(fmt::format("authentication to {}:{} failed: {}", to.host, to.port, *refused),
               fmt::format("authentication to node {} at {}:{} failed: {}", to.id, to.host, to.port, *refused));
  close();
  return false;
}

void ControllerClient::note_refusal(std::string why, const std::string& log_line) {
  refusal_ = std::move(why);
  // Callers retry every few hundred ms: the same refusal is logged again only after a while.
  const int64_t now = steady_clock_ms();
  if (refusal_ != last_refusal_ || now - last_refusal_ms_ > 60'000) {
    module_logger("security")->warn("{}", log_line);
    last_refusal_ = refusal_;
    last_refusal_ms_ = now;
  }
}

std::optional<SharedBytes> ControllerClient::call(const quorum::Voter& to, int16_t api_key, int16_t version,
                                                  const Bytes& body) {
  refusal_.clear();
  if (!connect(to)) return std::nullopt;
  return exchange(api_key, version, body);
}

std::shared_ptr<ControllerClient::Buffer> ControllerClient::buffer_for(size_t size) {
  if (spare_ && spare_.use_count() == 1) {
    // Pairs with the release in the last holder's decrement: its reads happen before our writes.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (spare_->capacity >= size) return spare_;
  }
  // Some slack, so that answers of slightly varying sizes reuse one buffer.
  const size_t capacity = std::max<size_t>((size + size / 8 + 4095) & ~size_t{4095}, 16 * 1024);
  auto fresh = std::make_shared<Buffer>();
  fresh->data = std::make_unique_for_overwrite<std::byte[]>(capacity);
  fresh->capacity = capacity;
  if (capacity <= kMaxKeptBuffer) spare_ = fresh;
  return fresh;
}

std::optional<SharedBytes> ControllerClient::exchange(int16_t api_key, int16_t version, const Bytes& body) {
  const int32_t correlation = ++correlation_;
  protocol::Writer w;
  protocol::encode_request_header(w, api_key, version, correlation, client_id_);
  w.raw(body);
  const Bytes frame_out = protocol::with_size_prefix(std::move(w).finish_bytes());
  if (!stream_->write_all(frame_out.data(), frame_out.size())) {
    close();
    return std::nullopt;
  }
  std::byte size_buf[4];
  if (!stream_->read_exact(size_buf, 4)) {
    close();
    return std::nullopt;
  }
  const uint32_t size = protocol::size_prefix(size_buf);
  if (size < 4 || size > (16u << 20)) {
    close();
    return std::nullopt;
  }
  auto buffer = buffer_for(size);
  if (!stream_->read_exact(buffer->data.get(), size)) {
    close();
    return std::nullopt;
  }
  const std::span<const std::byte> frame(buffer->data.get(), size);
  try {
    protocol::Reader r(frame);
    if (protocol::decode_response_header(r, api_key, version) != correlation) {
      close();
      return std::nullopt;
    }
    return SharedBytes{std::move(buffer), frame.subspan(r.position())};
  } catch (const protocol::DecodeError&) {
    close();
    return std::nullopt;
  }
}

}  // namespace brokerd::controller
