from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.dra.bundle import BundleError
from dradash.snapshots.services import bundle_import


class Command(BaseCommand):
    help = (
        "Import bundle files (kubectl get … -o json|yaml output, JSON arrays, YAML streams) "
        "as one snapshot. Nothing is stored if any file is bad, or (without --skip-invalid) "
        "any object is invalid."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--cluster", help="cluster name (default: the bundle's SnapshotInfo)")
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="import the valid objects and list the invalid ones (recorded on the snapshot) "
            "instead of refusing the bundle; a file that cannot be read still refuses it",
        )
        parser.add_argument(
            "--json", action="store_true", help="end with one JSON line describing the result"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        files = []
        limit = settings.DRADASH_BUNDLE_MAX_BYTES
        for name in options["files"]:
            path = Path(name)
            try:
                size = path.stat().st_size
                if size > limit:
                    raise CommandError(
                        f"{name}: file is {size:,} bytes, over the limit of {limit:,} bytes"
                    )
                files.append((name, path.read_bytes()))
            except OSError as exc:
                raise CommandError(f"{name}: cannot read: {exc.strerror}") from None
        try:
            snapshot = bundle_import(
                files=files, cluster_name=options["cluster"], skip_invalid=options["skip_invalid"]
            )
        except BundleError as exc:
            raise CommandError(str(exc)) from None
        ignored = sum(snapshot.ignored.values())
        refused = snapshot.refused_count
        self.stdout.write(
            f"Imported snapshot {snapshot.pk} of cluster {snapshot.cluster.name}: "
            f"{snapshot.object_count} objects"
            + (f", {ignored} ignored ({', '.join(sorted(snapshot.ignored))})" if ignored else "")
            + (f", {refused} refused as invalid (left out)" if refused else "")
        )
        for entry in snapshot.refused:
            self.stdout.write(f"Refused: {entry['file']}, {entry['location']}: {entry['problem']}")
        if refused > len(snapshot.refused):
            self.stdout.write(f"… and {refused - len(snapshot.refused)} more refused")
        if options["json"]:
            result = {"snapshot": snapshot.pk, "objects": snapshot.object_count, "ignored": ignored}
            if options["skip_invalid"]:  # the line is a contract: more only when asked for
                result["refused"] = refused
            self.stdout.write(json.dumps(result))
