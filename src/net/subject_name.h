#pragma once
// A certificate subject as Java's X500Principal.getName() writes it (RFC 2253), which is what
// Kafka's principals, ACLs and ssl.principal.mapping.rules see.
#include <string>

#include <openssl/x509.h>

namespace brokerd::net {

// RDNs last first, joined by ','; the values of a multi-valued RDN joined by '+' in their
// encoded order. CN, C, L, ST, O, OU, STREET, DC and UID are written by keyword with the
// value as text, escaped as Java escapes it; every other attribute (emailAddress, serialNumber,
// ...) by its OID in dotted form, '=#', and the hex of the value's DER encoding.
std::string java_rfc2253_name(const X509_NAME* name);

}  // namespace brokerd::net
