"""Reading a node's /metrics endpoint in the tests: Prometheus text format parsed strictly
(each family's # TYPE first, no duplicate samples)."""
import re
import urllib.error
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def unescape(v):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def parse(text):
    """{(name, frozenset(labels)): value}, checking each family's HELP/TYPE come first."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            assert name not in types, f"family {name} appears twice"
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        name, labels, value = m.groups()
        family = re.sub(r'_(bucket|sum|count)$', "", name) if name not in types else name
        assert family in types, f"{name} has no # TYPE before it"
        key = (name, frozenset((k, unescape(v)) for k, v in LABEL.findall(labels or "")))
        assert key not in samples, f"duplicate sample {line!r}"
        samples[key] = float(value)
    return samples, types


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def scrape(port):
    status, ctype, body = get(port, "/metrics")
    assert status == 200, body
    assert ctype.startswith("text/plain; version=0.0.4"), ctype
    return parse(body)
