"""Version ranges of the schemas ("3+", "1-4", "2", "none") and the C++ conditions on
`wire_version` they become within a message's valid range."""


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
