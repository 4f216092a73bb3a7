#include "brokerd/mirror/mirror_service.h"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "brokerd/auth/sealed_secret.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/mirror_status.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "acl_sync.h"
#include "offset_sync.h"
#include "partition_copier.h"
#include "source_cluster.h"
#include "topic_sync.h"

namespace brokerd::mirror {
namespace {

std::string client_id(const metadata::MirrorLink& link, int32_t node_id) {
  auto it = link.source_configs.find("client.id");
  return it != link.source_configs.end() ? it->second : fmt::format("brokerd-mirror-{}-{}", link.name, node_id);
}

// A client of the link's source, with the link's credentials. Throws std::invalid_argument
// for settings the controller would not have accepted (a link made by an older release).
// Throws std::runtime_error (bad settings, a password that does not unseal).
std::unique_ptr<SourceCluster> source_of(const metadata::MirrorLink& link, int32_t node_id, int timeout_ms,
                                         const std::string& secret) {
  auto settings = link.source_configs;
  for (auto& [key, value] : settings) {
    if (!auth::is_sealed(value)) continue;
    auto plain = auth::unseal(value, secret);
    if (!plain)
      throw std::runtime_error(fmt::format("cannot unseal the source setting {}: password.encoder.secret is not the "
                                           "one it was sealed with",
                                           key));
    value = std::move(*plain);
  }
  return std::make_unique<SourceCluster>(link.source_bootstrap, client_id(link, node_id), timeout_ms,
                                         security::credentials_from_properties(settings));
}

}  // namespace

// The copying side of one link on this node: a thread that keeps the source's metadata and
// maps each led mirror partition to its source leader, and one thread per source broker.
class MirrorService::LinkWorker {
 public:
  LinkWorker(MirrorService& service, metadata::MirrorLink link) : service_(service), link_(std::move(link)) {
    thread_ = std::thread([this] { run(); });
  }
  ~LinkWorker() { stop(); }

  void set_partitions(std::vector<MirroredPartition> parts) {
    std::lock_guard lock(mu_);
    if (parts != parts_) refresh_ = true;
    parts_ = std::move(parts);
    cv_.notify_all();
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    for (auto& [id, f] : fetchers_) f->stop();
    fetchers_.clear();
  }
  const metadata::MirrorLink& link() const { return link_; }

 private:
  // Fetches the partitions one source broker leads.
  class Fetcher {
   public:
    Fetcher(LinkWorker& worker, quorum::Voter broker) : worker_(worker), broker_(std::move(broker)) {
      thread_ = std::thread([this] { run(); });
    }
    ~Fetcher() { stop(); }
    void assign(std::vector<MirroredPartition> parts, const quorum::Voter& broker) {
      std::lock_guard lock(mu_);
      parts_ = std::move(parts);
      broker_ = broker;
    }
    void stop() {
      stopping_ = true;
      if (thread_.joinable()) thread_.join();
    }

   private:
    void run() {
      auto& svc = worker_.service_;
      CopyOptions opts{worker_.link_.name, svc.options_.wait_max_ms, svc.options_.partition_max_bytes,
                       svc.options_.response_max_bytes};
      std::unique_ptr<SourceCluster> source_client;
      try {
        source_client = source_of(worker_.link_, svc.options_.node_id, svc.options_.request_timeout_ms, svc.options_.password_secret);
      } catch (const std::exception&) {
        return;  // the link's metadata thread reports the bad settings
      }
      SourceCluster& source = *source_client;
      while (!stopping_ && !svc.stopping_) {
        std::vector<MirroredPartition> parts;
        quorum::Voter broker;
        {
          std::lock_guard lock(mu_);
          parts = parts_;
          broker = broker_;
        }
        CopyResult r = copy_round(opts, svc.partitions_, svc.status_, source, broker, parts);
        if (r == CopyResult::ok) continue;
        if (r == CopyResult::failed || r == CopyResult::stale_metadata) worker_.request_refresh();
        sleep(r == CopyResult::idle ? std::min<int64_t>(svc.options_.wait_max_ms, 200) : svc.options_.backoff_ms);
      }
    }
    void sleep(int64_t ms) {
      for (int64_t slept = 0; slept < ms && !stopping_ && !worker_.service_.stopping_; slept += 50)
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(50, ms - slept)));
    }

