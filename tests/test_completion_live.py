"""Live name completion (issue 33 item 6): names from the cluster of the current context (pending
groups and pods for whatif/explain, running ones for why-preempted), whatever the order of the
flags before the cursor; read-only, bounded, silent on any failure. Against the loopback server
holding the demo, so the live answers can be compared with the --demo ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from fake_apiserver import FakeApiServer, free_port, trickling_server, write_kubeconfig
from kubectl_wap.cli import app
from kubectl_wap.cli.completion import _BOOLEAN, candidates
from kubectl_wap.snapshot.io.files import DEMO_PATH

COMPLETE = str(Path(sys.executable).parent / "kubectl_complete-wap")


@pytest.fixture(scope="module")
def demo_cluster(tmp_path_factory: pytest.TempPathFactory):
    items = json.loads(DEMO_PATH.read_text())["items"]
    with FakeApiServer(items) as srv:
        yield srv, str(srv.write_kubeconfig(tmp_path_factory.mktemp("kc") / "kubeconfig"))


def _names(*words: str) -> list[str]:
    return candidates(list(words))[0]


def test_pending_groups_of_the_live_cluster_whatever_the_flag_order(demo_cluster) -> None:
    srv, kc = demo_cluster
    offline = _names("whatif", "podgroup", "--demo", "-n", "ml", "")
    assert offline == ["job-1", "small-eval", "finetune-nightly"]  # pending only: not the running train-llama
    for line in (["whatif", "--kubeconfig", kc, "-n", "ml", "podgroup", ""],
                 ["whatif", "podgroup", "--kubeconfig", kc, "-n", "ml", ""],      # flags after the kind
                 ["whatif", "--optimal", "podgroup", "--kubeconfig=" + kc, "-nml", ""],  # a boolean, =, attached -n
                 ["explain", "pg", "-n", "ml", "--kubeconfig", kc, ""]):
        assert sorted(_names(*line)) == sorted(offline), line
    assert srv.methods() == {"GET"}


def test_pending_pods_and_type_slash_name(demo_cluster) -> None:
    srv, kc = demo_cluster
    offline = _names("whatif", "pod", "--demo", "-n", "ml", "")
    assert offline and sorted(_names("whatif", "pod", "-n", "ml", "--kubeconfig", kc, "")) == sorted(offline)
    assert _names("whatif", "-n", "ml", "--kubeconfig", kc, "podgroup/sm") == ["podgroup/small-eval"]
    assert _names("whatif", "-n", "ml", "--demo", "podgroup/j") == ["podgroup/job-1"]


def test_why_preempted_offers_running_units(demo_cluster) -> None:
    srv, kc = demo_cluster
    assert _names("why-preempted", "--kubeconfig", kc, "") == ["pod", "podgroup", "workload"]
    assert _names("why-preempted", "workload", "-n", "research", "--kubeconfig", kc, "") == []  # not pod names
    live = _names("why-preempted", "podgroup", "-n", "ml", "--kubeconfig", kc, "")
    assert "train-llama" in live and "job-1" not in live  # running, not pending
    assert sorted(live) == sorted(_names("why-preempted", "podgroup", "-n", "ml", "--demo", ""))
    pods = _names("why-preempted", "pod", "-n", "research", "--kubeconfig", kc, "abl")
    assert pods == sorted(_names("why-preempted", "pod", "-n", "research", "--demo", "abl")) and "ablation-0" in pods


def test_the_entry_point_completes_from_the_current_context(demo_cluster) -> None:
    srv, kc = demo_cluster
    env = dict(os.environ, KUBECONFIG=kc)
    r = subprocess.run([COMPLETE, "__complete", "whatif", "podgroup", "-n", "ml", "j"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.stdout.split() == ["job-1", ":4"] and r.stderr == ""


def test_silent_and_bounded_when_the_cluster_does_not_answer(tmp_path: Path) -> None:
    refused = write_kubeconfig(tmp_path / "refused", f"http://127.0.0.1:{free_port()}")
    with trickling_server(b"HTTP/1.1 200 OK\r\n") as port:  # headers a byte at a time: only a deadline ends it
        slow = write_kubeconfig(tmp_path / "slow", f"http://127.0.0.1:{port}")
        for kc in (refused, slow):
            r = subprocess.run([COMPLETE, "__complete", "whatif", "podgroup", "--kubeconfig", str(kc), ""],
                               capture_output=True, text=True, timeout=30)  # COMPLETION_TIMEOUT is 2 s
            assert r.stdout.split() == [":4"] and r.stderr == ""


def test_every_boolean_flag_is_known_to_completion() -> None:
    """A boolean flag completion does not know would swallow the next word as its value
    (`whatif --optimal podgroup <TAB>` offered kinds again)."""
    flags: set[str] = set()

    def walk(c) -> None:  # noqa: ANN001
        for p in c.params:
            if getattr(p, "is_flag", False):
                flags.update(p.opts, getattr(p, "secondary_opts", []))
        for sub in (getattr(c, "commands", None) or {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    assert flags and flags <= _BOOLEAN, sorted(flags - _BOOLEAN)


@pytest.mark.parametrize("members, pending, running", [
    ([], True, False),               # pods still to come: `whatif podgroup NAME --replicas N`
    ([False, False], True, False),   # all pending
    ([True, False], True, True),     # partly running: a what-if for the rest, a victim too
    ([True, True], False, True),     # running
])
def test_which_groups_are_offered(members: list[bool], pending: bool, running: bool) -> None:
    from kubectl_wap.snapshot.io.names import group_wanted

    assert (group_wanted(members, False), group_wanted(members, True)) == (pending, running)
