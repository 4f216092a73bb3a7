#!/usr/bin/env python3
"""Generates C++ codecs from the schemas in proto/ (python3 standard library only).

    codegen.py --proto DIR --list lib|test     print the generated file names (for CMake)
    codegen.py --proto DIR --out DIR           write the files for the messages in enabled.txt
    codegen.py --proto DIR --out DIR --all     every schema (to check the generator itself)

Each message becomes one header and one source file. Nested structs live in a namespace of
their own and are aliased inside the message struct (ProduceRequest::TopicProduceData), so
they are complete types when the message is declared.
"""
import argparse
import json
import pathlib
import re
import sys

SCHEMA_DIRS = ["messages", "coordinator", "metadata", "brokerd"]
PRIMITIVES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t", "float64": "double",
    "string": "std::string", "bytes": "Bytes", "uuid": "Uuid", "records": "Records",
}
INT_LIMITS = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1),
              "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
              "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1)}
ROOT_RESERVED = {"api_key", "min_version", "max_version", "is_flexible", "encode", "decode",
                 "unknown_tagged_fields", "schema_name", "record_type",
                 "latest_version_unstable"}


class Versions:
    """A version range such as "3+", "1-4", "2" or "none"."""

    def __init__(self, text):
        text = (text or "none").strip()
        if text == "none":
            self.lo, self.hi = None, None
        elif text.endswith("+"):
            self.lo, self.hi = int(text[:-1]), 0x7FFF
        elif "-" in text:
            lo, hi = text.split("-")
            self.lo, self.hi = int(lo), int(hi)
        else:
            self.lo = self.hi = int(text)

    def empty(self):
        return self.lo is None

    def intersect(self, other):
        v = Versions("none")
        if self.empty() or other.empty():
            return v
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        if lo <= hi:
            v.lo, v.hi = lo, hi
        return v

    def contains(self, version):
        return not self.empty() and self.lo <= version <= self.hi

    def cond(self, valid):
        """A C++ condition on `version`, simplified within the message's valid range."""
        r = self.intersect(valid)
        if r.empty():
            return "false"
        parts = []
        if r.lo > valid.lo:
            parts.append(f"wire_version >= {r.lo}")
        if r.hi < valid.hi:
            parts.append(f"wire_version <= {r.hi}")
        return " && ".join(parts) if parts else "true"


def snake(name):
    name = name.replace("KRaft", "Kraft")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def file_stem(message_name):
    return snake(message_name)


