"""manage.py add_cluster NAME (--kubeconfig PATH [--context CTX] | --in-cluster)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.clusters.services import ClusterConfigError, cluster_register


def non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Register a cluster to capture (or update the one of that name). Only the kubeconfig's "
        "path and context are stored; the credentials stay in the file."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", metavar="NAME", help="the cluster's name in dradash")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--kubeconfig", metavar="PATH", help="kubeconfig file to connect with")
        source.add_argument(
            "--in-cluster",
            action="store_true",
            help="use the service account of the pod dradash runs in",
        )
        parser.add_argument(
            "--context", metavar="CTX", help="kubeconfig context (default: its current-context)"
        )
        schedule = parser.add_mutually_exclusive_group()
        schedule.add_argument(
            "--interval",
            type=non_negative,
            metavar="MIN",
            help="capture every MIN minutes (default 60; 0: only on demand)",
        )
        schedule.add_argument(
            "--no-schedule",
            action="store_true",
            help="capture only on demand (same as --interval 0)",
        )
        parser.add_argument(
            "--keep",
            type=non_negative,
            metavar="N",
            help="keep the last N captured snapshots; pinned ones are always kept "
            "(default 48; 0: keep all)",
        )
        parser.add_argument(
            "--keep-analysed",
            type=non_negative,
            metavar="N",
            help="keep the detailed analysis of the last N captured snapshots; older ones keep "
            "their objects and summary and are analysed again when opened (default 12; "
            "0: never compact)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["context"] and not options["kubeconfig"]:
            raise CommandError("--context needs --kubeconfig")
        interval = 0 if options["no_schedule"] else options["interval"]
        try:
            cluster, created = cluster_register(
                name=options["name"],
                kubeconfig_path=options["kubeconfig"] or "",
                context=options["context"] or "",
                in_cluster=options["in_cluster"],
                capture_interval=interval,
                keep_last=options["keep"],
                keep_analysed=options["keep_analysed"],
            )
        except ClusterConfigError as exc:
            raise CommandError(str(exc)) from None
        schedule = (
            f"captured every {cluster.capture_interval} minutes"
            if cluster.capture_interval
            else "captured on demand only"
        )
        keep = (
            f"keeping the last {cluster.keep_last} snapshots"
            if cluster.keep_last
            else "keeping every snapshot"
        )
        if cluster.keep_analysed:
            keep += f", the analyses of the last {cluster.keep_analysed}"
        self.stdout.write(
            f"{'Added' if created else 'Updated'} cluster {cluster.name}: "
            f"{cluster.source_label}, {schedule}, {keep}."
        )
