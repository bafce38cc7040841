"""The pages cannot drift from the program: every command shown with its output in README.md and
docs/**/*.md is run, and the output must be what the page shows; every relative link resolves.

The convention (docs/development.md "Documentation"): a fenced block whose first line is
`$ kubectl wap ...` is a transcript. Each `$ ` line is a command, the lines up to the next `$ ` line
(blank lines at its end dropped) are its output. Blocks that do not start with `$ kubectl wap` are
not checked (write commands you do not want run without the `$`).

How a command is run, so that the page shows what a user sees in an 80-column terminal:
- `kubectl wap ARGS` becomes `python -m kubectl_wap.cli ARGS` in the repository root (so
  docs/examples/... paths work), stdout a pseudo-terminal of 80 columns, no color (NO_COLOR=1),
  TZ=UTC, no kubeconfig. Only stdout is shown: warnings and progress go to stderr, unless the
  command ends with `2>&1` (then stderr goes to the same terminal, as a user would see it).
- A command must read `--demo` or `--snapshot FILE`: a page never runs against a live cluster.
  No shell: pipes, redirections and `$(...)` are refused.
- In an output, a line that is exactly `...` stands for the lines left out: the lines above it are
  the output's first lines and the lines below it its last (at most one `...` per output).

Compared exactly, after dropping trailing spaces; lines that hold an age (`4d6h`, `85m`) or an AGE
header are compared word by word with every age read as one word `<age>` (ages of a file without a
capture time are relative to now, and their width moves the columns after them); a measured time
(`0.14 s`) is read as `<time>`.

Refresh every page after an output change (rewrites only the blocks that differ, keeps each `...`
at its place, counting lines from each end):

    python -m tests.test_docs_drift --update [PAGE ...]
"""

from __future__ import annotations

import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.ptyrun import run_in_pty

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = 80
ELLIPSIS = "..."
AGE = re.compile(r"^(?:\d+[smhd](?:\d+[smh])?|\d+y(?:\d+d)?)$")
TIME = re.compile(r"\b\d+\.\d+ s\b")  # a measured time (`--optimal`'s solver line)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+)[^\n]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$", re.M | re.S)
SHELL = "();<>|&"  # unquoted, these make a shell command of a line


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True, slots=True)
class Step:
    """One `$ kubectl wap ...` line and the output the page shows under it."""

    command: str
    shown: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    start: int  # offsets of the body in the page's text
    end: int
    steps: tuple[Step, ...]

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def parse_body(body: str) -> tuple[Step, ...]:
    steps: list[Step] = []
    command, shown = None, []
    for ln in body.split("\n"):
        if ln.startswith("$ "):
            if command is not None:
                steps.append(Step(command, _trim(shown)))
            command, shown = ln[2:].strip(), []
        else:
            shown.append(ln.rstrip())
    if command is not None:
        steps.append(Step(command, _trim(shown)))
    return tuple(steps)


def _trim(lines: list[str]) -> tuple[str, ...]:
    while lines and not lines[-1]:
        lines = lines[:-1]
    return tuple(lines)


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    out = []
    for m in FENCE.finditer(text):
        body = m.group("body")
        if m.group("indent") or not body.startswith("$ kubectl wap"):
            continue
        out.append(Block(page, text.count("\n", 0, m.start()) + 1, m.start("body"), m.end("body"), parse_body(body)))
    return out


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


# ---- running a command as the page shows it ----------------------------------------------------

def argv_of(command: str) -> tuple[list[str], bool]:
    """(argv, stderr shown) of a page's command line; ValueError when it is not one we run."""
    merge = command.endswith("2>&1")
    if merge:
        command = command[:-4].rstrip()
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    words = list(lex)
    if "`" in command or any(w and all(c in SHELL for c in w) for w in words):
        raise ValueError(f"not a plain command (no pipes, redirections or $(...) in a transcript): {command}")
    if words[:2] != ["kubectl", "wap"]:
        raise ValueError(f"a transcript's commands start with `kubectl wap`: {command}")
    args = words[2:]
    if not any(a == "--demo" or a.startswith("--snapshot") for a in args):
        raise ValueError(f"a transcript reads --demo or --snapshot, never a live cluster: {command}")
    return [sys.executable, "-m", "kubectl_wap.cli", *args], merge


