#pragma once
// Kafka's StandardAuthorizer rules over an immutable index of bindings: super users may do
// anything; a DENY that matches wins; else an ALLOW that matches grants (ALL grants every
// operation, and READ, WRITE, DELETE and ALTER each imply DESCRIBE, ALTER_CONFIGS implies
// DESCRIBE_CONFIGS); else, when no binding at all applies to the resource, the answer is
// allow_everyone_if_no_acl_found. A binding applies to a resource when its type matches and
// its pattern does: LITERAL equal name, LITERAL "*", or PREFIXED with a prefix of the name.
// It matches a request when it also names the principal (or "User:*"), the host (or "*")
// and the operation (or ALL).
//
// An Index is built once per change of the bindings and then only read, from any thread.
// authorize() allocates nothing and does a few hash lookups: a lookup per distinct prefix
// length for the prefixed bindings of the resource type.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/acl/acl.h"

namespace brokerd::acl {

struct AuthorizerConfig {
  std::vector<std::string> super_users;  // "User:admin", ...
  bool allow_everyone_if_no_acl_found = false;
};

class Index {
 public:
  Index();  // no bindings
  explicit Index(const std::vector<Binding>& bindings);
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  bool authorize(const AuthorizerConfig& cfg, std::string_view principal, std::string_view host, Operation op,
                 ResourceType type, std::string_view resource_name) const;
  // Whether `principal` may do `op` on at least one resource of `type` (KIP-679's test for
  // idempotent producers): a super user; or an ALLOW binding of that type matching the
  // principal, host and operation whose resource pattern no matching DENY covers (a DENY on
  // the same literal name, on the literal "*", or prefixed by a prefix of its name); or,
  // with allow_everyone_if_no_acl_found, no binding of that type at all.
  bool authorize_any(const AuthorizerConfig& cfg, std::string_view principal, std::string_view host, Operation op,
                     ResourceType type) const;
  size_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brokerd::acl