class Field:
    def __init__(self, spec, msg):
        self.spec = spec
        self.name = spec["name"]
        self.member = snake(self.name)
        self.type = spec["type"].strip()
        self.tagged = Versions(spec.get("taggedVersions"))
        # As Kafka's generator: a field with taggedVersions and no versions exists in exactly
        # its tagged versions (TransactionLogValue's PreviousProducerId, for one).
        self.versions = Versions(spec.get("versions", spec.get("taggedVersions")))
        self.nullable = Versions(spec.get("nullableVersions"))
        self.tag = int(spec["tag"]) if "tag" in spec else None
        self.ignorable = bool(spec.get("ignorable", False))
        self.default = spec.get("default")
        self.flex_override = spec.get("flexibleVersions")
        self.is_array = self.type.startswith("[]")
        self.elem = self.type[2:] if self.is_array else self.type
        self.is_struct = self.elem not in PRIMITIVES
        self.msg = msg
        # Nullable in some version the field exists in.
        self.optional = (not self.nullable.intersect(self.versions).empty()
                         and self.type != "records")

    def elem_cpp(self):
        return self.elem if self.is_struct else PRIMITIVES[self.elem]

    def cpp_type(self):
        t = self.elem_cpp()
        if self.is_array:
            t = f"std::vector<{t}>"
        if self.optional:
            t = f"std::optional<{t}>"
        return t

    def default_expr(self):
        """The default value as a C++ expression (for initializers and comparisons)."""
        d = self.default
        if d == "null":
            if not self.optional:
                raise SystemExit(f"{self.msg.name}.{self.name}: null default on non-nullable field")
            return "std::nullopt"
        if self.is_array:
            return "{}" if not self.optional else f"std::vector<{self.elem_cpp()}>{{}}"
        t = self.elem
        if t in INT_LIMITS:
            v = 0 if d in (None, "") else int(str(d), 0)
            lo, hi = INT_LIMITS[t]
            if not lo <= v <= hi:
                raise SystemExit(f"{self.msg.name}.{self.name}: default out of range")
            if v == lo and lo < 0:
                return f"{PRIMITIVES[t]}({v + 1}{'LL' if t == 'int64' else ''} - 1)"
            suffix = "LL" if t == "int64" else ("U" if t == "uint32" else "")
            return f"{PRIMITIVES[t]}({v}{suffix})"
        if t == "bool":
            return "true" if str(d).lower() == "true" else "false"
        if t == "float64":
            return f"double({float(d) if d else 0.0!r})"
        if t == "string":
            return f"std::string({json.dumps(d)})" if d else "std::string()"
        if t == "bytes":
            return "Bytes{}"
        if t == "uuid":
            return "Uuid{}"
        if t == "records":
            return "Records{}"
        if d not in (None, ""):
            raise SystemExit(f"{self.msg.name}.{self.name}: default on struct")
        return f"{t}{{}}"

    def is_default(self, expr):
        if self.is_array:
            if not self.optional:
                return f"{expr}.empty()"
            if self.default == "null":
                return f"(!{expr}.has_value())"
            return f"({expr} && {expr}->empty())"
        if self.optional:
            return f"({expr} == {self.cpp_type()}({self.default_expr()}))"
        return f"({expr} == {self.default_expr()})"

    def null_ok(self):
        """Condition for null being encodable, within the versions the field exists in."""
        return self.nullable.cond(self.versions.intersect(self.msg.valid))

    def flex_expr(self):
        if self.flex_override is not None:
            return Versions(self.flex_override).cond(self.msg.valid)
        return "flex"


class Struct:
    def __init__(self, name, fields_spec, versions, msg):
        self.name = name
        self.versions = versions
        self.fields = [Field(f, msg) for f in fields_spec]
        self.msg = msg


class Message:
    def __init__(self, spec, folder):
        self.spec = spec
        self.folder = folder
        self.name = spec["name"]
        self.kind = spec["type"]
        self.valid = Versions(spec["validVersions"])
        self.flexible = Versions(spec.get("flexibleVersions", "none"))
        self.api_key = spec.get("apiKey", -1)
        self.unstable = bool(spec.get("latestVersionUnstable", False))
        self.structs = {}   # name -> Struct, in dependency order once sorted
        self.common = {s["name"]: s for s in spec.get("commonStructs", [])}
        self.root = Struct(self.name, spec.get("fields", []), self.valid, self)
        self._collect(self.root)
        self.order = self._sorted()
        for f in self.root.fields:
            if f.member in ROOT_RESERVED:
                raise SystemExit(f"{self.name}.{f.name}: clashes with a generated member")

    def _collect(self, struct):
        for f in struct.fields:
            if not f.is_struct:
                continue
            if "fields" in f.spec:
                fields, versions = f.spec["fields"], f.versions
            elif f.elem in self.common:
                c = self.common[f.elem]
                fields, versions = c["fields"], Versions(c.get("versions", "0+"))
            else:
                raise SystemExit(f"{self.name}: unknown type {f.type}")
            if f.elem in self.structs:
                if f.elem not in self.common and "fields" in f.spec:
                    raise SystemExit(f"{self.name}: struct {f.elem} defined twice")
                continue
            s = Struct(f.elem, fields, versions, self)
            self.structs[f.elem] = s
            self._collect(s)

    def _sorted(self):
        done, order = set(), []

        def visit(s):
            if s.name in done:
                return
            done.add(s.name)
            for f in s.fields:
                if f.is_struct:
                    visit(self.structs[f.elem])
            order.append(s)

        for s in self.structs.values():
            visit(s)
        return order

    @property
    def stem(self):
        return file_stem(self.name)

    @property
    def ns(self):
        return f"{self.stem}_types"

    def flex_cond(self):
        return self.flexible.cond(self.valid) if not self.flexible.empty() else "false"


