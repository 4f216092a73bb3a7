#include "subject_name.h"

#include <openssl/asn1.h>
#include <openssl/objects.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace brokerd::net {
namespace {

// The keywords Java writes in RFC 2253 names; any other attribute goes by its OID.
constexpr std::array<std::pair<int, std::string_view>, 9> kKeywords{{
    {NID_commonName, "CN"},
    {NID_countryName, "C"},
    {NID_localityName, "L"},
    {NID_stateOrProvinceName, "ST"},
    {NID_organizationName, "O"},
    {NID_organizationalUnitName, "OU"},
    {NID_streetAddress, "STREET"},
    {NID_domainComponent, "DC"},
    {NID_userId, "UID"},
}};

std::string_view keyword(int nid) {
  for (const auto& [n, k] : kKeywords)
    if (n == nid) return k;
  return {};
}

// The string types Java writes as text; any other value is written as hex.
bool is_text(int type) {
  switch (type) {
    case V_ASN1_PRINTABLESTRING:
    case V_ASN1_T61STRING:
    case V_ASN1_IA5STRING:
    case V_ASN1_GENERALSTRING:
    case V_ASN1_UTF8STRING:
    case V_ASN1_BMPSTRING:
    case V_ASN1_UNIVERSALSTRING:
      return true;
    default:
      return false;
  }
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The value as UTF-8 text: BMPString is UCS-2 and UniversalString UCS-4 (big-endian); the
// others are taken as they are (ASCII, or UTF-8).
std::string text_of(const ASN1_STRING* value) {
  const auto* data = ASN1_STRING_get0_data(value);
  const auto size = static_cast<size_t>(ASN1_STRING_length(value));
  std::string out;
  const int type = ASN1_STRING_type(value);
  if (type == V_ASN1_BMPSTRING || type == V_ASN1_UNIVERSALSTRING) {
    const size_t width = type == V_ASN1_BMPSTRING ? 2 : 4;
    for (size_t i = 0; i + width <= size; i += width) {
      uint32_t cp = 0;
      for (size_t b = 0; b < width; ++b) cp = (cp << 8) | data[i + b];
      append_utf8(out, cp);
    }
    return out;
  }
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Java's escaping: a backslash before each of ,=+<>#;"\ anywhere, before leading and trailing
// spaces (and carriage returns), and a NUL as \00; everything else as is.
std::string escaped(const std::string& text) {
  constexpr std::string_view escapees = ",=+<>#;\"\\";
  size_t lead = 0;
  while (lead < text.size() && (text[lead] == ' ' || text[lead] == '\r')) ++lead;
  size_t trail = text.size();
  while (trail > lead && (text[trail - 1] == ' ' || text[trail - 1] == '\r')) --trail;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (escapees.find(c) != std::string_view::npos || i < lead || i >= trail) {
      out += '\\';
      out += c;
    } else if (c == '\0') {
      out += "\\00";
    } else {
      out += c;  // printable or not, UTF-8 included, as Java writes it
    }
  }
  return out;
}

std::string hex_der(const ASN1_STRING* value) {
  std::unique_ptr<ASN1_TYPE, decltype(&ASN1_TYPE_free)> any(ASN1_TYPE_new(), ASN1_TYPE_free);
  if (!any || !ASN1_TYPE_set1(any.get(), ASN1_STRING_type(value), value)) return "#";
  unsigned char* der = nullptr;
  const int n = i2d_ASN1_TYPE(any.get(), &der);
  std::string out = "#";
  constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < n; ++i) {
    out += kHex[der[i] >> 4];
    out += kHex[der[i] & 0xF];
  }
  OPENSSL_free(der);
  return out;
}

std::string attribute(const X509_NAME_ENTRY* entry) {
  const ASN1_OBJECT* object = X509_NAME_ENTRY_get_object(entry);
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(entry);
  std::string out;
  const std::string_view word = keyword(OBJ_obj2nid(object));
  if (!word.empty()) {
    out = word;
  } else {
    std::array<char, 128> oid{};
    OBJ_obj2txt(oid.data(), static_cast<int>(oid.size()), object, 1);
    out = oid.data();
  }
  out += '=';
  if (word.empty() || !is_text(ASN1_STRING_type(value))) return out + hex_der(value);
  return out + escaped(text_of(value));
}

}  // namespace

std::string java_rfc2253_name(const X509_NAME* name) {
  // Entries in encoded order, grouped into RDNs by their set number.
  std::vector<std::vector<std::string>> rdns;
  int current = -1;
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    const int set = X509_NAME_ENTRY_set(entry);
    if (rdns.empty() || set != current) rdns.emplace_back();
    current = set;
    rdns.back().push_back(attribute(entry));
  }
  std::string out;
  for (auto rdn = rdns.rbegin(); rdn != rdns.rend(); ++rdn) {
    if (!out.empty()) out += ',';
    for (size_t i = 0; i < rdn->size(); ++i) {
      if (i) out += '+';
      out += (*rdn)[i];
    }
  }
  return out;
}

}  // namespace brokerd::net
