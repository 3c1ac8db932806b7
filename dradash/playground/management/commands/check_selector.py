from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.dra import matching
from dradash.playground.services import NotAnalysed, selector_evaluate
from dradash.snapshots.selectors import snapshot_list


class Command(BaseCommand):
    help = (
        "Evaluate a CEL device selector against a snapshot's devices. Exits 0 only when at least "
        "one device matches and none errors (nor is left unknown by dradash's time limits), so "
        "CI pipelines can lint claims before deploying."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("expression", metavar="EXPR")
        parser.add_argument("--snapshot", type=int, required=True, metavar="ID")
        parser.add_argument(
            "--class", dest="device_class", metavar="NAME", help="apply this DeviceClass first"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        snapshot = snapshot_list().filter(pk=options["snapshot"]).first()
        if snapshot is None:
            raise CommandError(f"snapshot {options['snapshot']} does not exist")
        try:
            evaluation = selector_evaluate(
                expression=options["expression"],
                snapshot=snapshot,
                device_class=options["device_class"],
            )
        except matching.UnknownDeviceClass as exc:
            raise CommandError(f"{exc} in snapshot {snapshot.pk}") from None
        except NotAnalysed as exc:
            raise CommandError(str(exc)) from None
        if evaluation.compile_error:
            raise CommandError(f"the expression does not compile: {evaluation.compile_error}")
        summary = evaluation.summary
        scope = f" of class {evaluation.device_class}" if evaluation.device_class else ""
        self.stdout.write(
            f"{len(evaluation.rows)} devices in snapshot {snapshot.pk}{scope}: "
            f"{summary['matched']} match, {summary['unmatched']} do not, "
            f"{summary['errors']} errors"
            + (f", {summary['unknown']} unknown" if summary["unknown"] else "")
        )
        for kind, groups in (
            ("error", evaluation.error_groups),
            ("unknown", evaluation.unknown_groups),
        ):
            for message, rows in groups:
                names = ", ".join("/".join(r.device.key) for r in rows[:3])
                more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
                self.stdout.write(f"  {kind} on {len(rows)} devices ({names}{more}): {message}")
        if summary["errors"]:
            raise CommandError(
                "the selector raises errors: the scheduler would abort scheduling of any Pod "
                "whose claim uses it"
            )
        if summary["unknown"]:
            raise CommandError(
                f"dradash stopped evaluating the selector on {summary['unknown']} devices (its "
                "own time limits, not Kubernetes'): whether it matches or fails there is unknown"
            )
        if not summary["matched"]:
            raise CommandError("no device matches the selector")
