// The controller's changes of ACLs: bindings created (with fresh ids) and removed by filter,
// each request's valid changes committed together.
// Also the replay of their records into the image (record_replay.h).
#include <fmt/format.h>

#include <set>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/logger.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

namespace {

MetadataStore::ChangeAnswer not_controller() {
  return {ErrorCode::not_controller, "This node is not the active controller."};
}

}  // namespace

std::vector<MetadataStore::ChangeAnswer> MetadataStore::create_acls(std::vector<acl::Binding> bindings) {
  std::vector<ChangeAnswer> answers(bindings.size());
  if (!leads()) {
    for (auto& a : answers) a = not_controller();
    return answers;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  std::vector<Bytes> records;
  std::vector<size_t> written;
  for (size_t i = 0; i < bindings.size(); ++i) {
    auto& b = bindings[i];
    if (auto why = acl::invalid_binding(b)) {
      answers[i] = {ErrorCode::invalid_request, *why};
      continue;
    }
    bool exists = false;
    for (const auto& [id, existing] : current->acls->bindings) exists = exists || existing == b;
    for (size_t j : written) exists = exists || bindings[j] == b;
    if (exists) continue;  // Kafka answers success and keeps one copy
    if (b.id.is_zero()) b.id = protocol::Uuid::random();  // a mirror link names its copies' ids
    records.push_back(acl_record(b));
    written.push_back(i);
  }
  if (records.empty()) return answers;
  std::string why;
  const ErrorCode e = commit(records, &why);
  for (size_t i : written) answers[i] = {e, e == ErrorCode::none ? std::string() : why};
  if (e == ErrorCode::none) module_logger("metadata")->info("created {} ACL binding(s)", written.size());
  return answers;
}

std::vector<MetadataStore::AclDeletion> MetadataStore::delete_acls(const std::vector<acl::Filter>& filters) {
  std::vector<AclDeletion> out(filters.size());
  if (!leads()) {
    for (auto& d : out) d.answer = not_controller();
    return out;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  std::set<protocol::Uuid> removing;
  for (size_t i = 0; i < filters.size(); ++i) {
    if (auto why = acl::invalid_filter(filters[i])) {
      out[i].answer = {ErrorCode::invalid_request, *why};
      continue;
    }
    for (const auto& [id, b] : current->acls->bindings) {
      if (!acl::matches(filters[i], b)) continue;
      out[i].removed.push_back(b);
      removing.insert(id);
    }
  }
  if (removing.empty()) return out;
  std::vector<Bytes> records;
  for (const auto& id : removing) records.push_back(remove_acl_record(id));
  std::string why;
  const ErrorCode e = commit(records, &why);
  if (e != ErrorCode::none) {
    for (auto& d : out)
      if (!d.removed.empty()) d.answer = {e, why};
  } else {
    module_logger("metadata")->info("deleted {} ACL binding(s)", removing.size());
  }
  return out;
}

namespace {

// The image's ACLs, to change: a published image's set is shared and indexed, so the first
// change of a batch copies it and leaves the index stale (null) until MetadataImage::seal();
// later changes of the same batch find that private copy and change it in place.
AclSet& writable_acls(MetadataImage& image) {
  if (image.acls->index) image.acls = std::make_shared<AclSet>(AclSet{image.acls->bindings, nullptr});
  return const_cast<AclSet&>(*image.acls);
}

}  // namespace

void replay(const protocol::AccessControlEntryRecord& r, MetadataImage& image) {
  acl::Binding b = acl::binding_of(r.id, r.resource_type, r.resource_name, r.pattern_type, r.principal, r.host,
                                   r.operation, r.permission_type);
  if (acl::invalid_binding(b)) return;  // codes this release does not know
  writable_acls(image).bindings[r.id] = std::move(b);
}

void replay(const protocol::RemoveAccessControlEntryRecord& r, MetadataImage& image) {
  writable_acls(image).bindings.erase(r.id);
}

}  // namespace brokerd::metadata
