"""manage.py capture --cluster NAME [--json]: snapshot a live cluster now, in this process."""

from __future__ import annotations

import json
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.clusters.models import Cluster
from dradash.clusters.services import CaptureNotPossible, capture_run_create, capture_run_execute
from dradash.snapshots.models import SnapshotRun


class Command(BaseCommand):
    help = (
        "Capture a registered cluster now, in this process (the same work the Celery task "
        "does). Exits non-zero if the capture fails; nothing is stored then."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, metavar="NAME")
        parser.add_argument(
            "--json", action="store_true", help="end with one JSON line describing the result"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["cluster"]
        cluster = Cluster.objects.filter(name=name).first()
        if cluster is None:
            self._fail(options, f"no cluster named {name!r}; register it with add_cluster")
        try:
            run = capture_run_create(cluster, enqueue=False)
        except CaptureNotPossible as exc:
            self._fail(options, str(exc))
        # A queued run (ours, or one waiting for a worker) is carried out here; the worker's
        # task then finds it taken. One that is already running belongs to someone else.
        finished = capture_run_execute(run.pk)
        if finished is None:
            run.refresh_from_db()
            self._fail(
                options,
                f"a capture of {name} is already {run.status} elsewhere (run #{run.pk})",
            )
        if finished.status != SnapshotRun.Status.SUCCEEDED or finished.snapshot is None:
            self._fail(options, f"capture of {name} failed (run #{finished.pk}): {finished.error}")
        snapshot = finished.snapshot
        line = (
            f"Captured snapshot {snapshot.pk} of cluster {name}: {snapshot.object_count} "
            f"objects, {snapshot.status}"
        )
        missing = snapshot.missing_kinds
        if missing:
            line += (
                " (missing: "
                + ", ".join(
                    f"{kind} {info.get('status')}" for kind, info in sorted(missing.items())
                )
                + ")"
            )
        self.stdout.write(line)
        if options["json"]:
            self.stdout.write(json.dumps({"snapshot": snapshot.pk, "status": snapshot.status}))

    def _fail(self, options: dict[str, Any], reason: str) -> NoReturn:
        if options["json"]:
            self.stdout.write(json.dumps({"snapshot": None, "status": "failed"}))
        raise CommandError(reason)
