from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from dradash.clusters.models import Cluster
from dradash.snapshots import members
from dradash.snapshots.models import ObjectBlob, Snapshot
from dradash.snapshots.selectors import snapshot_objects

pytestmark = pytest.mark.django_db

EIGHT_GPUS = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
TEMPLATE_PODS = "dra-example-driver__basic-resourceclaimtemplate__basic-resourceclaimtemplate.yaml"
WITH_DEPLOYMENT = "nvidia-gpu__demo__specs__quickstart__v1__gpu-test6.yaml"


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def assert_nothing_stored() -> None:
    assert Snapshot.objects.count() == 0
    assert ObjectBlob.objects.count() == 0
    assert Cluster.objects.count() == 0


def snapshot_contents(snapshot: Snapshot) -> dict[str, object]:
    """Everything that makes two snapshots the same, ids and import time aside."""
    return {
        "cluster": snapshot.cluster.name,
        "status": snapshot.status,
        "captured_at": snapshot.captured_at,
        "server_version": snapshot.server_version,
        "api_versions": snapshot.api_versions,
        "kinds": snapshot.kinds,
        "ignored": snapshot.ignored,
        "refused": (snapshot.refused, snapshot.refused_count),
        "object_count": snapshot.object_count,
        "objects": sorted(
            snapshot_objects(
                snapshot, fields=("kind", "namespace", "name", "api_version", "digest")
            )
        ),
    }


def test_import_bundle_stores_one_snapshot_from_several_files(fixtures_dir: Path) -> None:
    out = run(
        "import_bundle",
        str(fixtures_dir / EIGHT_GPUS),
        str(fixtures_dir / TEMPLATE_PODS),
        "--cluster",
        "kind-dra",
        "--json",
    )
    result = json.loads(out.strip().splitlines()[-1])
    snapshot = Snapshot.objects.get()
    assert result == {"snapshot": snapshot.pk, "objects": 5, "ignored": 0}
    assert snapshot.cluster.name == "kind-dra"
    assert snapshot.kinds["ResourceSlice"] == {"status": "ok", "count": 1, "message": ""}
    assert snapshot.kinds["Pod"]["count"] == 2
    assert snapshot.kinds["Node"]["status"] == "absent"
    assert snapshot.status == "complete"


def test_import_bundle_counts_and_ignores_kinds_it_does_not_read(fixtures_dir: Path) -> None:
    out = run("import_bundle", str(fixtures_dir / WITH_DEPLOYMENT), "--json")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["ignored"] == 1
    assert Snapshot.objects.get().ignored == {"apps/v1 Deployment": 1}
    assert "1 ignored (apps/v1 Deployment)" in out


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1"', "truncated JSON"),
        (b"apiVersion: v1\nkind: Pod\nmetadata: {name: [}\n", "invalid YAML"),
        (b"- just\n- strings\n", "is not a Kubernetes object"),
        (b"apiVersion: v1\nmetadata: {name: x}\n", "has no kind"),
        (b"apiVersion: v1\nkind: Pod\nmetadata: {namespace: default}\n", "has no metadata.name"),
        (b"apiVersion: v1\nkind: Secret\nmetadata: {name: token}\n", "never stores Secrets"),
        (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n", "never stores Secrets"),
        (b"", "the file is empty"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
    ],
)
def test_import_bundle_refuses_bad_input_and_stores_nothing(
    tmp_path: Path, fixtures_dir: Path, content: bytes, problem: str
) -> None:
    bad = tmp_path / "bad-bundle.yaml"
    bad.write_bytes(content)
    good = fixtures_dir / EIGHT_GPUS  # a good file next to the bad one changes nothing
    with pytest.raises(CommandError) as excinfo:
        run("import_bundle", str(good), str(bad))
    message = str(excinfo.value)
    assert str(bad) in message
    assert problem in message
    assert_nothing_stored()


def snapshot_info(**spec: object) -> bytes:
    info = {"apiVersion": "dradash.io/v1", "kind": "SnapshotInfo", "metadata": {"name": "i"}}
    return json.dumps({**info, "spec": spec}).encode()


