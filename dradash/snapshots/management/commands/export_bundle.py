from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.snapshots.models import Snapshot
from dradash.snapshots.services import bundle_export


class Command(BaseCommand):
    help = "Write a snapshot as a bundle that import_bundle reads back to an identical snapshot."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("snapshot_id", type=int, metavar="SNAPSHOT_ID")
        parser.add_argument("--output", "-o", required=True, metavar="FILE", help="'-' for stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            snapshot = Snapshot.objects.select_related("cluster").get(pk=options["snapshot_id"])
        except Snapshot.DoesNotExist:
            raise CommandError(f"snapshot {options['snapshot_id']} does not exist") from None
        output = options["output"]
        if output == "-":
            for chunk in bundle_export(snapshot):
                self.stdout.write(chunk, ending="")
            return
        target = Path(output)
        # Write beside the target and rename, so a failure never leaves half a bundle.
        try:
            fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.")
        except OSError as exc:
            raise CommandError(f"{output}: cannot write: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                for chunk in bundle_export(snapshot):
                    fh.write(chunk)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.stdout.write(
            f"Wrote snapshot {snapshot.pk} ({snapshot.object_count} objects) to {output}"
        )
