"""``dradash why`` (DESIGN "The terminal"): run as installed, a subprocess reading a bundle from
a pipe, in an environment with no database and no Django at all."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.allocator import attack_bundle
from dradash.demo.cluster import build

DRADASH = Path(sys.executable).with_name("dradash")
# The checkout these tests are in: its dradash package is the one the command runs, whichever
# checkout the console script was installed from (an editable install maps it to its own).
CHECKOUT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def no_django(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory that, first on PYTHONPATH, makes ``import django`` fail: the command must
    not need it."""
    root = tmp_path_factory.mktemp("no-django")
    (root / "django").mkdir()
    (root / "django" / "__init__.py").write_text(
        "raise ImportError('dradash why must not import Django')\n"
    )
    return root


@pytest.fixture(scope="module")
def bundle() -> bytes:
    """The demo's later snapshot as `kubectl get … -o json` prints it: one List, no
    SnapshotInfo."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": build(later=True)}).encode()


def run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None, no_django: Path
) -> subprocess.CompletedProcess[bytes]:
    clean = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join([str(no_django), str(CHECKOUT)]),
        **(env or {}),
    }
    assert "DATABASE_URL" not in clean and "DJANGO_SETTINGS_MODULE" not in clean
    return subprocess.run(
        [str(DRADASH), *args], input=stdin, capture_output=True, env=clean, timeout=120
    )


def test_it_is_installed_as_a_console_script() -> None:
    assert DRADASH.exists(), "pip install puts `dradash` beside python"


def test_a_stuck_pod_from_a_pipe_prints_the_verdict_and_exits_1(bundle, no_django) -> None:
    result = run("why", "pod", "llm-eval/eval-h200", "-f", "-", stdin=bundle, no_django=no_django)
    assert result.returncode == 1, result.stderr.decode()
    text = result.stdout.decode()
    assert "\033[" not in text, "no colour when piped"
    lines = text.splitlines()
    assert lines[0] == "Pod llm-eval/eval-h200"
    assert lines[1] == "claim-unallocated (no-matching-devices)"
    assert "✗ Claim unallocated" in lines[2] and "✓ Pod pending" in lines[2]
    assert "No device in the cluster matches request gpu of llm-eval/h200-eval" in text
    assert "Allocator: cannot allocate" in text
    assert "41  devices of current pools" in text
    assert " 0  pass the request's selectors  ← too few here" in text
    for heading in ("Evidence", "Next steps"):
        assert heading in lines
    assert "kubectl describe resourceclaim h200-eval -n llm-eval" in text
    assert result.stderr == b""


def test_a_gang_member_prints_its_gangs_verdict_and_its_own(bundle, no_django) -> None:
    pod = "llm-train/llm-train-workers-0-0-451bf"
    result = run("why", "pod", pod, "-f", "-", stdin=bundle, no_django=no_django)
    assert result.returncode == 1, result.stderr.decode()
    text = result.stdout.decode()
    assert text.splitlines()[1] == "claim-unallocated (gang-does-not-fit)"
    assert "but only 3 fit at once; the first that does not is Pod llm-train-workers-0-3" in text
    assert "Judged alone: claim-unallocated (schedulable-now)" in text


def test_a_healthy_pod_exits_0(bundle, no_django) -> None:
    result = run("why", "pod", "gpu-test2/pod0", "-f", "-", stdin=bundle, no_django=no_django)
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines()[1] == "healthy (running)"


def test_a_claim_is_judged_as_its_page_judges_it(bundle, no_django) -> None:
    result = run("why", "claim", "gpu-test2/single-gpu", stdin=bundle, no_django=no_django)
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode()
    assert "ResourceClaim gpu-test2/single-gpu" in text
    assert "Pod pod2 cannot use it yet: allocated-not-bound (node-conflict)" in text
    assert "[info] shared-claim" in text


REAL_DUMPS = CHECKOUT / "tests" / "fixtures" / "real-dumps"


@pytest.mark.parametrize(
    ("files", "ref"),
    [
        (["rocm-blogs__dra-gpu__resourceclaim-allocated.yaml"], "gpu-test/pod1-gpu-7j2k4"),
        (
            [
                "cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml",
                "cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml",
            ],
            "gpu-test1/dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk",
        ),
    ],
)
def test_a_claim_of_a_bundle_without_pods_is_unknown_and_exits_2(
    no_django, files: list[str], ref: str
) -> None:
    """Issue 27: real dumps of claims without their Pods. Neither healthy nor stuck: the
    verdict is printed, says which kind to add, and the exit status is 2."""
    args = [arg for name in files for arg in ("-f", str(REAL_DUMPS / name))]
    result = run("why", "claim", ref, *args, no_django=no_django)
    assert result.returncode == 2, result.stderr.decode()
    lines = result.stdout.decode().splitlines()
    assert lines[1] == "unknown (consumers-unknown): allocated-not-bound so far; missing Pods"
    assert "✗" not in lines[2]
    assert "the snapshot has no pods, so whether a Pod uses it is unknown" in lines[4]
    assert "kubectl get pods -A -o json > pods.json" in result.stdout.decode()
    assert result.stderr == b""
    body = json.loads(run("why", "claim", ref, *args, "--json", no_django=no_django).stdout)
    assert (body["severity"], body["unknown"]) == ("unknown", ["Pod"])


def test_colour_on_request_and_never_with_no_color(bundle, no_django) -> None:
    args = ("why", "pod", "llm-eval/eval-h200", "-f", "-")
    coloured = run(*args, "--color", "always", stdin=bundle, no_django=no_django)
    assert "\033[1;31mclaim-unallocated\033[0m" in coloured.stdout.decode()
    plain = run(*args, "--color", "never", stdin=bundle, no_django=no_django)
    assert "\033[" not in plain.stdout.decode()


# What the probe put in cluster strings: clear the screen, set the window title, an OSC 8
# hyperlink, a C1 CSI (one byte, 0x9b) and a right-to-left override.
HOSTILE = (
    "\x1b[2J\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
    "\x9b31m\u202egnp.exe\n"
)
ESCAPED = (
    "\\x1b[2J\\x1b]0;pwned\\x07\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\"
    "\\x9b31m\\u202egnp.exe\\n"
)


@pytest.fixture(scope="module")
def hostile_bundle() -> bytes:
    """The demo cluster with HOSTILE before every event message and Pod condition message."""
    items = build(later=True)
    for obj in items:
        if obj["kind"] == "Event":
            obj["message"] = HOSTILE + obj.get("message", "")
        for condition in (
            obj.get("status", {}).get("conditions", []) if obj["kind"] == "Pod" else []
        ):
            condition["message"] = HOSTILE + condition.get("message", "")
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()


@pytest.mark.parametrize("colour", ["never", "always"])
def test_cluster_strings_are_printed_with_their_control_characters_escaped(
    hostile_bundle, no_django, colour
) -> None:
    args = ("why", "pod", "gpu-test2/pod2", "-f", "-", "--color", colour)
    result = run(*args, stdin=hostile_bundle, no_django=no_django)
    assert result.returncode == 1, result.stderr.decode()
    text = result.stdout.decode()
    assert ESCAPED in text  # the event's message is shown, its controls visible as escapes
    # The only escape sequences are the colours dradash writes itself (SGR: ESC [ … m).
    assert re.findall(r"\x1b(?!\[[0-9;]*m)", text) == []
    assert ("\x1b[" in text) is (colour == "always")
    for character in ("\x07", "\x9b", "\u202e"):
        assert character not in text


def test_json_keeps_cluster_strings_but_writes_their_controls_as_escapes(
    hostile_bundle, no_django
) -> None:
    args = ("why", "pod", "gpu-test2/pod2", "-f", "-", "--json")
    result = run(*args, stdin=hostile_bundle, no_django=no_django)
    text = result.stdout.decode()
    assert re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", text) == []
    assert json.dumps(HOSTILE)[1:-1] in json.dumps(json.loads(text))  # the strings are kept


def test_an_error_message_quoting_the_bundle_is_escaped_too(no_django) -> None:
    result = run("why", "pod", "ns/x\x1b]0;pwned\x07", "-f", "-", stdin=b"[]", no_django=no_django)
    assert result.returncode == 2
    assert b"\x1b" not in result.stderr and b"\\x1b]0;pwned\\x07" in result.stderr


def test_colour_on_a_terminal_unless_no_color(bundle, tmp_path, no_django) -> None:
    """On a terminal (a pseudo-terminal here) the text is coloured, unless NO_COLOR is set."""
    import pty

    path = tmp_path / "bundle.json"
    path.write_bytes(bundle)
    for env, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        leader, follower = pty.openpty()
        proc = subprocess.Popen(
            [str(DRADASH), "why", "pod", "llm-eval/eval-h200", "-f", str(path)],
            stdout=follower,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={"PATH": os.environ["PATH"], "PYTHONPATH": str(no_django), **env},
        )
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        assert proc.wait(timeout=120) == 1, proc.stderr.read() if proc.stderr else ""
        assert (b"\033[" in out) is coloured, env


def test_json_is_the_diagnosis_apis_json(bundle, no_django) -> None:
    result = run("why", "pod", "llm-eval/eval-h200", "--json", stdin=bundle, no_django=no_django)
    assert result.returncode == 1
    body = json.loads(result.stdout)
    assert set(body) == {
        "stage",
        "reason",
        "severity",
        "unknown",
        "summary",
        "evidence",
        "next_steps",
        "findings",
        "chain",
        "history",
    }
    assert (body["stage"], body["reason"]) == ("claim-unallocated", "no-matching-devices")
    assert (body["severity"], body["unknown"]) == ("error", [])
    assert body["chain"]["pod"]["name"] == "eval-h200"
    assert body["history"] == []


def test_several_files_make_one_snapshot(tmp_path, no_django) -> None:
    objects = build(later=True)
    pods = [o for o in objects if o["kind"] == "Pod"]
    rest = [o for o in objects if o["kind"] != "Pod"]
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "List", "items": pods}))
    (tmp_path / "rest.json").write_text(json.dumps(rest))
    result = run(
        "why",
        "pod",
        "llm-eval/eval-h200",
        "-f",
        str(tmp_path / "pods.json"),
        "-f",
        str(tmp_path / "rest.json"),
        no_django=no_django,
    )
    assert result.returncode == 1, result.stderr.decode()
    assert "claim-unallocated (no-matching-devices)" in result.stdout.decode()


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("pod", "llm-eval/no-such-pod"), "bundle", "there is no Pod llm-eval/no-such-pod"),
        (("claim", "llm-eval/nothing"), "bundle", "there is no ResourceClaim llm-eval/nothing"),
        (("pod", "just-a-name"), "bundle", "give the object as NAMESPACE/NAME"),
        (("pod", "a/b"), b"{not json", "<stdin>"),
        (("pod", "a/b"), b'{"kind": "Secret", "apiVersion": "v1", "metadata": {}}', "Secret"),
        (("pod", "a/b", "-f", "/no/such/file.json"), b"", "/no/such/file.json"),
        (("pod", "a/b", "--version", "banana"), "bundle", "--version 'banana'"),
        (("pod", "a/b", "--version", "1.99"), "bundle", "the rules of Kubernetes 1.32 to 1.37"),
        (("pod", "a/b", "--feature-gates", "DRAAdminAccess=yes"), "bundle", "NAME=true"),
        (("node", "a/b"), "bundle", "invalid choice"),
        (
            ("pod", "a/b"),
            b'{"kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1alpha2", '
            b'"metadata": {"name": "s"}}',
            "API of classic DRA (Kubernetes 1.30 and earlier)",
        ),
        (
            ("pod", "a/b"),
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: a}\n"
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: c, namespace: a}\n",
            "has the key 'apiVersion' twice (again at line 4, first at line 1)",
        ),
    ],
)
def test_unusable_input_or_no_such_object_exits_2(
    bundle, no_django, args: tuple[str, ...], stdin: Any, message: str
) -> None:
    data = bundle if stdin == "bundle" else stdin
    result = run("why", *args, stdin=data, no_django=no_django)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr.decode()
    assert result.stdout == b""


def test_version_judges_by_an_older_release(bundle, no_django) -> None:
    """Kubernetes 1.34 still allocates from incomplete pools (1.35 and later do not): the
    version changes the verdict's words, never the exit status's meaning."""
    for version in ("v1.34", "1.36.2"):
        result = run(
            "why", "pod", "gpu-test2/pod0", "--version", version, stdin=bundle, no_django=no_django
        )
        assert result.returncode == 0, result.stderr.decode()


def test_feature_gates_judge_as_the_cluster_runs(no_django) -> None:
    """A 1.35 cluster with DRAPartitionableDevices on (alpha, off by default) allocates a MIG
    partition that consumes counters; with the defaults it cannot."""
    from dradash.dra.kinds import KINDS
    from tests.gated_cluster import OBJECTS

    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "i"},
        "spec": {"kinds": {kind: {"status": "ok"} for kind in KINDS}},  # all listed
    }
    data = json.dumps({"kind": "List", "items": [info, *OBJECTS]}).encode()
    verdicts = []
    for extra in ((), ("--feature-gates", "DRAPartitionableDevices=true")):
        result = run(
            "why", "pod", "ml/trainer", "--json", "--version", "v1.35", *extra,
            stdin=data, no_django=no_django,
        )  # fmt: skip
        body = json.loads(result.stdout)
        verdicts.append((body["stage"], body["reason"]))
    assert verdicts == [
        ("claim-unallocated", "feature-disabled"),
        ("claim-unallocated", "schedulable-now"),
    ]


def test_a_search_for_devices_that_runs_out_is_an_allocation_timeout(no_django) -> None:
    """benchmarks/allocator.py's attack: at 60 devices the search would take 2^31 calls; at
    36, 2^19 for 1.36+ (within the budget) but every order of them for 1.35."""
    long = run("why", "pod", "default/trainer", stdin=attack_bundle(60), no_django=no_django)
    assert long.returncode == 1, long.stderr.decode()
    out = long.stdout.decode()
    assert "allocation-timeout" in out
    assert "on the nodes the Pod may use: 1 timeout" in out
    assert '"node gpu-worker: timed out trying to allocate devices"' in out
    assert "filterTimeout" in out

    old = run(
        "why",
        "claim",
        "default/same-group",
        "--json",
        "--version",
        "v1.35.0",
        stdin=attack_bundle(36),
        no_django=no_django,
    )
    body = json.loads(old.stdout)
    assert (body["stage"], body["reason"]) == ("claim-unallocated", "allocation-timeout")
    assert (
        'kube-scheduler stops too, with "timed out trying to allocate devices"' in body["summary"]
    )


# --- the same verdict as the pages and the API --------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "ref"),
    [
        ("pod", "llm-eval/eval-h200"),
        ("pod", "gpu-test6/pod-5c8d7b9f4-qx2lm"),
        ("pod", "gpu-test2/pod2"),
        ("claim", "gpu-test2/single-gpu"),
        ("claim", "llm-eval/h200-eval"),
        ("claim", "ml-team/batch-ocr-gpu-w9p2v"),
    ],
)
def test_json_equals_the_api_for_the_same_bundle(
    api_client, tmp_path, no_django, kind: str, ref: str
) -> None:
    from dradash.snapshots.services import bundle_export
    from tests.stored import import_analysed

    path = tmp_path / "bundle.json"
    path.write_bytes(json.dumps({"kind": "List", "items": build(later=True)}).encode())
    snapshot = import_analysed(files=[("bundle.json", path.read_bytes())])
    exported = tmp_path / "export.json"
    exported.write_text("".join(bundle_export(snapshot)))
    namespace, name = ref.split("/")
    plural = "pods" if kind == "pod" else "claims"
    api = api_client.get(
        f"/api/v1/snapshots/{snapshot.pk}/{plural}/{namespace}/{name}/diagnosis"
    ).json()
    api["history"] = []
    for source in (path, exported):  # as kubectl prints it, and as dradash exports it
        result = run("why", kind, ref, "--json", "-f", str(source), no_django=no_django)
        expected = 0 if api["stage"] == "healthy" else 2 if api["unknown"] else 1
        assert result.returncode == expected, result.stderr
        assert json.loads(result.stdout) == api, source.name


# --- extended resources backed by DRA (issue 23) ------------------------------------------


@pytest.fixture(scope="module")
def gpu_lab_bundle() -> bytes:
    """tests/extended_cluster.py's later snapshot: pod1 asks for example.com/gpu: 1 without
    spec.resourceClaims while every GPU is taken; pod0 runs with its generated claim."""
    from tests import extended_cluster

    return extended_cluster.bundle(extended_cluster.later())


def test_a_pod_asking_for_an_extended_resource_is_found_and_judged(
    gpu_lab_bundle, no_django
) -> None:
    result = run(
        "why", "pod", "extended-resource-request/pod1", "-f", "-",
        stdin=gpu_lab_bundle, no_django=no_django,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr.decode()
    text = result.stdout.decode()
    lines = text.splitlines()
    assert lines[:2] == [
        "Pod extended-resource-request/pod1",
        "claim-unallocated (devices-exhausted)",
    ]
    assert (
        "Every device matching request container-0-request-0 of the extended resources of Pod "
        "extended-resource-request/pod1 (example.com/gpu: 1) is already allocated" in text
    )
    assert "Allocator: cannot allocate" in text
    assert "0  not allocated to others  ← too few here" in text
    assert "<extended-resources>" not in text  # no claim of that name exists
    assert "kubectl describe pod pod1 -n extended-resource-request" in text
    running = run(
        "why", "pod", "extended-resource-request/pod0", "-f", "-",
        stdin=gpu_lab_bundle, no_django=no_django,
    )  # fmt: skip
    assert running.returncode == 0, running.stderr.decode()
    assert running.stdout.decode().splitlines()[1] == "healthy (running)"


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["pod1", "pod0"])
def test_json_of_an_extended_resource_pod_equals_the_api(
    api_client, tmp_path, gpu_lab_bundle, no_django, name: str
) -> None:
    from tests.stored import import_analysed

    snapshot = import_analysed(files=[("bundle.json", gpu_lab_bundle)])
    api = api_client.get(
        f"/api/v1/snapshots/{snapshot.pk}/pods/extended-resource-request/{name}/diagnosis"
    ).json()
    api["history"] = []
    path = tmp_path / "bundle.json"
    path.write_bytes(gpu_lab_bundle)
    result = run(
        "why", "pod", f"extended-resource-request/{name}", "--json", "-f", str(path),
        no_django=no_django,
    )  # fmt: skip
    assert result.returncode == (0 if api["stage"] == "healthy" else 1), result.stderr.decode()
    cli = json.loads(result.stdout)
    assert cli == api
    assert cli["chain"]["extended_resources"][0]["device_class"] == "gpu.example.com"


def _without(objects: list[dict[str, Any]], kind: str) -> bytes:
    from tests import extended_cluster

    return extended_cluster.bundle([o for o in objects if o["kind"] != kind])


def test_a_pod_whose_extended_resources_no_class_maps_does_not_use_dra(no_django) -> None:
    from tests import extended_cluster

    objects = extended_cluster.later()
    for obj in objects:
        if obj["kind"] == "DeviceClass":
            obj["spec"]["extendedResourceName"] = "example.com/other-gpu"
    result = run(
        "why", "pod", "extended-resource-request/pod1",
        stdin=extended_cluster.bundle(objects), no_django=no_django,
    )  # fmt: skip
    assert result.returncode == 2
    message = result.stderr.decode()
    assert "Pod extended-resource-request/pod1 does not use DRA" in message
    assert "no DeviceClass maps the extended resources it asks for (example.com/gpu)" in message


def test_without_device_classes_whether_a_pod_uses_dra_is_unknown(no_django) -> None:
    from tests import extended_cluster

    result = run(
        "why", "pod", "extended-resource-request/pod1",
        stdin=_without(extended_cluster.later(), "DeviceClass"), no_django=no_django,
    )  # fmt: skip
    assert result.returncode == 2
    message = result.stderr.decode()
    assert "whether it uses DRA is unknown: it asks for example.com/gpu" in message
    assert "does not use DRA" not in message
    assert "kubectl get deviceclasses -o json" in message
