// DeleteTopics: by name (all versions) or by topic id (v6+). Deletions are written in one
// pass off the reactor; the answer goes once the partition logs are gone.
#include <fmt/format.h>

#include <map>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/config/broker_config.h"
#include "kafka/handlers/config_resources.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/delete_topics_request.h"
#include "brokerd/protocol/messages/delete_topics_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"
#include "kafka/quotas.h"

namespace brokerd::kafka {
namespace {

using protocol::DeleteTopicsRequest;
using protocol::DeleteTopicsResponse;
using protocol::ErrorCode;

struct Entry {
  std::optional<std::string> name;  // as asked, or resolved from the id
  protocol::Uuid id;
  bool by_id = false;
  ErrorCode error = ErrorCode::none;
  std::string message;
};

}  // namespace

boost::asio::awaitable<net::Response> handle_delete_topics(HandlerContext& ctx) {
  auto req = ctx.decode<DeleteTopicsRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();

  std::vector<Entry> entries;
  if (ctx.version < 6) {
    for (const auto& n : req.topic_names) {
      Entry e;
      e.name = n;
      entries.push_back(std::move(e));
    }
  } else {
    for (const auto& t : req.topics) {
      Entry e;
      e.name = t.name;
      e.id = t.topic_id;
      e.by_id = !t.name.has_value();
      if (t.name && !t.topic_id.is_zero()) {
        e.error = ErrorCode::invalid_request;
        e.message = "Topic name and topic id can not both be specified.";
      }
      entries.push_back(std::move(e));
    }
  }

  const bool enabled = broker_setting(svc, "delete.topic.enable") == "true";
  std::map<std::string, int> name_count;
  std::map<protocol::Uuid, int> id_count;
  for (const auto& e : entries) e.by_id ? ++id_count[e.id] : ++name_count[e.name.value_or("")];

  std::vector<size_t> to_delete;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto& e = entries[i];
    if (e.error != ErrorCode::none) continue;
    if (!enabled) {
      // Before v3 clients do not know TOPIC_DELETION_DISABLED.
      e.error = ctx.version < 3 ? ErrorCode::invalid_request : ErrorCode::topic_deletion_disabled;
      e.message = "Topic deletion is disabled.";
      continue;
    }
    if (e.by_id ? id_count[e.id] > 1 : name_count[*e.name] > 1) {
      e.error = ErrorCode::invalid_request;
      e.message = e.by_id ? "Duplicate topic id." : "Duplicate topic name.";
      continue;
    }
    const metadata::TopicMetadata* t = e.by_id ? image->topic(e.id) : image->topic(*e.name);
    // DELETE on the topic; a topic asked by name is refused before saying whether it exists.
    if ((t || !e.by_id) && !authorized_topic(ctx, acl::Operation::remove, t ? t->name : *e.name)) {
      e.error = ErrorCode::topic_authorization_failed;
      e.message = "Not authorized to delete this topic.";
      continue;
    }
    if (!t) {
      e.error = e.by_id ? ErrorCode::unknown_topic_id : ErrorCode::unknown_topic_or_partition;
      e.message = e.by_id ? "This server does not host this topic ID." : "This server does not host this topic-partition.";
      continue;
    }
    e.name = t->name;
    e.id = t->id;
    if (metadata::is_internal_topic(t->name)) {
      // The broker's own topics (group offsets, ...) hold state it cannot rebuild.
      e.error = ErrorCode::invalid_topic_exception;
      e.message = fmt::format("Topic '{}' is internal and cannot be deleted.", t->name);
      continue;
    }
    to_delete.push_back(i);
  }
  // The same topic named once and given once by id.
  std::map<std::string, int> targets;
  for (size_t i : to_delete) ++targets[*entries[i].name];
  std::erase_if(to_delete, [&](size_t i) {
    if (targets[*entries[i].name] == 1) return false;
    entries[i].error = ErrorCode::invalid_request;
    entries[i].message = entries[i].by_id ? "Duplicate topic id." : "Duplicate topic name.";
    return true;
  });

  // controller_mutation_rate (KIP-599): each topic's partitions; from v5 a client in debt has
  // the rest refused.
  int64_t throttle_ms = 0;
  std::erase_if(to_delete, [&](size_t i) {
    const auto* t = image->topic(*entries[i].name);
    if (take_mutations(ctx, t ? t->partition_count() : 0, ctx.version >= 5, throttle_ms)) return false;
    entries[i].error = ErrorCode::throttling_quota_exceeded;
    entries[i].message = "The throttling quota has been exceeded.";
    return true;
  });
  mute(ctx, throttle_ms);

  std::shared_ptr<const metadata::MetadataImage> newest;
  if (!to_delete.empty()) {
    newest = co_await svc.blocking.run([&] {
      std::shared_ptr<const metadata::MetadataImage> last;
      for (size_t i : to_delete) {
        auto change = svc.metadata.delete_topic(*entries[i].name);
        entries[i].error = change.error;
        entries[i].message = change.message;
        if (change.image) last = change.image;
      }
      return last;
    });
  }
  if (newest) co_await svc.partitions.reconcile(newest);

  DeleteTopicsResponse resp;
  for (const auto& e : entries) {
    DeleteTopicsResponse::DeletableTopicResult r;
    r.name = e.name;
    if (ctx.version >= 6) r.topic_id = e.id;
    r.error_code = protocol::code(e.error);
    if (e.error != ErrorCode::none && ctx.version >= 5) r.error_message = e.message;
    resp.responses.push_back(std::move(r));
  }
  resp.throttle_time_ms = static_cast<int32_t>(throttle_ms);
  co_await answer_later(ctx, throttle_ms, 2);
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
