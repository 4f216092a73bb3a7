#!/usr/bin/env python3
"""Derive brokerd's compact schema files from a checkout of Kafka's JSON message schemas.

Only facts needed by the code generator are kept (names, types, versions, tags, defaults);
documentation text and comments are dropped. Usage:
    derive_schemas.py [UPSTREAM_DIR] [PROTO_DIR]
UPSTREAM_DIR holds messages/, coordinator-records/, metadata-records/ and raft/.
"""
import json
import pathlib
import sys

TOP_KEYS = ["type", "name", "apiKey", "validVersions", "flexibleVersions",
            "deprecatedVersions", "latestVersionUnstable", "listeners", "fields", "commonStructs"]
FIELD_KEYS = ["name", "type", "versions", "nullableVersions", "taggedVersions", "tag",
              "default", "ignorable", "mapKey", "entityType", "flexibleVersions", "zeroCopy",
              "fields"]
STRUCT_KEYS = ["name", "versions", "fields"]

# upstream folder -> our folder
FOLDERS = {"messages": "messages", "raft": "messages",
           "coordinator-records": "coordinator", "metadata-records": "metadata"}


def strip_comments(text):
    """Removes // comments that are not inside a string literal."""
    out, i, in_str = [], 0, False
    while i < len(text):
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def keep(obj, keys, child_keys):
    res = {}
    for k in keys:
        if k not in obj:
            continue
        v = obj[k]
        if k == "fields":
            v = [keep(f, FIELD_KEYS, FIELD_KEYS) for f in v]
        elif k == "commonStructs":
            v = [keep(s, STRUCT_KEYS, FIELD_KEYS) for s in v]
        res[k] = v
    return res


def dump(schema):
    """One field per line: readable diffs without upstream's layout."""
    def fields_text(fields, indent):
        pad = " " * indent
        lines = []
        for f in fields:
            sub = f.get("fields")
            head = {k: v for k, v in f.items() if k != "fields"}
            text = json.dumps(head, separators=(", ", ": "))
            if sub is None:
                lines.append(pad + text)
            else:
                lines.append(pad + text[:-1] + ', "fields": [\n' +
                             fields_text(sub, indent + 2) + "\n" + pad + "]}")
        return ",\n".join(lines)

    parts = []
    for k, v in schema.items():
        if k == "fields":
            parts.append('  "fields": [\n' + fields_text(v, 4) + "\n  ]")
        elif k == "commonStructs":
            structs = []
            for s in v:
                head = {kk: vv for kk, vv in s.items() if kk != "fields"}
                t = json.dumps(head, separators=(", ", ": "))
                structs.append("    " + t[:-1] + ', "fields": [\n' +
                               fields_text(s["fields"], 6) + "\n    ]}")
            parts.append('  "commonStructs": [\n' + ",\n".join(structs) + "\n  ]")
        else:
            parts.append("  " + json.dumps(k) + ": " + json.dumps(v))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main():
    upstream = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/kafka-protocol")
    proto = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else pathlib.Path(__file__).parent)
    count = 0
    for src_folder, dst_folder in FOLDERS.items():
        dst = proto / dst_folder
        dst.mkdir(parents=True, exist_ok=True)
        for path in sorted((upstream / src_folder).glob("*.json")):
            schema = json.loads(strip_comments(path.read_text(encoding="utf-8")))
            ours = keep(schema, TOP_KEYS, FIELD_KEYS)
            # The dump must parse back to the same facts.
            assert json.loads(dump(ours)) == ours, path
            (dst / path.name).write_text(dump(ours), encoding="utf-8")
            count += 1
    print(f"wrote {count} schema files under {proto}")


if __name__ == "__main__":
    main()