# ---------------------------------------------------------------- headers

def emit_struct_decl(s, out, root=False):
    msg = s.msg
    out.append(f"struct {s.name} {{")
    if root:
        for t in msg.order:
            out.append(f"  using {t.name} = {msg.ns}::{t.name};")
        out.append(f"  static constexpr const char* schema_name = \"{msg.name}\";")
        key = msg.api_key if msg.kind in ("request", "response") else -1
        out.append(f"  static constexpr int16_t api_key = {key};")
        if msg.kind == "metadata":
            out.append(f"  static constexpr int16_t record_type = {msg.api_key};")
        out.append(f"  static constexpr int16_t min_version = {msg.valid.lo};")
        out.append(f"  static constexpr int16_t max_version = {msg.valid.hi};")
        out.append(f"  static constexpr bool latest_version_unstable = "
                   f"{'true' if msg.unstable else 'false'};")
        out.append("  static constexpr bool is_flexible(int16_t version) { "
                   f"return {flex_cond_for_header(msg)}; }}")
        out.append("")
    for f in s.fields:
        out.append(f"  {f.cpp_type()} {f.member} = {f.default_expr()};")
    out.append("  std::vector<TaggedField> unknown_tagged_fields;")
    out.append("")
    out.append("  void encode(Writer& w, int16_t version) const;")
    out.append("  void decode(Reader& r, int16_t version);")
    out.append(f"  bool operator==(const {s.name}&) const = default;")
    out.append("};")


def flex_cond_for_header(msg):
    if msg.flexible.empty():
        return "false"
    return f"version >= {msg.flexible.lo}"


