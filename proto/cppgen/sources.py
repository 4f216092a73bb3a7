"""One source file per message: encode and decode of every struct, each field written or read
only in the versions it exists in, tagged fields in flexible versions."""


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
