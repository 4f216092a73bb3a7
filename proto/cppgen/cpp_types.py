"""The C++ side of a schema field: its type, its default value as an expression, and the
conditions for null and flexible encoding (a mixin of schema.Field)."""
import json

from .versions import Versions

PRIMITIVES = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t", "float64": "double",
    "string": "std::string", "bytes": "Bytes", "uuid": "Uuid", "records": "Records",
}
INT_LIMITS = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1),
              "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1),
              "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1)}


class CppField:
    """C++ type mapping for a schema.Field (uses its elem, is_array, optional, default, msg)."""

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