POD_JSON = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"%s}%s}'


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (POD_JSON.encode() % (b"", b', "x": 1' + b"0" * 4300), "a number is too large"),
        (
            b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: 1" + b"0" * 4300 + b"\n",
            "a number is too large",
        ),
        (POD_JSON.encode() % (b"", b', "x": 1e400'), "number JSON cannot hold (inf) in Pod p at x"),
        (POD_JSON.encode() % (b', "uid": "\\ud800"', b""), "lone surrogate"),
        (
            b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p\\u0000"}}',
            "metadata.name has control characters",
        ),
        (
            POD_JSON.encode() % (b', "namespace": "' + b"n" * 254 + b'"', b""),
            "metadata.namespace is 254 characters long",
        ),
        (snapshot_info(serverVersion="v" * 65), "spec.serverVersion is 65 characters long"),
        (snapshot_info(apiVersions=["\x00"]), "spec.apiVersions has a NUL character"),
        (snapshot_info(ignored={"\x00": 1}), "spec.ignored has a NUL character"),
        (snapshot_info(cluster="a\x00"), "spec.cluster has control characters"),
        (
            snapshot_info(capturedAt="2020-13-01T00:00:00Z"),
            "capturedAt '2020-13-01T00:00:00Z' is not a valid date",
        ),
        (snapshot_info(capturedAt="yesterday"), "capturedAt 'yesterday' is not a date"),
        (snapshot_info(capturedAt="0001-01-01T00:00:00+01:00"), "capturedAt '0001-01-01T00:00"),
        (snapshot_info(capturedAt="9999-12-31T23:30:00-01:00"), "is out of range"),
        (snapshot_info(capturedAt="1969-12-31T23:59:59Z"), "is out of range"),
        (snapshot_info(capturedAt="1970-01-01T00:30:00+01:00"), "is out of range"),
    ],
)
def test_import_bundle_refuses_values_the_database_cannot_store(
    tmp_path: Path, fixtures_dir: Path, content: bytes, problem: str
) -> None:
    bad = tmp_path / "bad-bundle.json"
    bad.write_bytes(content)
    with pytest.raises(CommandError) as excinfo:
        run("import_bundle", str(fixtures_dir / EIGHT_GPUS), str(bad))
    message = str(excinfo.value)
    assert message.startswith(f"{bad}: ")
    assert problem in message
    message.encode()  # printable
    assert_nothing_stored()


def test_import_bundle_stores_a_capture_time_in_utc(tmp_path: Path) -> None:
    info = tmp_path / "info.json"
    info.write_bytes(snapshot_info(capturedAt="2020-01-01T00:00:00-23:00"))
    pod = tmp_path / "pod.json"
    pod.write_bytes(POD_JSON.encode() % (b"", b""))
    run("import_bundle", str(info), str(pod))
    assert Snapshot.objects.get().captured_at.isoformat() == "2020-01-01T23:00:00+00:00"


def test_import_bundle_keeps_nul_inside_object_data(tmp_path: Path) -> None:
    # Object data is stored as JSON text, where NUL is the escape \u0000: PostgreSQL takes it.
    pod = tmp_path / "pod.json"
    pod.write_bytes(POD_JSON.encode() % (b', "annotations": {"a": "a\\u0000b"}', b""))
    run("import_bundle", str(pod))
    (data,) = snapshot_objects(Snapshot.objects.get(), fields=("data",))
    assert json.loads(data[0])["metadata"]["annotations"] == {"a": "a\x00b"}


def test_import_bundle_refuses_files_over_the_size_limit(
    tmp_path: Path, fixtures_dir: Path, settings
) -> None:
    settings.DRADASH_BUNDLE_MAX_BYTES = 1000
    with pytest.raises(CommandError, match=r"over the limit of 1,000 bytes"):
        run("import_bundle", str(fixtures_dir / EIGHT_GPUS))
    assert_nothing_stored()


