"""The mutation catalogue stays applicable (tests/mutants.py): every mutant's original text occurs
exactly once in its module and its test files exist. A refactor that moves a rule's code without
moving its mutant would otherwise only show at the next (15-minute) catalogue run, as a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import mutants

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = [m for v in vars(mutants).values() if isinstance(v, list) for m in v if isinstance(m, mutants.Mutant)]


def test_the_catalogue_is_found() -> None:
    assert len(CATALOGUE) >= 60, f"got {len(CATALOGUE)} mutants, want the whole catalogue (tests/README.md lists 64)"
    assert len({m.id for m in CATALOGUE}) == len(CATALOGUE), "mutant ids must be unique (-k selects by id)"


@pytest.mark.parametrize("m", CATALOGUE, ids=lambda m: m.id)
def test_mutant_applies(m: mutants.Mutant) -> None:
    text = (ROOT / "kubectl_wap" / m.path).read_text()
    assert text.count(m.old) == 1, (f"got the original text {text.count(m.old)} time(s) in kubectl_wap/{m.path}, want once "
                                    "(the rule's code moved: move the mutant with it)")
    for t in m.tests:
        assert (ROOT / t.split("::")[0]).is_file(), f"test file {t} of mutant {m.id} does not exist"
