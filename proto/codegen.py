#!/usr/bin/env python3
"""Generates C++ codecs from the schemas in proto/ (python3 standard library only).

    codegen.py --proto DIR --list lib|test     print the generated file names (for CMake)
    codegen.py --proto DIR --out DIR           write the files for the messages in enabled.txt
    codegen.py --proto DIR --out DIR --all     every schema (to check the generator itself)

Each message becomes one header and one source file. Nested structs live in a namespace of
their own and are aliased inside the message struct (ProduceRequest::TopicProduceData), so
they are complete types when the message is declared. The generator itself is the package
cppgen/ next to this file; this is its command line.
"""
import argparse
import pathlib
import sys

sys.dont_write_bytecode = True  # run from the build: leave no __pycache__ in the source tree

from cppgen.api_table import api_table  # noqa: E402
from cppgen.headers import header_for  # noqa: E402
from cppgen.random_fill import random_fill  # noqa: E402
from cppgen.schema import Message, enabled_names, file_stem, load_all  # noqa: E402
from cppgen.sources import source_for  # noqa: E402


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