    LinkWorker& worker_;
    std::mutex mu_;
    std::vector<MirroredPartition> parts_;
    quorum::Voter broker_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
  };

  void request_refresh() {
    std::lock_guard lock(mu_);
    refresh_ = true;
    cv_.notify_all();
  }

  void run() {
    auto& svc = service_;
    std::unique_ptr<SourceCluster> source;
    int64_t next_refresh = 0;
    while (true) {
      std::vector<MirroredPartition> parts;
      {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_ || refresh_; });
        if (stopping_ || svc.stopping_) return;
        const int64_t now = steady_clock_ms();
        if (!refresh_ && now < next_refresh) continue;
        refresh_ = false;
        next_refresh = now + svc.options_.metadata_refresh_ms;
        parts = parts_;
      }
      partitions::LinkState state = svc.status_.link(link_.name);
      std::string error;
      std::optional<SourceMetadata> md;
      try {
        if (!source)
          source = source_of(link_, svc.options_.node_id, svc.options_.request_timeout_ms, svc.options_.password_secret);
        md = source->metadata(error);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (!md) {
        if (state.state != "source-unreachable")
          module_logger("mirror")->warn("link {}: the source is unreachable: {}", link_.name, error);
        state.state = "source-unreachable";
        state.message = error;
        svc.status_.set_link(link_.name, state);
        std::lock_guard lock(mu_);
        next_refresh = steady_clock_ms() + svc.options_.backoff_ms;
        continue;
      }
      if (state.state != "active" || !svc.metadata_.leads()) {
        // On the controller the topic pass keeps the message (its problems); elsewhere the
        // source answering is the whole state.
        if (state.state == "source-unreachable" || state.state == "starting") state.message.clear();
        state.state = "active";
        svc.status_.set_link(link_.name, state);
      }
      // Partitions by the source broker leading them.
      std::map<int32_t, std::vector<MirroredPartition>> by_broker;
      for (const auto& p : parts) {
        auto t = md->topics.find(p.tp.topic);
        if (t == md->topics.end() || t->second.id != p.source_topic_id) continue;  // gone or recreated: its fetch says so
        const auto& leaders = t->second.leaders;
        const int32_t leader = static_cast<size_t>(p.tp.partition) < leaders.size() ? leaders[static_cast<size_t>(p.tp.partition)] : -1;
        if (leader < 0 || !md->brokers.count(leader)) continue;
        by_broker[leader].push_back(p);
      }
      for (auto it = fetchers_.begin(); it != fetchers_.end();) {
        if (!by_broker.count(it->first)) {
          it->second->stop();
          it = fetchers_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto& [id, list] : by_broker) {
        auto& f = fetchers_[id];
        if (!f) f = std::make_unique<Fetcher>(*this, md->brokers.at(id));
        f->assign(std::move(list), md->brokers.at(id));
      }
    }
  }

  MirrorService& service_;
  const metadata::MirrorLink link_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<MirroredPartition> parts_;
  bool refresh_ = true;
  bool stopping_ = false;
  std::thread thread_;
  std::map<int32_t, std::unique_ptr<Fetcher>> fetchers_;  // by source broker (run() only)
};

MirrorService::MirrorService(MirrorOptions options, metadata::MetadataStore& metadata,
                             partitions::PartitionManager& partitions, partitions::MirrorStatus& status)
    : options_(options), metadata_(metadata), partitions_(partitions), status_(status) {}

MirrorService::~MirrorService() { stop(); }

void MirrorService::start() {
  coordinator_ = std::thread([this] { coordinate(); });
  supervisor_ = std::thread([this] { supervise(); });
}

void MirrorService::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (coordinator_.joinable()) coordinator_.join();
  if (supervisor_.joinable()) supervisor_.join();
  for (auto& [name, w] : workers_) w->stop();
  workers_.clear();
}

bool MirrorService::pause(int64_t ms) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_.load(); });
  return !stopping_;
}

