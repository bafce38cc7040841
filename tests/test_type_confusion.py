"""Issue 31 item 5: the type-confusion sweep. Each field of a small cluster (tests/typeconfusion.py:
nodes, pods with every scheduling stanza, a PodGroup and a CompositePodGroup, a PDB, PriorityClasses,
a Namespace, DRA, storage and admission objects, a Preempted event) is set in turn to a string, an
integer, a list, a map, null and a boolean, and a command is run on the file in-process. Every run
exits 0 or 2, never 1 (a Python error); an exit 2 is one line naming the file, the object (its name
or its place) and the field.

How much runs:
- by default (CI) every field once, the type and the command rotating (728 runs, ~25 s): a bounded
  sample, one sixth of the field x type product. On main it found 4 of the 17 defects the whole
  product found; those 17 are kept below as cases of their own (test_found_by_the_sweep);
- WAP_SWEEP=types: every field with every type, the command rotating (4,368 runs, 3-7 min);
- WAP_SWEEP=full: every field, every type, every command (39,312 runs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
import typeconfusion as tc  # noqa: E402

from kubectl_wap.cli import app  # noqa: E402

runner = CliRunner()


def _run(argv: list[str], file: Path) -> tuple[int, str]:
    r = runner.invoke(app, [*argv, "--snapshot", str(file), "--color", "never"])
    return r.exit_code, r.stderr


def _plan() -> list[tuple[tc.Mutation, list[str]]]:
    mode = os.environ.get("WAP_SWEEP", "")
    base = tc.cluster()
    ms = list(tc.mutations(base))
    n_types = len(tc.VALUES)
    out = []
    for k, m in enumerate(ms):
        field_no = k // n_types
        if mode == "full":
            out += [(m, c) for c in tc.COMMANDS]
        elif mode == "types" or k % n_types == field_no % n_types:
            out.append((m, tc.COMMANDS[(k + field_no) % len(tc.COMMANDS)]))
    return out


def test_every_field_of_every_type_exits_0_or_2_with_one_named_line(tmp_path: Path) -> None:
    base = tc.cluster()
    f = tmp_path / "cluster.json"
    failures = []
    plan = _plan()
    for m, argv in plan:
        tc.write_list(f, m.items(base))
        code, stderr = _run(argv, f)
        why = tc.check(m, argv, f, code, stderr)
        if why:
            failures.append(f"{argv[0]} {m}: {why}")
    assert not failures, f"{len(failures)} of {len(plan)} runs:\n" + "\n".join(failures[:40])


def test_the_unmutated_cluster_runs_every_command() -> None:
    """The sweep means something only if the cluster itself is read and analysed by every command."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "cluster.json"
        tc.write_list(f, tc.cluster())
        for argv in tc.COMMANDS:
            code, stderr = _run(argv, f)
            assert code == 0, (argv, stderr)


# What the sweep found on main (each exited 1 with a Python error, or 2 without naming the field
# or the file), kept as cases of their own so they hold whatever the sample picks.
FOUND = [
    ("whatif", "item 2 spec.containers.0.resources", "str"),  # defaulting.py: pod-level limits
    ("rank", "item 2 spec.containers.0.resources", "list"),
    ("simulate", "item 2 spec.containers", "bool"),
    ("simulate", "item 2 metadata", "bool"),  # owners.py _tap
    ("pending", "item 5 metadata.namespace", "dict"),  # evidence.py claim_blockers
    ("why-preempted", "item 6 metadata.namespace", "list"),  # evidence.py collect_evidence
    ("why-preempted", "item 15 involvedObject", "str"),
    ("snapshot -o", "item 0 status", "bool"),  # strip.py _node
    ("snapshot -o", "item 0 status.nodeInfo", "str"),
    ("snapshot -o", "item 13 status", "list"),  # strip.py _namespace
    ("snapshot -o", "item 5 spec.volumes", "bool"),
    ("snapshot -o", "item 2 spec.containers", "int"),
    ("snapshot --redact", "item 2 spec.tolerations.0.operator", "list"),  # allowlist.typed: unhashable
    ("snapshot --redact", "item 0 apiVersion", "dict"),
    ("snapshot -o", "item 3 kind", "int"),  # no file, no item
    ("diff", "item 0 status.images.0.sizeBytes", "str"),  # "image size", not the field
    ("whatif", "item 19 spec.devices.0.capacity.memory.value", "dict"),  # dra.py: "capacity memory"
]


@pytest.mark.parametrize("cmd, where, typ", FOUND)
def test_found_by_the_sweep(tmp_path: Path, cmd: str, where: str, typ: str) -> None:
    item_s, dotted = where.split(" ", 1)[1].split(" ", 1)
    path = tuple(int(s) if s.isdigit() else s for s in dotted.split("."))
    m = tc.Mutation(int(item_s), path, typ)
    argv = next(c for c in tc.COMMANDS if " ".join(c).startswith(cmd))
    f = tmp_path / "cluster.json"
    tc.write_list(f, m.items(tc.cluster()))
    code, stderr = _run(argv, f)
    assert tc.check(m, argv, f, code, stderr) is None, stderr
