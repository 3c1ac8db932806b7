"""No share token in any log the project configures, gunicorn's access log included.

gunicorn runs as deployed (``-c gunicorn.conf.py``) against a PostgreSQL of its own; the test
opens a share link the ways a browser and a chat unfurler do, then reads every line gunicorn and
Django wrote.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import pytest
import yaml

from dradash.logs import GunicornLogger, mask_share_tokens
from tests.servers import DEMO_POD, ROOT, Browser, Gunicorn, Stack

pytestmark = pytest.mark.servers

MAKE_LINK = """
from datetime import timedelta
from dradash.sharing.services import share_link_create
from dradash.snapshots.models import Snapshot
link, token = share_link_create(snapshot=Snapshot.objects.get(pk={snapshot}), user=None,
                                expires_in=timedelta(days=1))
print(token)
"""
# Every field gunicorn can log that may hold the token: request line, path, query, the raw URI
# from the environ, the Referer and the Location of a redirect.
EVERY_FIELD = "%(r)s|%(U)s|%(q)s|%({raw_uri}e)s|%({referer}i)s|%({location}o)s|%(s)s"


@pytest.fixture
def token(stack: Stack) -> str:
    return stack.shell(MAKE_LINK.format(snapshot=stack.seed.snapshot))


@pytest.mark.parametrize("log_format", [None, EVERY_FIELD], ids=["default-format", "every-field"])
def test_share_tokens_never_reach_the_access_log_or_the_error_log(
    stack: Stack, token: str, tmp_path: Path, log_format: str | None
) -> None:
    args = ("--access-logformat", log_format) if log_format else ()
    server = Gunicorn(stack.env, workers=1, logdir=tmp_path, args=args).start()
    snapshot = stack.seed.snapshot
    namespace, name = DEMO_POD
    try:
        browser = Browser(server.url)
        opened = browser.get(f"/share/{token}/")
        assert opened.status == 302 and token in opened.headers["Location"]
        page = browser.get(
            f"/share/{token}/snapshots/{snapshot}/pods/{namespace}/{name}/?tab=events",
            headers={"Referer": f"{server.url}/share/{token}/snapshots/{snapshot}/"},
        )
        assert page.status == 200, page.text[:300]
        # Refused: a page the link does not open, and a link that does not exist (Django logs
        # both as "Not Found: <path>").
        assert browser.get(f"/share/{token}/snapshots/{snapshot}/diff/1/").status == 404
        assert browser.get(f"/share/{token[::-1]}/").status == 404
        # The token percent-encoded in a query string, as a login redirect would carry it.
        browser.get(f"/accounts/login/?next={quote(f'/share/{token}/', safe='')}")
        # The path spelled with percent-encoded characters: the server decodes it, so these
        # open the shared page as well (the probe: /%73hare/<token>/…).
        for spelling in ("/%73hare/", "/sh%61re%2F", "/%73%68%61%72%65/"):
            shared = browser.get(f"{spelling}{token}/snapshots/{snapshot}/")
            assert shared.status == 200, (spelling, shared.status)
    finally:
        server.stop()

    access = server.stdout.read_text()
    errors = server.stderr.read_text()
    assert token not in access and token not in errors
    assert token[:16] not in access + errors  # not even a part of it
    assert access.count("/share/<redacted>/") >= 4, access
    assert re.search(r"/share/<redacted>/snapshots/\d+/pods/inference/vllm-0/", access), access
    assert "Not Found: /share/<redacted>/" in errors, errors
    assert "%2Fshare%2F<redacted>" in access, access
    for spelling in ("/%73hare/", "/sh%61re%2F", "/%73%68%61%72%65/"):
        assert f"{spelling}<redacted>/snapshots/" in access, (spelling, access)


def test_the_logger_class_masks_every_atom() -> None:
    """gunicorn's logger class alone (as gunicorn.conf.py selects it): the atoms an access log
    format may use carry no token, whatever the format."""
    token = "tok3n-Secret_value-1234567890abcdef"
    cfg = SimpleNamespace(
        access_log_format="%(r)s", accesslog=None, errorlog="-", loglevel="info",
        syslog=False, disable_redirect_access_to_syslog=False, capture_output=False,
        logconfig_dict={}, logconfig=None, logconfig_json=None, user=0, group=0,
        statsd_host=None, dogstatsd_tags="", statsd_prefix="", syslog_addr=None,
    )  # fmt: skip
    logger = GunicornLogger.__new__(GunicornLogger)
    logger.cfg = cfg
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/share/{token}/snapshots/1/?x=1",
        "PATH_INFO": f"/share/{token}/snapshots/1/",
        "QUERY_STRING": f"next=%2Fshare%2F{token}%2F",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_REFERER": f"https://dradash.example.com/share/{token}/",
    }
    response = SimpleNamespace(
        status="302 Found", headers=[("Location", f"/share/{token}/snapshots/1/")], sent=0
    )
    request = SimpleNamespace(headers=[("REFERER", environ["HTTP_REFERER"])])
    elapsed = SimpleNamespace(seconds=0, microseconds=1500)
    atoms = logger.atoms(response, request, environ, elapsed)
    leaked = {k: v for k, v in atoms.items() if isinstance(v, str) and token in v}
    assert not leaked
    assert atoms["r"] == "GET /share/<redacted>/snapshots/1/?x=1 HTTP/1.1"
    assert atoms["{location}o"] == "/share/<redacted>/snapshots/1/"


def test_masking_keeps_the_rest_of_the_line() -> None:
    line = 'GET /share/AbC-123_x/snapshots/4/ HTTP/1.1" 200 "https://h/share/AbC-123_x/"'
    assert mask_share_tokens(line) == (
        'GET /share/<redacted>/snapshots/4/ HTTP/1.1" 200 "https://h/share/<redacted>/"'
    )
    assert mask_share_tokens("/snapshots/4/shares/") == "/snapshots/4/shares/"
    assert mask_share_tokens("?next=%2fshare%2fAbC%2F") == "?next=%2fshare%2f<redacted>%2F"
    assert mask_share_tokens("GET /%73hare/AbC/x HTTP/1.1") == "GET /%73hare/<redacted>/x HTTP/1.1"
    assert mask_share_tokens("/%73%68%61%72%65%2FAbC") == "/%73%68%61%72%65%2F<redacted>"
    assert mask_share_tokens("/share/%41bC-1/") == "/share/<redacted>/"


def test_every_deployment_runs_gunicorn_with_the_masking_configuration() -> None:
    """The Dockerfile, docker-compose.yml and the Kubernetes web Deployment all start gunicorn
    with gunicorn.conf.py (its logger class), never with a log option of their own."""
    commands = {
        "Dockerfile": next(
            line
            for line in (ROOT / "Dockerfile").read_text().splitlines()
            if line.startswith("CMD")
        ),
        "docker-compose.yml": yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"][
            "web"
        ]["command"],
        "web.yaml": " ".join(
            next(
                d
                for d in yaml.safe_load_all((ROOT / "deploy/kubernetes/web.yaml").read_text())
                if d["kind"] == "Deployment"
            )["spec"]["template"]["spec"]["containers"][0]["command"]
        ),
    }
    for where, command in commands.items():
        assert "gunicorn" in command and "gunicorn.conf.py" in command, where
        assert "--access-logfile" not in command and "--access-logformat" not in command, where
        assert "--log-config" not in command and "--logger-class" not in command, where
    config = (ROOT / "gunicorn.conf.py").read_text()
    assert 'logger_class = "dradash.logs.GunicornLogger"' in config
