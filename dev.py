#!/usr/bin/env python3
"""Development entry points for dradash. Standard library only: runs with the system python3.

    python3 dev.py demo [--host H] [--port N]  the demo on SQLite, served by runserver
    python3 dev.py test [PYTEST ARGS...]       ruff, migration check, pytest (PostgreSQL, Redis)

Both create .venv and install the project into it when pyproject.toml has changed. `test`
installs (as root, with apt-get), starts and sets up PostgreSQL and Redis when they are not
listening on 127.0.0.1; set DATABASE_URL / DRADASH_TEST_REDIS_URL to use servers of your own.
It also installs Debian's chromium, which the browser tests (tests/browser/) drive, and makes
sure initdb and redis-server exist for the tests that start servers of their own (tests/faults/).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".dradash-pyproject.sha256"
TEST_ENV = {
    "DATABASE_URL": "postgres://dradash:dradash@127.0.0.1:5432/dradash",
    "DRADASH_TEST_REDIS_URL": "redis://127.0.0.1:6379/15",
    "DRADASH_SECRET_KEY": "test-only-secret",
}
ROLE_SQL = (  # also repairs a role that exists with another password or without CREATEDB
    "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dradash') THEN "
    "CREATE ROLE dradash; END IF; END $$; ALTER ROLE dradash LOGIN CREATEDB PASSWORD 'dradash'"
)
# Run by the venv's python, which has psycopg. Exit status 0: done; otherwise why is on stderr.
PG_HELPER = """
import sys, psycopg
def connect(user, password=None):
    return psycopg.connect(host="127.0.0.1", port=5432, dbname="postgres", user=user,
                           password=password, connect_timeout=5, autocommit=True)
try:
    if sys.argv[1] == "check":  # dradash can log in and create (test) databases
        with connect("dradash", "dradash") as conn:
            q = "SELECT rolcreatedb FROM pg_roles WHERE rolname = current_user"
            sys.exit(0 if conn.execute(q).fetchone()[0] else "role dradash lacks CREATEDB")
    elif sys.argv[1] == "create-role":  # works where TCP auth from localhost is trust
        with connect("postgres") as conn:
            conn.execute(sys.argv[2])
    elif sys.argv[1] == "create-db":
        with connect("dradash", "dradash") as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'dradash'").fetchone():
                conn.execute("CREATE DATABASE dradash OWNER dradash")
except psycopg.Error as exc:
    sys.exit(str(exc).strip())
"""


def say(message: str) -> None:
    print(f"\n==> {message}", flush=True)


def die(message: str) -> NoReturn:
    print(f"\ndev.py: error: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def run(cmd: list[str | Path], *, env: dict | None = None, check: bool = True, cwd=ROOT) -> int:
    """Run cmd, showing it; on Ctrl-C let it stop first, then re-raise."""
    print("$ " + shlex.join(str(c) for c in cmd), flush=True)
    try:
        proc = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env)
    except OSError as exc:
        return die(f"cannot run {cmd[0]}: {exc}") if check else 127
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        try:  # the child got the same SIGINT: give it time to shut down cleanly
            proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            proc.kill()
            proc.wait()
        raise
    if check and code != 0:
        die(f"`{shlex.join(str(c) for c in cmd)}` failed (exit status {code})")
    return code


def cannot_install(what: str, fix: str) -> NoReturn:
    why = "apt-get failed" if os.geteuid() == 0 and shutil.which("apt-get") else "not root"
    die(f"{what} is not installed, and could not be installed ({why}); {fix}")


def apt_install(*packages: str) -> bool:
    """Install Debian packages if we are root and have apt-get; True if that worked."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return False
    say(f"installing {' '.join(packages)} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", *packages]
    if run(cmd, env=env, check=False) == 0:
        return True
    run(["apt-get", "update"], env=env, check=False)
    return run(cmd, env=env, check=False) == 0


