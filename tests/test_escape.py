"""report/escape.py printable_doc: the document itself when no string needs escaping (decided on
its JSON text), an escaped copy otherwise; either way every string reads as printable() makes it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_wap.report import escape
from kubectl_wap.report.escape import printable, printable_doc

# Every character printable() escapes, plus neighbours that must pass through untouched.
UNSAFE = ["\x00", "\x07", "\n", "\r", "\t", "\x1b", "\x7f", "\x80", "\x9f", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069",
          # issue 31: zero-width and other invisible format characters, line/paragraph separators
          "\u200b", "\u200d", "\u2060", "\ufeff", "\xad", "\u2028", "\u2029", "\U000e0041", "\u061c"]
SAFE = ["a", "é", "\u00a0", "\u2070", "\u0301", "\u3000", "\\", '"', "n", "日", "\U0001f600"]

_text = st.lists(st.sampled_from(UNSAFE + SAFE) | st.text(max_size=3), max_size=6).map("".join)
_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(_text | st.integers(), inner, max_size=4),
    max_leaves=25,
)


def _strings(doc):
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for k, v in doc.items():
            if isinstance(k, str):
                yield k
            yield from _strings(v)
    elif isinstance(doc, (list, tuple)):
        for v in doc:
            yield from _strings(v)


@settings(max_examples=400, deadline=None)
@given(_docs)
def test_same_as_escaping_every_string(doc):
    out = printable_doc(doc)
    assert out == escape._escaped_copy(doc)
    assert all(printable(s) == s for s in _strings(out))
    if out is doc:  # returned as is: nothing in it needed escaping
        assert all(printable(s) == s for s in _strings(doc))


def test_each_unsafe_character_is_caught_in_values_and_keys():
    for ch in UNSAFE:
        for doc in ({"name": f"x{ch}y"}, {f"k{ch}": 1}, [("t", f"{ch}")]):
            out = printable_doc(doc)
            assert out is not doc and all(printable(s) == s for s in _strings(out)), repr(ch)


def test_clean_document_is_not_copied():
    doc = {"units": [{"name": "a\\nb", "n": 1}], "text": "é 日 \u00a0"}
    assert printable_doc(doc) == doc
    assert printable_doc({"units": [{"name": "plain", "n": 1}]}) is not None
    clean = {"units": [{"name": "plain", "n": 1}]}
    assert printable_doc(clean) is clean