def header_for(msg):
    out = [
        "#pragma once",
        f"// Generated by proto/codegen.py from {msg.folder}/{msg.name}.json. Do not edit.",
        "#include <cstdint>",
        "#include <optional>",
        "#include <string>",
        "#include <vector>",
        "",
        '#include "brokerd/protocol/wire.h"',
        "",
        "namespace brokerd::protocol {",
        "",
    ]
    if msg.order:
        out.append(f"namespace {msg.ns} {{")
        for s in msg.order:
            out.append("")
            emit_struct_decl(s, out)
        out.append("")
        out.append(f"}}  // namespace {msg.ns}")
        out.append("")
    emit_struct_decl(msg.root, out, root=True)
    out += ["", "}  // namespace brokerd::protocol", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- encode / decode

class Emitter:
    def __init__(self, msg):
        self.msg = msg
        self.lines = []
        self.tmp = 0

    def line(self, text, indent):
        self.lines.append("  " * indent + text)

    def fresh(self, base):
        self.tmp += 1
        return f"{base}{self.tmp}"

    # encode one value of the field's element or whole type
    def enc_value(self, f, expr, w, flex, indent, whole=True):
        null_ok = f.null_ok()
        name = f"{self.msg.name}.{f.name}"
        if whole and f.is_array:
            if f.optional:
                self.line(f"if (!{expr}) {{", indent)
                self.line(f"if (!({null_ok})) throw EncodeError(\"null {name} in a version "
                          "where it is not nullable\");", indent + 1)
                self.line(f"{w}.array_length(-1, {flex});", indent + 1)
                self.line("} else {", indent)
                self._enc_array(f, f"(*{expr})", w, flex, indent + 1)
                self.line("}", indent)
            else:
                self._enc_array(f, expr, w, flex, indent)
            return
        t = f.elem
        if f.is_struct:
            if whole and f.optional:
                self.line(f"if ({null_ok}) {{", indent)
                self.line(f"{w}.i8({expr} ? 1 : -1);", indent + 1)
                self.line(f"if ({expr}) {expr}->encode({w}, wire_version);", indent + 1)
                self.line("} else {", indent)
                self.line(f"if (!{expr}) throw EncodeError(\"null {name}\");", indent + 1)
                self.line(f"{expr}->encode({w}, wire_version);", indent + 1)
                self.line("}", indent)
            else:
                self.line(f"{expr}.encode({w}, wire_version);", indent)
            return
        if t == "records":
            self.line(f"if ({expr}.is_null && !({null_ok})) "
                      f"throw EncodeError(\"null {name}\");", indent)
            self.line(f"{w}.records({expr}, {flex});", indent)
            return
        if t in ("string", "bytes"):
            fn = "string" if t == "string" else "bytes"
            if whole and f.optional:
                self.line(f"if ({null_ok}) {w}.nullable_{fn}({expr}, {flex});", indent)
                self.line(f"else if (!{expr}) throw EncodeError(\"null {name}\");", indent)
                self.line(f"else {w}.{fn}(*{expr}, {flex});", indent)
            else:
                self.line(f"{w}.{fn}({expr}, {flex});", indent)
            return
        fn = {"bool": "boolean", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
              "uint16": "u16", "uint32": "u32", "float64": "f64", "uuid": "uuid"}[t]
        self.line(f"{w}.{fn}({expr});", indent)

    def _enc_array(self, f, expr, w, flex, indent):
        el = self.fresh("e")
        self.line(f"{w}.array_length(static_cast<int32_t>({expr}.size()), {flex});", indent)
        self.line(f"for (const auto& {el} : {expr}) {{", indent)
        self.enc_value(f, el, w, flex, indent + 1, whole=False)
        self.line("}", indent)

    def dec_value(self, f, target, r, flex, indent, whole=True):
        null_ok = f.null_ok()
        name = f"{self.msg.name}.{f.name}"
        t = f.elem
        if whole and f.is_array:
            n = self.fresh("n")
            self.line(f"int32_t {n} = {r}.array_length({flex});", indent)
            self.line(f"if ({n} < 0) {{", indent)
            if f.optional:
                self.line(f"if (!({null_ok})) throw DecodeError(\"null {name}\");", indent + 1)
                self.line(f"{target} = std::nullopt;", indent + 1)
            else:
                self.line(f"throw DecodeError(\"null {name}\");", indent + 1)
            self.line("} else {", indent)
            vec = self.fresh("v")
            if f.optional:
                self.line(f"auto& {vec} = {target}.emplace();", indent + 1)
            else:
                self.line(f"auto& {vec} = {target};", indent + 1)
            self.line(f"{vec}.clear();", indent + 1)
            self.line(f"{vec}.reserve(static_cast<size_t>({n}));", indent + 1)
            i = self.fresh("i")
            self.line(f"for (int32_t {i} = 0; {i} < {n}; ++{i}) {{", indent + 1)
            self.line(f"auto& el = {vec}.emplace_back();", indent + 2)
            self.dec_value(f, "el", r, flex, indent + 2, whole=False)
            self.line("}", indent + 1)
            self.line("}", indent)
            return
        if f.is_struct:
            if whole and f.optional:
                self.line(f"if (({null_ok}) && !{r}.struct_present()) {{", indent)
                self.line(f"{target} = std::nullopt;", indent + 1)
                self.line("} else {", indent)
                self.line(f"{target}.emplace().decode({r}, wire_version);", indent + 1)
                self.line("}", indent)
            else:
                self.line(f"{target}.decode({r}, wire_version);", indent)
            return
        if t == "records":
            self.line(f"{target} = {r}.records({flex});", indent)
            self.line(f"if ({target}.is_null && !({null_ok})) "
                      f"throw DecodeError(\"null {name}\");", indent)
            return
        if t in ("string", "bytes"):
            fn = "string" if t == "string" else "bytes"
            if whole and f.optional:
                self.line(f"if ({null_ok}) {target} = {r}.nullable_{fn}({flex});", indent)
                self.line(f"else {target} = {r}.{fn}({flex});", indent)
            else:
                self.line(f"{target} = {r}.{fn}({flex});", indent)
            return
        fn = {"bool": "boolean", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
              "uint16": "u16", "uint32": "u32", "float64": "f64", "uuid": "uuid"}[t]
        self.line(f"{target} = {r}.{fn}();", indent)

    def struct_code(self, s, qual):
        msg = self.msg
        v = msg.valid
        L = self.line
        L(f"void {qual}::encode(Writer& w, int16_t wire_version) const {{", 0)
        L(f"[[maybe_unused]] const bool flex = {msg.name}::is_flexible(wire_version);", 1)
        tagged = []
        for f in s.fields:
            present = f.versions.cond(v)
            inline = f"({present}) && !({f.tagged.cond(v)})" if not f.tagged.empty() else present
            if not f.tagged.empty():
                tagged.append(f)
            cond_absent = {"false": "true", "true": "false"}.get(present, f"!({present})")
            if inline == "true":
                self.enc_value(f, f.member, "w", f.flex_expr(), 1)
            elif inline != "false":
                L(f"if ({inline}) {{", 1)
                self.enc_value(f, f.member, "w", f.flex_expr(), 2)
                L("}", 1)
            if not f.ignorable and cond_absent != "false":
                L(f"if (({cond_absent}) && !{f.is_default(f.member)}) {{", 1)
                L(f"throw EncodeError(\"{msg.name}.{f.name} is not in this version\");", 2)
                L("}", 1)
        L("if (flex) {", 1)
        L("uint32_t count = static_cast<uint32_t>(unknown_tagged_fields.size());", 2)
        tagged.sort(key=lambda f: f.tag)
        for f in tagged:
            L(f"if (({f.tagged.cond(v)}) && !{f.is_default(f.member)}) ++count;", 2)
        L("w.uvarint(count);", 2)
        L("size_t u = 0;", 2)
        for f in tagged:
            L(f"if (({f.tagged.cond(v)}) && !{f.is_default(f.member)}) {{", 2)
            if f.tag > 0:
                L(f"while (u < unknown_tagged_fields.size() && unknown_tagged_fields[u].tag < {f.tag}) "
                  "w.tagged_raw(unknown_tagged_fields[u++]);", 3)
            L(f"w.tagged_field({f.tag}, [&](Writer& tw) {{", 3)
            self.enc_value(f, f.member, "tw", "true", 4)
            L("});", 3)
            L("}", 2)
        L("while (u < unknown_tagged_fields.size()) w.tagged_raw(unknown_tagged_fields[u++]);", 2)
        L("}", 1)
        L("}", 0)
        L("", 0)
        L(f"void {qual}::decode(Reader& r, int16_t wire_version) {{", 0)
        L(f"[[maybe_unused]] const bool flex = {msg.name}::is_flexible(wire_version);", 1)
        L(f"*this = {qual}{{}};", 1)
        for f in s.fields:
            present = f.versions.cond(v)
            inline = f"({present}) && !({f.tagged.cond(v)})" if not f.tagged.empty() else present
            if inline == "false":
                continue
            if inline == "true":
                self.dec_value(f, f.member, "r", f.flex_expr(), 1)
                continue
            L(f"if ({inline}) {{", 1)
            self.dec_value(f, f.member, "r", f.flex_expr(), 2)
            L("}", 1)
        L("if (flex) {", 1)
        L("r.tagged_fields(unknown_tagged_fields, [&](uint32_t tag, Reader& tr) -> bool {", 2)
        if tagged:
            L("switch (tag) {", 3)
            for f in tagged:
                L(f"case {f.tag}: {{", 4)
                if f.tagged.cond(v) != "true":
                    L(f"if (!({f.tagged.cond(v)})) return false;", 5)
                self.dec_value(f, f.member, "tr", "true", 5)
                L("return true;", 5)
                L("}", 4)
            L("default:", 4)
            L("return false;", 5)
            L("}", 3)
            L("return false;", 3)
        else:
            L("return false;", 3)
        L("});", 2)
        L("}", 1)
        L("}", 0)
        L("", 0)


def source_for(msg):
    em = Emitter(msg)
    for s in msg.order:
        em.struct_code(s, f"{msg.ns}::{s.name}")
    em.struct_code(msg.root, msg.name)
    body = "\n".join(em.lines)
    body = body.replace("((true) && !(false))", "true")
    return "\n".join([
        f"// Generated by proto/codegen.py from {msg.folder}/{msg.name}.json. Do not edit.",
        f'#include "brokerd/protocol/messages/{msg.stem}.h"',
        "",
        "namespace brokerd::protocol {",
        "",
        body,
        "}  // namespace brokerd::protocol",
        "",
    ])


# ---------------------------------------------------------------- api table

def api_pairs(msgs):
    reqs = {m.api_key: m for m in msgs if m.kind == "request"}
    resps = {m.api_key: m for m in msgs if m.kind == "response"}
    pairs = []
    for key in sorted(reqs):
        if key not in resps:
            raise SystemExit(f"{reqs[key].name} is enabled without its response")
        pairs.append((reqs[key], resps[key]))
    for key in resps:
        if key not in reqs:
            raise SystemExit(f"{resps[key].name} is enabled without its request")
    return pairs


def api_table(msgs):
    pairs = api_pairs(msgs)
    inc = "\n".join(f'#include "brokerd/protocol/messages/{m.stem}.h"'
                    for rq, rs in pairs for m in (rq, rs))

    def visit(kind, idx):
        cases = "\n".join(f"    case {rq.api_key}: return f(std::type_identity<{(rq, rs)[idx].name}>{{}});"
                          for rq, rs in pairs)
        return (f"template <typename F>\ndecltype(auto) visit_{kind}(int16_t api_key, F&& f) {{\n"
                f"  switch (api_key) {{\n{cases}\n"
                f"    default: return f(std::type_identity<void>{{}});\n  }}\n}}\n")

    rows = []
    for rq, rs in pairs:
        fr = rq.flexible.lo if not rq.flexible.empty() else -1
        fs = rs.flexible.lo if not rs.flexible.empty() else -1
        stable = rq.valid.hi - (1 if rq.unstable else 0)
        name = rq.name[:-len("Request")]
        rows.append(f"    ApiInfo{{{rq.api_key}, \"{name}\", {rq.valid.lo}, {rq.valid.hi}, "
                    f"{stable}, {fr}, {fs}}},")
    header = f"""#pragma once
// Generated by proto/codegen.py from proto/enabled.txt. Do not edit.
#include <array>
#include <cstdint>
#include <type_traits>

{inc}

namespace brokerd::protocol {{

struct ApiInfo {{
  int16_t api_key;
  const char* name;
  int16_t min_version;
  int16_t max_version;
  int16_t max_stable_version;          // max_version unless the latest is unstable
  int16_t first_flexible_request;      // -1: never flexible
  int16_t first_flexible_response;
}};

inline constexpr std::array<ApiInfo, {len(rows)}> api_table = {{{{
{chr(10).join(rows)}
}}}};

// The row for api_key, or nullptr when this build does not know it.
const ApiInfo* find_api(int16_t api_key);
// Request header version: 2 if the request version is flexible, else 1 (0 for ControlledShutdown v0).
int16_t request_header_version(int16_t api_key, int16_t api_version);
// Response header version: 1 if flexible, else 0; ApiVersions always 0.
int16_t response_header_version(int16_t api_key, int16_t api_version);

// Calls f(std::type_identity<XRequest>{{}}) for a known key, f(std::type_identity<void>{{}}) otherwise.
{visit("request", 0)}
{visit("response", 1)}
}}  // namespace brokerd::protocol
"""
    source = """// Generated by proto/codegen.py from proto/enabled.txt. Do not edit.
#include "brokerd/protocol/messages/api_table.h"

namespace brokerd::protocol {

const ApiInfo* find_api(int16_t api_key) {
  for (const auto& a : api_table) {
    if (a.api_key == api_key) return &a;
  }
  return nullptr;
}

int16_t request_header_version(int16_t api_key, int16_t api_version) {
  if (api_key == 7 && api_version == 0) return 0;  // ControlledShutdown v0 predates client_id
  const ApiInfo* a = find_api(api_key);
  if (a == nullptr || a->first_flexible_request < 0) return 1;
  return api_version >= a->first_flexible_request ? 2 : 1;
}

int16_t response_header_version(int16_t api_key, int16_t api_version) {
  if (api_key == 18) return 0;  // clients must read ApiVersions whatever version they asked for
  const ApiInfo* a = find_api(api_key);
  if (a == nullptr || a->first_flexible_response < 0) return 0;
  return api_version >= a->first_flexible_response ? 1 : 0;
}

}  // namespace brokerd::protocol
"""
    return header, source


# ---------------------------------------------------------------- random filler (tests only)

def random_fill(msgs):
    decls, defs = [], []

    def fill_value(f, target, indent, whole=True):
        pad = "  " * indent
        v = f.msg.valid
        out = []
        if whole and (f.optional or f.elem == "records"):
            out.append(f"{pad}if (({f.nullable.cond(v)}) && rnd.chance(4)) {{")
            out.append(f"{pad}  {target} = {'Records::null_records()' if f.elem == 'records' and not f.is_array else 'std::nullopt'};")
            out.append(f"{pad}}} else {{")
            inner = f"(*{target})" if f.optional else target
            if f.optional:
                out.append(f"{pad}  {target}.emplace();")
            out += fill_value_nonnull(f, inner, indent + 1)
            out.append(f"{pad}}}")
            return out
        return fill_value_nonnull(f, target, indent)

    def fill_value_nonnull(f, target, indent, whole=True):
        pad = "  " * indent
        if whole and f.is_array:
            return [f"{pad}{target}.resize(rnd.below(3));",
                    f"{pad}for (auto& el : {target}) {{",
                    *fill_elem(f, "el", indent + 1),
                    f"{pad}}}"]
        return fill_elem(f, target, indent)

    def fill_elem(f, target, indent):
        pad = "  " * indent
        t = f.elem
        if f.is_struct:
            return [f"{pad}fill_random({target}, wire_version, rnd);"]
        fn = {"bool": "boolean()", "int8": "integer<int8_t>()", "int16": "integer<int16_t>()",
              "int32": "integer<int32_t>()", "int64": "integer<int64_t>()",
              "uint16": "integer<uint16_t>()", "uint32": "integer<uint32_t>()",
              "float64": "real()", "string": "string()", "bytes": "bytes()", "uuid": "uuid()",
              "records": "records()"}[t]
        return [f"{pad}{target} = rnd.{fn};"]

    for m in msgs:
        for s in m.order + [m.root]:
            qual = m.name if s is m.root else f"{m.name}::{s.name}"
            decls.append(f"void fill_random({qual}& m, int16_t version, RandomSource& rnd);")
            body = [f"void fill_random({qual}& m, int16_t wire_version, RandomSource& rnd) {{"]
            for f in s.fields:
                cond = f.versions.cond(m.valid)
                if cond == "false":
                    continue
                body.append(f"  if ({cond}) {{")
                body += fill_value(f, f"m.{f.member}", 2)
                body.append("  }")
            body.append(f"  if ({m.name}::is_flexible(wire_version)) m.unknown_tagged_fields = rnd.unknown_tags();")
            body.append("}")
            defs.append("\n".join(body))
    header_decls = [d for d in decls if "::" not in d.split("(")[1].split("&")[0]]
    each = "\n".join(f"  f(std::type_identity<{m.name}>{{}});" for m in msgs)
    inc = "\n".join(f'#include "brokerd/protocol/messages/{m.stem}.h"' for m in msgs)
    header = f"""#pragma once
// Generated by proto/codegen.py: fills every field a version has with random values (tests only).
#include <cstdint>
#include <random>
#include <type_traits>

{inc}

namespace brokerd::protocol::testing {{

class RandomSource {{
 public:
  explicit RandomSource(uint64_t seed) : rng_(seed) {{}}
  bool chance(int one_in) {{ return rng_() % static_cast<uint64_t>(one_in) == 0; }}
  size_t below(size_t n) {{ return static_cast<size_t>(rng_() % n); }}
  bool boolean() {{ return (rng_() & 1) != 0; }}
  template <typename T>
  T integer() {{
    // Mix small values (varint boundaries, -1) with the full range.
    switch (rng_() % 4) {{
      case 0: return static_cast<T>(static_cast<int64_t>(rng_() % 5) - 1);
      case 1: return static_cast<T>(rng_() % 300);
      default: return static_cast<T>(rng_());
    }}
  }}
  double real();
  std::string string();
  Bytes bytes();
  Uuid uuid();
  Records records();
  std::vector<TaggedField> unknown_tags();

 private:
  std::mt19937_64 rng_;
}};

{chr(10).join(header_decls)}

// Calls f(std::type_identity<X>{{}}) for every enabled message.
template <typename F>
void for_each_message(F&& f) {{
{each}
}}

}}  // namespace brokerd::protocol::testing
"""
    source = f"""// Generated by proto/codegen.py. Do not edit.
#include "brokerd/protocol/messages/random_fill.h"

namespace brokerd::protocol::testing {{

double RandomSource::real() {{ return static_cast<double>(integer<int32_t>()) / 64.0; }}

std::string RandomSource::string() {{
  std::string s(below(7), 'a');
  for (auto& c : s) c = static_cast<char>('a' + below(26));
  return s;
}}

Bytes RandomSource::bytes() {{
  Bytes b(below(9));
  for (auto& x : b) x = static_cast<std::byte>(rng_());
  return b;
}}

Uuid RandomSource::uuid() {{
  Uuid u;
  for (auto& x : u.bytes) x = static_cast<uint8_t>(rng_());
  return u;
}}

Records RandomSource::records() {{
  Bytes b(below(40));
  for (auto& x : b) x = static_cast<std::byte>(rng_());
  return b.empty() ? Records::empty() : Records::of(SharedBytes::copy_of(b));
}}

std::vector<TaggedField> RandomSource::unknown_tags() {{
  // Tags far above any known tag, ascending, as a decoder would keep them.
  std::vector<TaggedField> out;
  if (!chance(3)) return out;
  uint32_t tag = 10000;
  for (size_t i = 0, n = 1 + below(2); i < n; ++i) {{
    tag += 1 + static_cast<uint32_t>(below(200));
    out.push_back(TaggedField{{tag, bytes()}});
  }}
  return out;
}}

{chr(10).join(decls)}

{chr(10).join(chr(10).join([d, ""]) for d in defs)}
}}  // namespace brokerd::protocol::testing
"""
    return header, source


# ---------------------------------------------------------------- driver

def load_all(proto):
    msgs = {}
    for folder in SCHEMA_DIRS:
        for path in sorted((proto / folder).glob("*.json")):
            spec = json.loads(path.read_text(encoding="utf-8"))
            msgs[spec["name"]] = (spec, folder)
    return msgs


def enabled_names(proto):
    names = []
    for line in (proto / "enabled.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def write_if_changed(path, text):
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proto", required=True)
    ap.add_argument("--out")
    ap.add_argument("--list", choices=["lib", "test"])
    ap.add_argument("--all", action="store_true")
    args = ap.parse_args()
    proto = pathlib.Path(args.proto)
    schemas = load_all(proto)
    names = list(schemas) if args.all else enabled_names(proto)
    for n in names:
        if n not in schemas:
            raise SystemExit(f"enabled.txt: no schema named {n}")
    if args.list:
        lib = [f"{file_stem(n)}{ext}" for n in names for ext in (".h", ".cc")]
        lib += ["api_table.h", "api_table.cc"]
        print(";".join(lib if args.list == "lib" else ["random_fill.h", "random_fill.cc"]))
        return
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    msgs = [Message(*schemas[n]) for n in names]
    for m in msgs:
        write_if_changed(out / f"{m.stem}.h", header_for(m))
        write_if_changed(out / f"{m.stem}.cc", source_for(m))
    h, c = api_table(msgs)
    write_if_changed(out / "api_table.h", h)
    write_if_changed(out / "api_table.cc", c)
    h, c = random_fill(msgs)
    write_if_changed(out / "random_fill.h", h)
    write_if_changed(out / "random_fill.cc", c)


if __name__ == "__main__":
    sys.exit(main())