def test_import_bundle_names_a_file_it_cannot_read(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(CommandError, match=r"nope.json: cannot read"):
        run("import_bundle", str(missing))
    assert_nothing_stored()


def test_import_bundle_refuses_a_bad_cluster_name(fixtures_dir: Path) -> None:
    with pytest.raises(CommandError, match="cluster name"):
        run("import_bundle", str(fixtures_dir / EIGHT_GPUS), "--cluster", "has space")
    assert_nothing_stored()


def test_an_unchanged_object_is_stored_once_across_snapshots(fixtures_dir: Path) -> None:
    run("import_bundle", str(fixtures_dir / EIGHT_GPUS), str(fixtures_dir / TEMPLATE_PODS))
    blobs = ObjectBlob.objects.count()
    run("import_bundle", str(fixtures_dir / EIGHT_GPUS), str(fixtures_dir / TEMPLATE_PODS))
    assert Snapshot.objects.count() == 2
    assert [len(members.unpack(s.members)) for s in Snapshot.objects.all()] == [5, 5]
    assert ObjectBlob.objects.count() == blobs == 5


def test_export_then_import_gives_an_identical_snapshot(tmp_path: Path) -> None:
    run("load_demo")
    for original in Snapshot.objects.order_by("id"):
        bundle = tmp_path / f"bundle-{original.pk}.json"
        run("export_bundle", str(original.pk), "--output", str(bundle))
        out = run("import_bundle", str(bundle), "--json")
        copy = Snapshot.objects.get(pk=json.loads(out.strip().splitlines()[-1])["snapshot"])
        assert copy.pk != original.pk
        assert snapshot_contents(copy) == snapshot_contents(original)


def test_export_keeps_partial_status_and_ignored_counts(tmp_path: Path) -> None:
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "prod"},
        "spec": {
            "cluster": "prod",
            "capturedAt": "2026-11-01T08:00:00Z",
            "serverVersion": "v1.34.2",
            "apiVersions": ["resource.k8s.io/v1"],
            "kinds": {"Event": {"status": "forbidden", "message": "events is forbidden"}},
            "ignored": {"apps/v1 Deployment": 3},
        },
    }
    source = tmp_path / "in.json"
    source.write_text(
        json.dumps([info, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}])
    )
    run("import_bundle", str(source))
    original = Snapshot.objects.get()
    assert original.status == "partial"
    assert original.missing_kinds == {
        "Event": {"status": "forbidden", "count": 0, "message": "events is forbidden"}
    }
    exported = tmp_path / "out.json"
    run("export_bundle", str(original.pk), "-o", str(exported))
    run("import_bundle", str(exported))
    copy = Snapshot.objects.exclude(pk=original.pk).get()
    assert snapshot_contents(copy) == snapshot_contents(original)
    assert copy.ignored == {"apps/v1 Deployment": 3}


def test_export_bundle_writes_to_stdout_and_refuses_unknown_ids(fixtures_dir: Path) -> None:
    run("import_bundle", str(fixtures_dir / EIGHT_GPUS))
    snapshot = Snapshot.objects.get()
    text = run("export_bundle", str(snapshot.pk), "--output", "-")
    items = json.loads(text)["items"]
    assert items[0]["kind"] == "SnapshotInfo"
    assert [i["kind"] for i in items[1:]] == ["ResourceSlice"]
    with pytest.raises(CommandError, match="snapshot 999999 does not exist"):
        run("export_bundle", "999999", "--output", "-")


def test_load_demo_loads_two_snapshots_and_replaces_them_when_run_again() -> None:
    run("load_demo")
    first_ids = set(Snapshot.objects.values_list("id", flat=True))
    run("load_demo")
    snapshots = list(Snapshot.objects.order_by("captured_at"))
    assert len(snapshots) == 2
    assert not first_ids & {s.pk for s in snapshots}
    assert {s.cluster.name for s in snapshots} == {"demo"}
    assert snapshots[1].captured_at > snapshots[0].captured_at
    # Replacing left no stored object behind that no snapshot uses.
    assert ObjectBlob.objects.count() == len(
        {i for s in Snapshot.objects.all() for i in members.unpack(s.members)}
    )


def test_load_demo_creates_a_user_who_can_log_in(client) -> None:
    out = run("load_demo", "--user", "demo")
    password = out.strip().splitlines()[-1].split("password ")[1].strip("'")
    assert get_user_model().objects.get(username="demo").check_password(password)
    assert client.login(username="demo", password=password)
