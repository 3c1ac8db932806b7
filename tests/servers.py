"""Real server processes for the fault and security tests: PostgreSQL, Redis, gunicorn, Celery.

Each test that breaks a server starts its own, on a free port of 127.0.0.1, and never touches the
shared PostgreSQL (5432) and Redis (6379) other tests and people use:

- ``PostgresServer``: ``initdb`` and ``postgres`` from /usr/lib/postgresql/*/bin (as the user
  ``postgres`` when the tests run as root, which initdb refuses), trust authentication, fsync
  off; stopped, restarted and killed at will.
- ``RedisServer``: ``redis-server`` without persistence.
- ``Gunicorn``: the web server as deployed (``gunicorn -c gunicorn.conf.py dradash.wsgi``), its
  access log and error log captured.
- ``CeleryWorker``: ``celery -A dradash worker`` with the prefork pool, as deployed.
- ``Nginx``: the front proxy as deployed (``deploy/kubernetes/nginx.conf.template``), rendered
  for upstreams on 127.0.0.1.
- ``Browser``: an HTTP client with cookies (sessions, CSRF) and no redirect following.

Processes run with DJANGO_SETTINGS_MODULE=dradash.settings outside pytest (no TESTING): the
production settings, with static files collected into a directory of the test's own.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SECRET_KEY = "fault-tests-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``condition`` until it returns something true; fail with ``what`` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def base_env(**extra: str) -> dict[str, str]:
    """The environment of a server process: ours without pytest's, production settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    for name in ("CELERY_BROKER_URL", "DRADASH_CACHE_URL", "DRADASH_DEBUG"):
        env.pop(name, None)
    env.update(
        DJANGO_SETTINGS_MODULE="dradash.settings",
        DRADASH_SECRET_KEY=SECRET_KEY,
        DRADASH_ALLOWED_HOSTS="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def _stop(process: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM) -> None:
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- PostgreSQL ----------------------------------------------------------------------------


def postgres_bin() -> Path:
    """The bin directory of the newest PostgreSQL under /usr/lib/postgresql with initdb."""
    found = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    found.sort(key=lambda p: [int(x) for x in p.parent.name.split(".") if x.isdigit()])
    if not found:
        raise RuntimeError(
            "no PostgreSQL server under /usr/lib/postgresql (initdb): the fault tests start "
            "their own; install it with `apt-get install postgresql` (dev.py test does)"
        )
    return found[-1]


class PostgresServer:
    """A PostgreSQL cluster of its own: ``start()``, ``stop()``, ``restart()``, ``kill()``."""

    USER = "dradash"

    def __init__(self) -> None:
        self.bin = postgres_bin()
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="dradash-test-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._as_postgres: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            if not shutil.which("setpriv"):
                raise RuntimeError("running as root needs setpriv (util-linux) to drop to postgres")
            self._as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
            shutil.chown(self.dir, "postgres", "postgres")
        self._run([self.bin / "initdb", "-D", self.data, "-U", self.USER, "--auth=trust"])

    def _run(self, cmd: list[Any]) -> None:
        result = subprocess.run(
            [*self._as_postgres, *map(str, cmd)], capture_output=True, text=True, cwd="/"
        )
        if result.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed: {result.stderr or result.stdout}")

    def url(self, database: str = "dradash") -> str:
        return f"postgres://{self.USER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        if self.running:
            return
        cmd = [
            *self._as_postgres,
            str(self.bin / "postgres"),
            "-D", str(self.data),
            "-p", str(self.port),
            "-k", str(self.dir),
            "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off",
            "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off",
        ]  # fmt: skip
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(cmd, stdout=out, stderr=out, cwd="/")
        wait_for(self._accepts, 30, f"PostgreSQL on port {self.port}\n{self.log_tail()}")

    def _accepts(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"PostgreSQL exited:\n{self.log_tail()}")
        import psycopg

        try:
            psycopg.connect(self.url("postgres"), connect_timeout=2).close()
            return True
        except psycopg.OperationalError:
            return False

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """A fast shutdown: sessions are ended, the server exits."""
        _stop(self.process, signal.SIGINT)
        self.process = None

    def kill(self) -> None:
        _stop(self.process, signal.SIGKILL)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def create_database(self, name: str = "dradash") -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def connect(self, database: str = "dradash", **kwargs: Any) -> Any:
        import psycopg

        return psycopg.connect(self.url(database), **kwargs)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# --- Redis ---------------------------------------------------------------------------------


class RedisServer:
    """A Redis of its own, without persistence: ``start()``, ``stop()``, ``kill()``."""

    def __init__(self) -> None:
        if not shutil.which("redis-server"):
            raise RuntimeError(
                "redis-server is not installed: the fault tests start their own; install it "
                "with `apt-get install redis-server` (dev.py test does)"
            )
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="dradash-test-redis-"))
        self.log = self.dir / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        if self.running:
            return
        cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        cmd += ["--save", "", "--appendonly", "no", "--dir", str(self.dir)]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(cmd, stdout=out, stderr=out, cwd=self.dir)
        wait_for(lambda: port_open(self.port), 15, f"Redis on port {self.port}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        _stop(self.process, signal.SIGTERM)
        self.process = None

    def kill(self) -> None:
        """Gone at once, connections reset: what a crash or a node failure looks like."""
        _stop(self.process, signal.SIGKILL)
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# --- Django processes ----------------------------------------------------------------------


def manage(env: Mapping[str, str], *args: str, input: str | None = None) -> str:  # noqa: A002
    """Run ``manage.py`` with ``env``; its stdout. Fails with its output if it fails."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=dict(env),
        capture_output=True,
        text=True,
        input=input,
        timeout=300,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"manage.py {' '.join(args)} failed ({result.returncode}):\n"
            f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        )
    return result.stdout


def collect_static(directory: Path) -> None:
    """collectstatic into ``directory`` (production settings need the manifest)."""
    manage(base_env(DRADASH_STATIC_ROOT=str(directory)), "collectstatic", "--noinput")


class Gunicorn:
    """``gunicorn -c gunicorn.conf.py dradash.wsgi`` on a free port, logs in files."""

    def __init__(
        self,
        env: Mapping[str, str],
        workers: int = 2,
        logdir: Path | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.port = free_port()
        self.args = args
        self.logdir = logdir or Path(tempfile.mkdtemp(prefix="dradash-test-gunicorn-"))
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.stdout = self.logdir / "gunicorn.out"
        self.stderr = self.logdir / "gunicorn.err"
        self.env = {
            **env,
            "DRADASH_BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": str(workers),
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Gunicorn:
        cmd = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", *self.args]
        cmd.append("dradash.wsgi")
        with self.stdout.open("ab") as out, self.stderr.open("ab") as err:
            self.process = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=err)
        wait_for(self._ready, 60, f"gunicorn on port {self.port}")
        return self

    def _ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"gunicorn exited:\n{self.output()}")
        return port_open(self.port)

    def output(self) -> str:
        out = self.stdout.read_text(errors="replace") if self.stdout.exists() else ""
        err = self.stderr.read_text(errors="replace") if self.stderr.exists() else ""
        return f"--- stdout ---\n{out[-4000:]}\n--- stderr ---\n{err[-4000:]}"

    def stop(self) -> None:
        _stop(self.process, signal.SIGTERM)
        self.process = None


NGINX_TEMPLATE = ROOT / "deploy" / "kubernetes" / "nginx.conf.template"


def nginx_bin() -> str | None:
    """nginx, from PATH or Debian's /usr/sbin (not on a non-root PATH)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")


def render_nginx_template(upstreams: Mapping[str, str]) -> str:
    """The deployed template with its variables filled in, as the nginx image's envsubst does
    (only the variables given: nginx's own ``$host`` and the like stay)."""
    text = NGINX_TEMPLATE.read_text()
    for name, value in upstreams.items():
        text = text.replace("${" + name + "}", value)
    if "${" in text:
        raise AssertionError(f"unfilled variable in {NGINX_TEMPLATE.name}: {text}")
    return text


class Nginx:
    """The front proxy on a free port, in front of ``web`` and ``evaluate`` (host:port)."""

    def __init__(self, web: str, evaluate: str, workdir: Path | None = None) -> None:
        self.port = free_port()
        self.dir = workdir or Path(tempfile.mkdtemp(prefix="dradash-test-nginx-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        server = render_nginx_template(
            {"DRADASH_WEB_UPSTREAM": web, "DRADASH_EVALUATE_UPSTREAM": evaluate}
        ).replace("listen 8080 default_server;", f"listen 127.0.0.1:{self.port} default_server;")
        # The deployed image's nginx.conf around it: one worker, temp files in our directory.
        user = "user root;" if os.geteuid() == 0 else ""
        (self.dir / "nginx.conf").write_text(
            f"""{user}
worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log notice;
events {{ worker_connections 512; }}
http {{
    client_body_temp_path {self.dir}/body;
    proxy_temp_path {self.dir}/proxy;
    fastcgi_temp_path {self.dir}/fastcgi;
    uwsgi_temp_path {self.dir}/uwsgi;
    scgi_temp_path {self.dir}/scgi;
{server}
}}
"""
        )
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self, *args: str) -> list[str]:
        binary = nginx_bin()
        if binary is None:
            raise AssertionError("nginx is not installed (python3 dev.py test installs it)")
        return [binary, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"), *args]

    def check(self) -> subprocess.CompletedProcess[str]:
        """``nginx -t``: the configuration is valid."""
        return subprocess.run(self.command("-t"), capture_output=True, text=True)

    def start(self) -> Nginx:
        with (self.dir / "nginx.out").open("ab") as out:
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=out)
        wait_for(self._ready, 30, f"nginx on port {self.port}")
        return self

    def _ready(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"nginx exited:\n{self.output()}")
        return port_open(self.port)

    def output(self) -> str:
        parts = []
        for name in ("nginx.out", "error.log"):
            path = self.dir / name
            if path.exists():
                parts.append(f"--- {name} ---\n{path.read_text(errors='replace')[-4000:]}")
        return "\n".join(parts)

    def stop(self) -> None:
        _stop(self.process, signal.SIGQUIT)
        self.process = None


class CeleryWorker:
    """``celery -A dradash worker`` (prefork, as deployed), its output in a file."""

    def __init__(self, env: Mapping[str, str], logdir: Path, *, concurrency: int = 1) -> None:
        self.env = dict(env)
        self.log = logdir / "worker.log"
        self.liveness = logdir / "worker-alive"
        self.env["DRADASH_WORKER_LIVENESS_FILE"] = str(self.liveness)
        self.concurrency = concurrency
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> CeleryWorker:
        cmd = [sys.executable, "-m", "celery", "-A", "dradash", "worker", "-l", "info"]
        cmd += [f"--concurrency={self.concurrency}", "--without-gossip", "--without-mingle"]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=out)
        wait_for(lambda: "ready." in self.output() or self._exited(), 60, "the worker to start")
        assert self.alive, f"the worker did not start:\n{self.output()}"
        return self

    def _exited(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-6000:] if self.log.exists() else ""

    def stop(self) -> None:
        _stop(self.process, signal.SIGTERM)
        self.process = None


