"""The embedded default as a new user meets it after the Quickstart: `DRADASH_DEBUG=1` with
SQLite and no broker, `manage.py import_bundle` in a process of its own. The analysis runs in
the process, and the command prints what it did and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "tests/fixtures/real-dumps"


def test_an_import_on_the_embedded_default_says_only_what_it_did(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DATABASE_URL", "CELERY_", "DRADASH_", "DJANGO_"))
    }
    env |= {"DRADASH_DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT, timeout=300)
    bundle = sorted(DUMP.glob("aicr__*resourceslices.yaml"))[0]
    done = subprocess.run(
        [*manage, "import_bundle", "--cluster", "mine", str(bundle)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Imported snapshot 1 of cluster mine:")
    assert done.stderr == ""  # kombu's "No hostname was supplied" was printed here