def ensure_venv() -> None:
    """.venv with the project installed, reinstalled whenever pyproject.toml changes."""
    pip = [PY, "-m", "pip", "--version"]
    if not (PY.exists() and subprocess.run(pip, capture_output=True).returncode == 0):
        say("creating .venv")
        if run([sys.executable, "-m", "venv", VENV], check=False) != 0:
            if not apt_install("python3-venv"):  # Debian ships ensurepip separately
                die(
                    "`python3 -m venv .venv` failed. On Debian/Ubuntu install the venv module "
                    "with `sudo apt-get install python3-venv`, then run this again."
                )
            run([sys.executable, "-m", "venv", VENV])
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == digest:
        return
    say("installing dradash and its dependencies into .venv (new, or pyproject.toml changed)")
    run([PY, "-m", "pip", "install", "-e", ".[dev]"])
    STAMP.write_text(digest + "\n")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def wait_port(port: int, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while not port_open(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def pg_version() -> str | None:
    """The PostgreSQL to start: the newest with a main cluster, else the newest installed."""
    installed = [p.parents[1].name for p in Path("/usr/lib/postgresql").glob("*/bin/postgres")]
    installed.sort(key=lambda v: [int(x) for x in v.split(".") if x.isdigit()], reverse=True)
    with_cluster = [v for v in installed if Path(f"/etc/postgresql/{v}/main").is_dir()]
    return (with_cluster or installed or [None])[0]


def ensure_postgres() -> None:
    if port_open(5432):
        return
    say("PostgreSQL is not listening on 127.0.0.1:5432: starting it")
    fix = "install it with `sudo apt-get install -y postgresql`, or set DATABASE_URL"
    if not (pg_version() and shutil.which("pg_ctlcluster")):
        if not apt_install("postgresql"):
            cannot_install("PostgreSQL", fix)
        if wait_port(5432, seconds=5):  # the package may have started it
            return
    version = pg_version()
    if version is None:
        return die(f"no PostgreSQL server under /usr/lib/postgresql; {fix}")
    if not Path(f"/etc/postgresql/{version}/main").is_dir():
        run(["pg_createcluster", version, "main"], check=False)
    start = ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "start"]
    if run(start, check=False) != 0 or not wait_port(5432):
        die(
            f"could not start PostgreSQL {version} on 127.0.0.1:5432 (see /var/log/postgresql/"
            f"postgresql-{version}-main.log); as root run `{shlex.join(start)}`, "
            "or set DATABASE_URL"
        )


def ensure_redis() -> None:
    if port_open(6379):
        return
    say("Redis is not listening on 127.0.0.1:6379: starting it")
    fix = "install it with `sudo apt-get install -y redis-server`, or set DRADASH_TEST_REDIS_URL"
    if not shutil.which("redis-server"):
        if not apt_install("redis-server"):
            cannot_install("Redis", fix)
        if wait_port(6379, seconds=5):  # the package may have started it
            return
    start = ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "--port", "6379"]
    start += ["--save", "", "--appendonly", "no"]
    if run(start, check=False, cwd=Path("/tmp")) != 0 or not wait_port(6379):
        die(f"could not start Redis with `{shlex.join(start)}`; {fix}")


def ensure_fault_tools() -> None:
    """initdb/postgres, redis-server and nginx for the tests that start servers of their own
    (tests/servers.py: tests/faults/, tests/security/), even when DATABASE_URL and
    DRADASH_TEST_REDIS_URL point elsewhere. nginx is the front proxy as deployed."""
    missing = []
    if not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        missing.append("postgresql")
    if not shutil.which("redis-server"):
        missing.append("redis-server")
    if not shutil.which("nginx", path=f"{os.environ.get('PATH', '')}:/usr/sbin"):
        missing.append("nginx-light")
    if not missing:
        return
    say(f"{' and '.join(missing)} not installed: the fault tests start their own servers")
    if apt_install(*missing):
        return
    print(
        f"\ndev.py: warning: {', '.join(missing)} could not be installed, so the tests under "
        f"tests/faults/ and tests/security/ that start servers will fail; install them with "
        f"`sudo apt-get install -y {' '.join(missing)}`",
        file=sys.stderr,
        flush=True,
    )


def ensure_chromium() -> None:
    """Debian's chromium for the browser tests (Playwright drives it; no `playwright install`)."""
    if shutil.which("chromium"):
        return
    say("Chromium is not installed: the browser tests (tests/browser/) need it")
    if apt_install("chromium") and shutil.which("chromium"):
        return
    if os.geteuid() != 0:
        why = "not root"
    else:
        why = "apt-get failed" if shutil.which("apt-get") else "no apt-get"
    print(
        f"\ndev.py: warning: Chromium could not be installed ({why}), so the browser tests will "
        "fail; install it with `sudo apt-get install -y chromium`",
        file=sys.stderr,
        flush=True,
    )