# --- HTTP ----------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes
    seconds: float

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser:
    """Requests to one server with a cookie jar; redirects are returned, not followed."""

    def __init__(self, base: str, timeout: float = 30) -> None:
        self.base = base
        self.timeout = timeout
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect()
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        data: Mapping[str, str] | bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        body = urllib.parse.urlencode(data).encode() if isinstance(data, Mapping) else data
        request = urllib.request.Request(
            self.base + path, data=body, method=method, headers=dict(headers or {})
        )
        if isinstance(data, Mapping):
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        started = time.monotonic()
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                return Reply(
                    response.status, response.headers, response.read(), time.monotonic() - started
                )
        except urllib.error.HTTPError as error:
            return Reply(error.code, error.headers, error.read(), time.monotonic() - started)

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)

    def csrf_token(self) -> str:
        for cookie in self.cookies:
            if cookie.name == "csrftoken":
                return str(cookie.value)
        raise AssertionError("no csrftoken cookie")

    def post_form(self, path: str, data: Mapping[str, str], **headers: str) -> Reply:
        """A form POST with the CSRF token (from the cookie) and a same-origin Referer."""
        fields = {"csrfmiddlewaretoken": self.csrf_token(), **data}
        return self.request(
            "POST", path, data=fields, headers={"Referer": self.base + "/", **headers}
        )

    def log_in(self, username: str, password: str) -> Reply:
        self.get("/accounts/login/")
        reply = self.post_form("/accounts/login/", {"username": username, "password": password})
        assert reply.status == 302, f"login failed: {reply.status} {reply.text[:500]}"
        return reply


