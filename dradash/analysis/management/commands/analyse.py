from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.services import analysis_run
from dradash.snapshots.models import Snapshot


class Command(BaseCommand):
    help = (
        "Analyse snapshots now, in this process: every Pod's and claim's verdict, findings, the "
        "checklist, capacity and the device inventory, stored for the pages and the API. "
        "Snapshots are analysed by a Celery task when they are stored; use this for snapshots "
        "stored before, or to retry a failed analysis and see its error."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("snapshots", nargs="*", type=int, metavar="ID")
        parser.add_argument(
            "--missing",
            action="store_true",
            help="every snapshot without a finished analysis (none yet, pending or failed; "
            "not compacted ones, which are analysed again when opened)",
        )
        parser.add_argument("--all", action="store_true", help="every snapshot, again")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all"]:
            ids = list(Snapshot.objects.order_by("pk").values_list("pk", flat=True))
        elif options["missing"]:
            finished = (SnapshotAnalysis.Status.DONE, SnapshotAnalysis.Status.COMPACTED)
            done = SnapshotAnalysis.objects.filter(status__in=finished)
            ids = list(
                Snapshot.objects.exclude(pk__in=done.values("pk"))
                .order_by("pk")
                .values_list("pk", flat=True)
            )
        else:
            ids = options["snapshots"]
            if not ids:
                raise CommandError("name snapshot ids, or use --missing or --all")
            unknown = sorted(
                set(ids) - set(Snapshot.objects.filter(pk__in=ids).values_list("pk", flat=True))
            )
            if unknown:
                raise CommandError(f"no snapshot {', '.join(map(str, unknown))}")
        failed = 0
        for snapshot_id in ids:
            try:
                analysis = analysis_run(snapshot_id)
            except Exception as exc:  # recorded on the snapshot's analysis; go on with the rest
                failed += 1
                self.stderr.write(f"snapshot {snapshot_id}: analysis failed: {exc}")
                continue
            if analysis is not None:
                self.stdout.write(
                    f"snapshot {snapshot_id}: analysed in {analysis.seconds or 0:.1f} s"
                )
        if failed:
            raise CommandError(f"{failed} of {len(ids)} analyses failed")