void MirrorService::coordinate() {
  std::map<std::string, std::unique_ptr<SourceCluster>> sources;  // by link id
  std::unique_ptr<SourceCluster> here;                             // this cluster's brokers
  std::map<std::string, CommittedOffsets> committed;               // by link id
  int64_t next_offsets_sync = 0;
  while (pause(options_.metadata_refresh_ms)) {
    if (!metadata_.leads()) {
      sources.clear();
      committed.clear();
      continue;
    }
    const auto image = metadata_.image();
    const bool sync_offsets_now = steady_clock_ms() >= next_offsets_sync;
    if (sync_offsets_now) next_offsets_sync = steady_clock_ms() + options_.offsets_sync_ms;
    if (!here && !image->brokers.empty()) {
      const auto& b = image->brokers.front();
      here = std::make_unique<SourceCluster>(fmt::format("{}:{}", b.host, b.port), fmt::format("brokerd-mirror-{}", options_.node_id),
                                             options_.request_timeout_ms);
    }
    for (const auto& [name, link] : image->links) {
      if (link.paused || stopping_) continue;
      auto& source = sources[link.id.to_string() + link.source_bootstrap];
      partitions::LinkState state = status_.link(name);
      std::string error;
      std::optional<SourceMetadata> md;
      try {
        if (!source)
          source = source_of(link, options_.node_id, options_.request_timeout_ms, options_.password_secret);
        md = source->metadata(error);
      } catch (const std::exception& e) {
        error = e.what();
      }
      if (!md) {
        state.state = "source-unreachable";
        state.message = error;
      } else {
        partitions::LinkState synced = sync_topics(link, *md, *source, metadata_, options_.replication_factor);
        state.state = synced.state;
        state.message = synced.message;
        if (link.sync_acls) {
          const std::string problem = sync_acls(link, *md, *source, metadata_);
          if (!problem.empty() && state.message.empty()) state.message = problem;
        }
        const bool groups = link.all_groups || !link.groups.empty() || !link.group_prefixes.empty();
        if (groups && sync_offsets_now && here) {
          auto r = sync_offsets(link, *md, *source, *here, *metadata_.image(), committed[link.id.to_string()]);
          state.groups_synced = r.groups_synced;
          if (!r.problem.empty() && state.message.empty()) state.message = r.problem;
        }
      }
      status_.set_link(name, state);
    }
  }
}

void MirrorService::supervise() {
  while (pause(500)) {
    const auto image = metadata_.image();
    std::map<std::string, std::vector<MirroredPartition>> led;  // by link
    std::vector<std::string> links;
    for (const auto& [name, link] : image->links) {
      links.push_back(name);
      if (!link.paused) led[name];
    }
    image->for_each_topic([&](const metadata::TopicPtr& t) {
      auto it = led.find(t->mirror_link);
      if (t->mirror_link.empty() || it == led.end()) return;
      for (int32_t p = 0; p < t->partition_count(); ++p)
        if (t->partitions[static_cast<size_t>(p)].leader == options_.node_id)
          it->second.push_back({partitions::TopicPartition{t->name, p}, t->source_topic_id});
    });
    status_.retain_links(links);
    // Progress of partitions no longer led here is forgotten.
    std::set<std::tuple<std::string, std::string, int32_t>> kept;
    for (const auto& [name, parts] : led)
      for (const auto& p : parts) kept.insert({name, p.tp.topic, p.tp.partition});
    for (const auto& e : status_.partitions())
      if (!kept.count({e.link, e.tp.topic, e.tp.partition})) status_.drop_partition(e.link, e.tp);
    for (auto it = workers_.begin(); it != workers_.end();) {
      auto want = led.find(it->first);
      const metadata::MirrorLink* now = image->link(it->first);
      if (want == led.end() || want->second.empty() || !now || !(*now == it->second->link())) {
        it->second->stop();
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [name, parts] : led) {
      if (parts.empty()) continue;
      auto& w = workers_[name];
      if (!w) w = std::make_unique<LinkWorker>(*this, *image->link(name));
      w->set_partitions(std::move(parts));
    }
  }
}

}  // namespace brokerd::mirror
