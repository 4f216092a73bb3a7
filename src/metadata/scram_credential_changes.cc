// The controller's changes of SCRAM credentials (KIP-554): one change sets or deletes a
// user's credential for one mechanism; the valid changes of a request commit together.
// Also the replay of their records into the image (record_replay.h).
#include <fmt/format.h>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/byte_text.h"
#include "brokerd/common/logger.h"
#include "metadata/metadata_records.h"
#include "metadata/record_replay.h"

namespace brokerd::metadata {

using protocol::ErrorCode;

std::vector<MetadataStore::ChangeAnswer> MetadataStore::alter_scram_credentials(const std::vector<ScramChange>& changes) {
  std::vector<ChangeAnswer> answers(changes.size());
  if (!leads()) {
    for (auto& a : answers) a = {ErrorCode::not_controller, "This node is not the active controller."};
    return answers;
  }
  std::lock_guard lock(write_mutex_);
  auto current = image();
  std::vector<Bytes> records;
  std::vector<size_t> written;
  for (size_t i = 0; i < changes.size(); ++i) {
    const auto& c = changes[i];
    if (c.credential) {
      records.push_back(scram_credential_record(c.user, *c.credential));
    } else if (current->scram_credential(c.user, c.mechanism)) {
      records.push_back(remove_scram_credential_record(c.user, c.mechanism));
    } else {
      answers[i] = {ErrorCode::resource_not_found,
                    fmt::format("user '{}' has no {} credential to delete", c.user, auth::mechanism_name(c.mechanism))};
      continue;
    }
    written.push_back(i);
  }
  if (records.empty()) return answers;
  std::string why;
  const ErrorCode e = commit(records, &why);
  for (size_t i : written) answers[i] = {e, e == ErrorCode::none ? std::string() : why};
  if (e == ErrorCode::none) {
    for (size_t i : written)
      module_logger("metadata")->info("SCRAM credential of user {} ({}) {}", changes[i].user,
                                     auth::mechanism_name(changes[i].mechanism),
                                     changes[i].credential ? "set" : "deleted");
  }
  return answers;
}

namespace {

ScramCredentials& writable_credentials(MetadataImage& image) {
  return writable(image.scram_credentials, image.owns_scram_credentials);
}

}  // namespace

void replay(const protocol::UserScramCredentialRecord& r, MetadataImage& image) {
  auto mechanism = auth::scram_mechanism(r.mechanism);
  if (!mechanism) return;  // a mechanism this release does not know
  writable_credentials(image)[r.name][*mechanism] =
      auth::ScramCredential{*mechanism, text_of(r.salt), text_of(r.stored_key), text_of(r.server_key), r.iterations};
}

void replay(const protocol::RemoveUserScramCredentialRecord& r, MetadataImage& image) {
  auto mechanism = auth::scram_mechanism(r.mechanism);
  if (!mechanism) return;
  auto& credentials = writable_credentials(image);
  if (auto it = credentials.find(r.name); it != credentials.end()) {
    it->second.erase(*mechanism);
    if (it->second.empty()) credentials.erase(it);
  }
}

}  // namespace brokerd::metadata