def page_text(html: str) -> str:
    """The words of an HTML page, tags dropped, whitespace folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


# --- fixtures (imported by tests/faults/conftest.py and tests/security/conftest.py) ---------

import pytest  # noqa: E402

USERNAME = "ops"
PASSWORD = "ops-password-for-fault-tests"

# Run by `manage.py shell` against the stack's database: a superuser, the demo cluster's two
# snapshots and an API token; prints them as JSON.
SEED = """
import json
from django.contrib.auth import get_user_model
from knox.models import AuthToken
from dradash.snapshots.services import demo_load
user = get_user_model().objects.create_superuser("{user}", "ops@example.com", "{password}")
snapshots = demo_load()
_, token = AuthToken.objects.create(user)
print(json.dumps({{"snapshot": snapshots[-1].pk, "token": token, "user": user.pk}}))
"""
# A Pod of the demo cluster (dradash.demo.cluster).
DEMO_POD = ("inference", "vllm-0")


@dataclass
class Seed:
    snapshot: int
    token: str
    user: int

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Token {self.token}"}


@dataclass
class Stack:
    """Our own PostgreSQL, migrated and seeded, and the environment of processes using it."""

    postgres: PostgresServer
    env: dict[str, str]
    seed: Seed

    def manage(self, *args: str, input: str | None = None, **env: str) -> str:  # noqa: A002
        return manage({**self.env, **env}, *args, input=input)

    def shell(self, code: str, **env: str) -> str:
        """Run ``code`` in ``manage.py shell``; the last line it printed."""
        lines = self.manage("shell", "-c", code, **env).strip().splitlines()
        return lines[-1] if lines else ""

    def query(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.postgres.connect(autocommit=True) as conn:
            return list(conn.execute(sql, params).fetchall())


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Any:
    postgres = PostgresServer()
    try:
        postgres.start()
        postgres.create_database()
        static = tmp_path_factory.mktemp("static")
        collect_static(static)
        env = base_env(
            DATABASE_URL=postgres.url(),
            DRADASH_STATIC_ROOT=str(static),
            PYTHONPATH=str(ROOT),
            DRADASH_DB_CONN_MAX_AGE="600",
        )
        manage(env, "migrate", "--noinput")
        out = manage(env, "shell", "-c", SEED.format(user=USERNAME, password=PASSWORD))
        seed = Seed(**json.loads(out.strip().splitlines()[-1]))
        yield Stack(postgres, env, seed)
    finally:
        postgres.close()


@pytest.fixture
def postgres_up(stack: Stack) -> Any:
    """Our PostgreSQL, running again after the test whatever the test did to it."""
    stack.postgres.start()
    yield stack.postgres
    stack.postgres.start()


@pytest.fixture
def redis_server() -> Any:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()