@cache
def run(command: str) -> tuple[str, ...]:
    """The command's stdout (and stderr with `2>&1`) in an 80-column pseudo-terminal, as lines."""
    argv, merge = argv_of(command)
    env = {"NO_COLOR": "1", "TZ": "UTC", "KUBECONFIG": os.devnull, "LC_ALL": "C.UTF-8"}
    with tempfile.TemporaryFile() as err:
        _, out = run_in_pty(argv, COLUMNS, env=env, timeout=300, stderr=None if merge else err, cwd=ROOT)
    return _trim([ln.rstrip() for ln in ANSI.sub("", out).split("\n")])


# ---- comparing ---------------------------------------------------------------------------------

def _aged(line: str) -> bool:
    words = line.split()
    return "AGE" in words or any(AGE.match(w) for w in words)


def _same_line(shown: str, actual: str) -> bool:
    if shown == actual:
        return True
    if TIME.search(shown) or TIME.search(actual):
        shown, actual = TIME.sub("<time>", shown), TIME.sub("<time>", actual)
        if shown == actual:
            return True
    if _aged(shown) or _aged(actual):
        norm = lambda s: ["<age>" if AGE.match(w) else w for w in s.split()]  # noqa: E731
        return norm(shown) == norm(actual)
    return False


def _same(shown: tuple[str, ...], actual: tuple[str, ...]) -> bool:
    return len(shown) == len(actual) and all(_same_line(s, a) for s, a in zip(shown, actual))


def matches(shown: tuple[str, ...], actual: tuple[str, ...]) -> bool:
    if shown.count(ELLIPSIS) > 1:
        raise ValueError("at most one `...` line per output")
    if ELLIPSIS not in shown:
        return _same(shown, actual)
    i = shown.index(ELLIPSIS)
    head, tail = shown[:i], shown[i + 1:]
    if len(actual) < len(head) + len(tail):
        return False
    return _same(head, actual[:len(head)]) and _same(tail, actual[len(actual) - len(tail):])


def refreshed(shown: tuple[str, ...], actual: tuple[str, ...]) -> tuple[str, ...]:
    """What the page should show: the actual output, keeping an `...` and as many lines around it."""
    if ELLIPSIS not in shown:
        return actual
    i = shown.index(ELLIPSIS)
    head, tail = len(shown[:i]), len(shown[i + 1:])
    if head + tail >= len(actual):
        return actual
    return (*actual[:head], ELLIPSIS, *(actual[len(actual) - tail:] if tail else ()))


def render(steps: list[tuple[str, tuple[str, ...]]]) -> str:
    parts = [f"$ {c}\n" + "".join(ln + "\n" for ln in out) for c, out in steps]
    return "\n".join(parts)


def update(page: Path) -> int:
    """Rewrite the blocks of a page whose outputs differ; the number of blocks rewritten."""
    text, n = page.read_text(), 0
    for b in reversed(blocks(page)):
        new, changed = [], False
        for s in b.steps:
            actual = run(s.command)
            ok = matches(s.shown, actual)
            changed |= not ok
            new.append((s.command, s.shown if ok else refreshed(s.shown, actual)))
        if changed:
            text = text[:b.start] + render(new) + text[b.end:]
            n += 1
    if n:
        page.write_text(text)
    return n


# ---- the tests -----------------------------------------------------------------------------------

BLOCKS = all_blocks()


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_every_transcript_is_what_the_program_prints(block: Block):
    for s in block.steps:
        actual = run(s.command)
        if not matches(s.shown, actual):
            want = "\n".join(refreshed(s.shown, actual))
            pytest.fail(f"{block.id}: the output of `{s.command}` is not what the page shows; it prints\n{want}\n"
                        "(refresh the pages: python -m tests.test_docs_drift --update)")


def test_the_pages_show_transcripts():
    """README shows five commands with their output; the check is not vacuous."""
    readme = [b for b in BLOCKS if b.page.name == "README.md" and b.page.parent == ROOT]
    assert sum(len(b.steps) for b in readme) >= 5
    assert len({b.page for b in BLOCKS}) >= 8


