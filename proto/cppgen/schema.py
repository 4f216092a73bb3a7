"""Reading the JSON message schemas: every message of proto/, the enabled ones, and each
message's structs and fields in dependency order."""
import json
import re

from .cpp_types import PRIMITIVES, CppField
from .versions import Versions

SCHEMA_DIRS = ["messages", "coordinator", "metadata", "brokerd"]
ROOT_RESERVED = {"api_key", "min_version", "max_version", "is_flexible", "encode", "decode",
                 "unknown_tagged_fields", "schema_name", "record_type",
                 "latest_version_unstable"}


def snake(name):
    name = name.replace("KRaft", "Kraft")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def file_stem(message_name):
    return snake(message_name)


class Field(CppField):
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
