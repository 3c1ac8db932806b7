"""The pure core (dradash/dra/) has no Django imports and is unit-testable on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "dradash" / "dra"
MODULES = sorted(p.stem for p in CORE.glob("*.py") if p.stem != "__init__")


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_core_modules_exist() -> None:
    assert {"bundle", "chain", "kinds", "nodes", "normalize", "objects", "state"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_core_module_imports_nothing_from_django_or_the_rest_of_dradash(module: str) -> None:
    imported = _imported_modules(CORE / f"{module}.py")

    assert not {m for m in imported if m.split(".")[0] in ("django", "rest_framework", "celery")}
    assert not {m for m in imported if m.startswith("dradash.") and not m.startswith("dradash.dra")}


def test_importing_the_core_loads_no_django(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        + "".join(f"import dradash.dra.{m}\n" for m in MODULES)
        + "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery')))\n"
        + "print(os.environ.get('DJANGO_SETTINGS_MODULE'))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}

    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "None"]
