"""Invariants of the two redaction rules issue 31 added, over generated inputs (hypothesis):

* integer label values' rank forms keep every comparison Gt/Lt and In make, and the label-value
  validity of each value;
* a CEL string literal is read to the same value whatever its spelling (quotes, raw, triple,
  escapes), and redaction gives every spelling of one value the same hashed value.
"""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from kubectl_wap.framework.plugins.dracel import compile_expr
from kubectl_wap.model.dra import cel_literals, cel_string_value
from kubectl_wap.model.terms import parse_int64
from kubectl_wap.snapshot.share.leaves import typed
from kubectl_wap.snapshot.share.redact import number_forms

_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

integer_strings = st.builds(
    lambda sign, zeros, n: sign + "0" * zeros + str(n),
    st.sampled_from(["", "", "-", "+"]), st.integers(0, 2), st.integers(0, 10**13),
)


@settings(max_examples=200, deadline=None)
@given(st.sets(integer_strings, min_size=1, max_size=12))
def test_rank_forms_keep_order_equality_and_validity(values: set[str]) -> None:
    forms = number_forms(values, set())
    assert set(forms) == values
    for a in values:
        fa = forms[a]
        assert parse_int64(fa) is not None
        assert bool(_LABEL_VALUE.match(fa)) == bool(_LABEL_VALUE.match(a))  # "-5" stays no label value
        assert len(fa) <= len(str(len(values))) + 3
        for b in values:
            fb = forms[b]
            assert (a == b) == (fa == fb)
            assert (parse_int64(a) < parse_int64(b)) == (parse_int64(fa) < parse_int64(fb))
            assert (parse_int64(a) == parse_int64(b)) == (parse_int64(fa) == parse_int64(fb))


def test_an_integer_that_is_a_name_is_left_to_the_name_hash() -> None:
    assert number_forms({"123", "7"}, {"123"}) == {"7": "1"}


def _spellings(s: str) -> list[str]:
    """Literals whose value is `s`, in every spelling CEL has that can hold it."""
    def esc(q: str) -> str:
        return "".join(f"\\x{ord(c):02x}" if c in "\\\n\r'\"" else c for c in s)

    out = [f'"{esc(chr(34))}"', f"'{esc(chr(39))}'", f'"""{esc(chr(34))}"""', "'" + "".join(
        f"\\u{ord(c):04x}" for c in s) + "'"]
    if "'" not in s and "\n" not in s and "\r" not in s:
        out.append(f"r'{s}'")
    if '"' not in s and "\n" not in s and "\r" not in s:
        out.append(f'R"{s}"')
    return out


text = st.text(st.characters(min_codepoint=32, max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(text)
def test_every_spelling_of_a_literal_reads_and_redacts_alike(s: str) -> None:
    seen = set()
    for lit in _spellings(s):
        assert cel_string_value(lit) == s, lit
        expr = f"device.driver == {lit}"
        compile_expr(expr)  # the CEL subset reads every spelling
        out = typed("cel", expr, lambda v: "H" + format(abs(hash(v)), "x"), None, None, None)
        ((start, end, closed),) = list(cel_literals(out))
        assert closed
        seen.add(cel_string_value(out[start:end]))
    assert len(seen) == 1  # one value, one redacted value
