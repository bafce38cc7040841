"""`kubectl wap mcp` (issue 36 item 1), driven by the official SDK's own client: in-process for the
tools and resources (each tool's answer on the demo equals the CLI's `-o json`, and validates against
the tool's output schema), and once over real stdio through the installed entry point. Without the
`mcp` extra the command is one line, exit 2, naming the pip command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[test]' installs it)")

import anyio  # noqa: E402 - after the skip: the SDK brings anyio
import jsonschema  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from kubectl_wap.cli.mcp_cmd import mcp_answers  # noqa: E402
from kubectl_wap.cli.mcpserver import RESOURCES, TOOLS, build_server, read_schema  # noqa: E402
from tests.test_cli import MANIFEST  # noqa: E402 - one hypothetical PodGroup manifest for both

BIN = Path(sys.executable).parent
WAP = str(BIN / "kubectl-wap") if (BIN / "kubectl-wap").exists() else shutil.which("kubectl-wap")


# (tool, arguments, the same question on the command line)
CASES = [
    ("whatif", {"kind": "podgroup", "name": "job-1", "namespace": "ml", "demo": True},
     ["whatif", "podgroup", "job-1", "-n", "ml", "--demo"]),
    ("whatif", {"kind": "podgroup/new", "namespace": "ml", "demo": True, "replicas": 8, "requests": "nvidia.com/gpu=1",
                "priorityClass": "high-priority", "victimNamespace": "research"},
     ["whatif", "podgroup/new", "-n", "ml", "--demo", "--replicas", "8", "--requests", "nvidia.com/gpu=1",
      "--priority-class", "high-priority", "--victim-namespace", "research"]),
    ("explain", {"kind": "pod", "name": "urgent-report", "namespace": "batch", "demo": True},
     ["explain", "pod", "urgent-report", "-n", "batch", "--demo"]),
    ("pending", {"allNamespaces": True, "demo": True}, ["pending", "-A", "--demo"]),
    ("why_preempted", {"kind": "pod", "name": "ablation-0", "namespace": "research", "demo": True},
     ["why-preempted", "pod", "ablation-0", "-n", "research", "--demo"]),
    ("simulate", {"demo": True, "maxCycles": 5}, ["simulate", "--demo", "--max-cycles", "5"]),
    ("rank", {"demo": True, "limit": 5, "for": "podgroup/job-1", "namespace": "ml"},
     ["rank", "--demo", "--limit", "5", "--for", "podgroup/job-1", "-n", "ml"]),
    ("diff", {"kind": "podgroup", "name": "job-1", "namespace": "ml", "demo": True, "to": "--feature-gates PodGroupPreemptionPolicy=true"},
     ["diff", "podgroup", "job-1", "-n", "ml", "--demo", "--to", "--feature-gates PodGroupPreemptionPolicy=true"]),
]


def cli_json(args: list[str]) -> dict:
    r = subprocess.run([WAP, *args, "-o", "json"], capture_output=True, text=True, timeout=300, env=dict(os.environ, NO_COLOR="1"))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def with_client(fn):
    async def go():
        async with Client(build_server(mcp_answers(), "test")) as client:
            return await fn(client)

    return anyio.run(go)


def test_tools_are_listed_with_the_reports_schemas_and_read_only():
    tools = with_client(lambda c: c.list_tools()).tools
    assert [t.name for t in tools] == ["whatif", "explain", "pending", "why_preempted", "simulate", "rank", "diff"]
    for t, spec in zip(tools, TOOLS):
        assert t.output_schema == read_schema(spec.schema), t.name
        assert t.input_schema["type"] == "object" and t.input_schema["additionalProperties"] is False
        assert t.annotations.read_only_hint is True and t.annotations.destructive_hint is False
        assert t.description and "-o json" in t.description


@pytest.mark.parametrize("tool,args,cli", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_tool_answers_the_demo_as_the_cli_does(tool: str, args: dict, cli: list[str]):
    r = with_client(lambda c: c.call_tool(tool, args))
    assert not r.is_error, r.content[0].text
    assert r.structured_content == cli_json(cli)
    jsonschema.validate(r.structured_content, read_schema(next(t.schema for t in TOOLS if t.name == tool)))
    summary, body = r.content[0].text, r.content[1].text
    assert "\n" not in summary and len(summary) > 20, summary
    assert json.loads(body) == r.structured_content


def test_a_manifest_as_text_is_the_clis_dash_f(tmp_path):
    f = tmp_path / "job.yaml"
    f.write_text(MANIFEST)
    r = with_client(lambda c: c.call_tool("whatif", {"manifest": MANIFEST, "replicas": 3, "namespace": "ml", "demo": True}))
    assert not r.is_error, r.content[0].text
    assert r.structured_content == cli_json(["whatif", "-f", str(f), "--replicas", "3", "-n", "ml", "--demo"])
    assert r.structured_content["preemptor"]["name"] == "hypo-train"


def test_summaries_say_the_verdict_in_words():
    r = with_client(lambda c: c.call_tool("whatif", CASES[0][1]))
    text = r.content[0].text
    assert text.startswith("Preempt for PodGroup ml/job-1:"), text
    assert "Victim pods by namespace: research 7, batch 2, ml 1." in text
    r = with_client(lambda c: c.call_tool("diff", CASES[-1][1]))
    assert r.content[0].text.startswith("The scenarios "), r.content[0].text


@pytest.mark.parametrize("tool,args,says", [
    ("whatif", {"kind": "podgroup", "name": "job1", "namespace": "ml", "demo": True}, "did you mean 'job-1'?"),
    ("whatif", {"kind": "podgroup", "name": "job-1", "demo": True, "replicas": 0}, "--replicas must be between 1"),
    ("diff", {"kind": "podgroup", "name": "job-1", "namespace": "ml", "demo": True, "to": "--nope"}, "--to: No such option: --nope"),
    ("why_preempted", {"kind": "pod", "demo": True}, "missing argument(s) name"),
    ("rank", {"demo": True, "colour": "red"}, "unknown argument(s) colour"),
    ("whatif", {"snapshot": "/nonexistent/snap.json", "kind": "pod", "name": "x"}, "/nonexistent/snap.json"),
])
def test_errors_are_one_line_tool_errors_not_crashes(tool: str, args: dict, says: str):
    r = with_client(lambda c: c.call_tool(tool, args))
    assert r.is_error
    text = r.content[0].text
    assert text.startswith("error: ") and says in text and "\n" not in text and "Traceback" not in text, text


def test_resources_are_the_demo_and_the_schemas():
    async def go(c):
        listed = (await c.list_resources()).resources
        texts = {str(x.uri): (await c.read_resource(str(x.uri))).contents[0].text for x in listed}
        return listed, texts

    listed, texts = with_client(go)
    assert [str(x.uri) for x in listed] == [r[0] for r in RESOURCES]
    demo = json.loads(texts["kubectl-wap://demo/snapshot.json"])
    assert any(o.get("kind") == "PodGroup" and o["metadata"]["name"] == "job-1" for o in demo["items"])
    assert json.loads(texts["kubectl-wap://schema/whatif.json"]) == read_schema("schema.json")


def test_the_installed_command_serves_over_stdio():
    params = StdioServerParameters(command=WAP, args=["mcp"], env=dict(os.environ))

    async def go():
        async with Client(params) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            r = await c.call_tool("pending", {"allNamespaces": True, "demo": True, "scaleUp": False})
            return names, r

    names, r = anyio.run(go)
    assert "whatif" in names and not r.is_error
    assert r.structured_content == cli_json(["pending", "-A", "--demo", "--no-scale-up"])


def test_without_the_extra_the_command_is_one_line_naming_the_pip_command():
    block = ("import sys, importlib.abc\n"
             "class NoMcp(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name == 'mcp' or name.startswith('mcp.'):\n"
             "            raise ImportError(name)\n"
             "sys.meta_path.insert(0, NoMcp())\n"
             "sys.argv = ['kubectl-wap', 'mcp']\n"
             "from kubectl_wap.cli import main\n"
             "main()\n")
    r = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert r.stderr.strip() == ("error: the MCP server needs the mcp extra: pip install '.[mcp]' in a clone of kubectl-wap "
                                "(the package is not on PyPI yet), or pip install 'mcp>=2.3,<3'")
    assert r.stdout == ""


def test_the_docs_client_configurations_are_valid_json():
    section = (Path(__file__).resolve().parent.parent / "docs" / "commands" / "mcp.md").read_text()
    blocks = [b.split("```", 1)[0] for b in section.split("```json\n")[1:]]
    assert len(blocks) == 2
    for b in blocks:
        servers = json.loads(b)
        entry = (servers.get("mcpServers") or servers["servers"])["kubectl-wap"]
        assert entry["command"] == "kubectl-wap" and entry["args"] == ["mcp"]


def test_without_a_snapshot_a_tool_reads_the_kubeconfigs_cluster_with_gets_only(tmp_path: Path):
    sys.path.insert(0, str(Path(__file__).parent))
    from fake_apiserver import FakeApiServer
    from test_diagnose_live import OBJECTS

    with FakeApiServer(OBJECTS) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kubeconfig")
        r = with_client(lambda c: c.call_tool("why_preempted", {"kind": "pod", "name": "victim", "namespace": "a", "kubeconfig": str(kc)}))
        methods = srv.methods()
    assert not r.is_error, r.content[0].text
    assert r.structured_content["suspects"][0]["name"] == "winner"
    assert r.content[0].text == "Pod a/victim was preempted; the most likely preemptor is Pod a/winner."
    assert methods == {"GET"}


def test_the_kueue_demo_answers_both_stages_as_the_cli_does(tmp_path):
    """On the Kueue demo (snapshot `@demo-kueue`, listed as a resource) a Job sent to a Kueue queue
    gets Kueue's stage first (`queueing`: admitted once team-b/train-7 is evicted), as `whatif -f`."""
    job = Path(__file__).resolve().parent.parent / "docs" / "examples" / "kueue-job.yaml"
    r = with_client(lambda c: c.call_tool("whatif", {"manifest": job.read_text(), "snapshot": "@demo-kueue"}))
    assert not r.is_error, r.content[0].text
    assert r.structured_content == cli_json(["whatif", "-f", str(job), "--snapshot", "@demo-kueue"])
    assert [e["workload"] for e in r.structured_content["queueing"]["evictions"]] == ["team-b/train-7"]
    texts = with_client(lambda c: c.read_resource("kubectl-wap://demo/kueue-snapshot.json"))
    assert any(o.get("kind") == "ClusterQueue" for o in json.loads(texts.contents[0].text)["items"])
