from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db

H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"


def run(*args: str) -> str:
    out = StringIO()
    call_command("check_selector", *args, stdout=out)
    return out.getvalue()


def test_it_passes_when_devices_match_and_none_errors(demo) -> None:
    out = run(H100, "--snapshot", str(demo[0].pk), "--class", "gpu.nvidia.com")
    assert out.startswith(f"37 devices in snapshot {demo[0].pk} of class gpu.nvidia.com: 8 match")


def test_it_fails_when_the_selector_errors(demo) -> None:
    with pytest.raises(CommandError, match="would abort scheduling"):
        run("device.attributes['gpu.nvidia.com'].index == 0", "--snapshot", str(demo[0].pk))


def test_it_fails_when_nothing_matches(demo) -> None:
    with pytest.raises(CommandError, match="no device matches"):
        run("device.driver == 'nope.example.com'", "--snapshot", str(demo[0].pk))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("?!", "--snapshot", "{snap}"), "does not compile: compilation failed"),
        (("true", "--snapshot", "999999"), "snapshot 999999 does not exist"),
        (("true", "--snapshot", "{snap}", "--class", "nope"), "device class nope does not exist"),
    ],
)
def test_bad_input_names_the_problem(demo, args, message) -> None:
    args = tuple(a.format(snap=demo[0].pk) for a in args)
    with pytest.raises(CommandError, match=message):
        run(*args)