def test_an_edited_output_fails_and_update_restores_it(tmp_path: Path):
    """Edit one shown output (a number in the whatif headline, a spacing): the check fails; the
    refresh writes the program's output back (and keeps an `...` where it was)."""
    readme = ROOT / "README.md"
    b = next(b for b in blocks(readme) if "whatif" in b.steps[0].command)
    s = b.steps[0]
    assert matches(s.shown, run(s.command))
    i = next(i for i, ln in enumerate(s.shown) if re.search(r"\d", ln) and ln != ELLIPSIS)
    edited = list(s.shown)
    edited[i] = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), edited[i], count=1)
    assert not matches(tuple(edited), run(s.command))
    respaced = list(s.shown)
    j = next(j for j, ln in enumerate(s.shown) if "   " in ln and not _aged(ln))
    respaced[j] = respaced[j].replace("   ", "  ", 1)
    assert not matches(tuple(respaced), run(s.command))
    dropped = [ln for k, ln in enumerate(s.shown) if k != i]
    assert not matches(tuple(dropped), run(s.command))

    page = tmp_path / "page.md"
    text = readme.read_text()
    page.write_text(text[:b.start] + render([(s.command, tuple(edited))]) + text[b.end:])
    assert update(page) == 1
    assert page.read_text() == text[:b.start] + render([(s.command, s.shown)]) + text[b.end:]
    assert update(page) == 0


def test_ages_and_times_are_read_as_one_word_and_nothing_else_is():
    assert matches(("NAME   AGE", "a      4d6h   x"), ("NAME   AGE", "a      10d    x"))
    assert matches(("Solver: highs, 3 variables, 0.14 s.",), ("Solver: highs, 3 variables, 1.02 s.",))
    assert not matches(("Solver: highs, 3 variables, 0.14 s.",), ("Solver: highs, 4 variables, 0.14 s.",))
    assert not matches(("NAME   AGE", "a      4d6h   x"), ("NAME   AGE", "a      10d    y"))
    assert not matches(("NAME   PODS", "a      4"), ("NAME   PODS", "a      5"))


@pytest.mark.parametrize("command", ["kubectl wap whatif pod x -n a", "kubectl wap whatif pod x --demo | head",
                                     "kubectl wap snapshot --demo > x.json", "kubectl get pods --demo"])
def test_commands_that_are_not_transcripts_are_refused(command: str):
    with pytest.raises(ValueError):
        argv_of(command)


# ---- links ---------------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    h = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} (.+)$", text, re.M):
        s = _slug(m.group(1))
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else f"{s}-{k}")
    return out


@pytest.mark.parametrize("page", pages(), ids=[str(p.relative_to(ROOT)) for p in pages()])
def test_every_relative_link_resolves(page: Path):
    text = FENCE.sub("", page.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading with anchor #{anchor}")
    assert not bad, f"{page.relative_to(ROOT)}: " + "; ".join(bad)


def test_no_internal_issue_numbers_in_the_pages():
    """Pages say "since the 1.38 rules", not an internal issue number (upstream ones carry #)."""
    for p in pages():
        hits = re.findall(r"(?i)\bissues? \d+", p.read_text())
        assert not hits, f"{p.relative_to(ROOT)}: {hits}"


def test_the_rbac_table_names_exactly_the_roles_resources():
    """docs/security.md's RBAC table lists what deploy/rbac-readonly.yaml grants, no more, no less
    (the old README's list had fallen behind the role)."""
    import yaml

    role = next(d for d in yaml.safe_load_all((ROOT / "deploy" / "rbac-readonly.yaml").read_text()) if d["kind"] == "ClusterRole")
    granted = {r for rule in role["rules"] for r in rule.get("resources", [])}
    section = (ROOT / "docs" / "security.md").read_text().split("\n## RBAC\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    shown = {w for ln in rows for w in re.findall(r"`([a-z]+)`", ln.split(" | ")[0])}
    assert shown == granted


def test_readme_is_short_and_its_test_command_is_what_ci_runs():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    ci = (ROOT / ".ci" / "run").read_text()
    line = "pip install -e '.[test]' && python -m pytest"
    assert line in text
    assert ci.split("# --- the README's test command, verbatim ---\n", 1)[1].splitlines()[0] == line


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--update":
        print("usage: python -m tests.test_docs_drift --update [PAGE ...]", file=sys.stderr)
        return 2
    targets = [Path(a).resolve() for a in argv[1:]] or pages()
    for p in targets:
        n = update(p)
        if n:
            print(f"{p.relative_to(ROOT)}: {n} block(s) refreshed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