def pg_helper(*args: str) -> tuple[bool, str]:
    result = subprocess.run([PY, "-c", PG_HELPER, *args], capture_output=True, text=True)
    return result.returncode == 0, result.stderr.strip()


def ensure_database() -> None:
    """The role dradash (password dradash, LOGIN CREATEDB) and its database dradash."""
    ok, why = pg_helper("check")
    if not ok:
        say(f"setting up the PostgreSQL role dradash ({why})")
        ok, why = pg_helper("create-role", ROLE_SQL)
        if not ok and os.geteuid() == 0 and shutil.which("runuser"):  # peer auth, local socket
            psql = ["runuser", "-u", "postgres", "--", "psql", "-v", "ON_ERROR_STOP=1"]
            if run([*psql, "-c", ROLE_SQL], check=False, cwd=Path("/")) == 0:
                ok, why = pg_helper("check")
        if not ok:
            die(
                f"cannot log in to PostgreSQL as dradash ({why}). Create the role: `sudo -u "
                "postgres psql -c \"CREATE ROLE dradash LOGIN CREATEDB PASSWORD 'dradash'\"`, "
                "or set DATABASE_URL"
            )
    ok, why = pg_helper("create-db")
    if not ok:
        die(f"cannot create the database dradash: {why}")


def demo(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="dev.py demo", description="Run the demo locally.")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
    parser.add_argument("--port", type=int, default=8000, help="port to serve on")
    args = parser.parse_args(argv)
    ensure_venv()
    env = {**os.environ, "DRADASH_DEBUG": "1"}
    say("migrating the database" + ("" if env.get("DATABASE_URL") else " (dradash.sqlite3)"))
    run([PY, "manage.py", "migrate"], env=env)
    say("loading the demo snapshots and the user demo")
    run([PY, "manage.py", "load_demo", "--user", "demo"], env=env)
    host = f"[{args.host}]" if ":" in args.host else args.host
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else host
    say(f"open http://{shown}:{args.port}/ and log in with the user and password printed above")
    print("(Ctrl-C stops the server)", flush=True)
    run([PY, "manage.py", "runserver", f"{host}:{args.port}"], env=env)


def test(argv: list[str]) -> None:
    started = time.monotonic()
    ensure_venv()
    env = {**os.environ, **{k: v for k, v in TEST_ENV.items() if not os.environ.get(k)}}
    env.pop("CELERY_BROKER_URL", None)  # tasks run eagerly, except in tests that start a worker
    if os.environ.get("DATABASE_URL"):
        say("PostgreSQL: using DATABASE_URL from the environment")
    else:
        say("PostgreSQL: checking 127.0.0.1:5432, role and database dradash")
        ensure_postgres()
        ensure_database()
    if os.environ.get("DRADASH_TEST_REDIS_URL"):
        say("Redis: using DRADASH_TEST_REDIS_URL from the environment")
    else:
        say("Redis: checking 127.0.0.1:6379")
        ensure_redis()
    say("PostgreSQL and Redis programs: checking for the fault tests")
    ensure_fault_tools()
    say("Chromium: checking for the browser tests")
    ensure_chromium()
    steps = [
        ("ruff check", [VENV / "bin" / "ruff", "check", "."]),
        ("ruff format --check", [VENV / "bin" / "ruff", "format", "--check", "."]),
        ("makemigrations --check", [PY, "manage.py", "makemigrations", "--check", "--dry-run"]),
        ("pytest", [PY, "-m", "pytest", *argv]),
    ]
    for number, (title, cmd) in enumerate(steps, start=1):
        say(f"[{number}/{len(steps)}] {title}")
        run(cmd, env=env)
    say(f"all checks passed in {time.monotonic() - started:.0f} s")


def main() -> None:
    commands = {"demo": demo, "test": test}
    if sys.version_info < (3, 11):  # noqa: UP036 (the system python3 may be older)
        die(f"dradash needs Python 3.11 or later; {sys.executable} is {sys.version.split()[0]}")
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
    try:
        commands[sys.argv[1]](sys.argv[2:])
    except KeyboardInterrupt:
        print("\ndev.py: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
