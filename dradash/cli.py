"""The ``dradash`` command (DESIGN "The terminal"): ``dradash why pod|claim NAMESPACE/NAME``.

It reads bundles from files or standard input and prints the same verdict as the object's page,
with the pure core only: no database, no Django settings, no server. Exit status: 0 when the
object is healthy, 1 for any other stage, 2 when the input is unusable, the object is not in
it, or the input cannot say whether it is stuck (a claim of a bundle without Pods: its verdict
is unknown, and the text says which kinds to add).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any, BinaryIO

EXIT_HEALTHY, EXIT_STUCK, EXIT_UNUSABLE = 0, 1, 2
# No verdict the input can prove: like unusable input, no answer (the verdict is printed).
EXIT_UNKNOWN = EXIT_UNUSABLE
DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # as import_bundle's DRADASH_BUNDLE_MAX_BYTES

EPILOG = """\
examples:
  kubectl get pods,nodes,events,resourceclaims,resourceclaimtemplates,resourceslices,\\
    deviceclasses -A -o json | dradash why pod ml/trainer-0 -f -
  dradash why claim ml/trainer-0-gpu-7x2kq -f bundle.json -f more.yaml --json

exit status: 0 healthy, 1 stuck at any other stage, 2 unusable input, no such object, or
  unknown (the input lacks the kinds that would say, e.g. a claim without its Pods)
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own exit status is 2 as well
        self.print_usage(sys.stderr)
        self.exit(EXIT_UNUSABLE, f"dradash: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    top = _Parser(
        prog="dradash",
        description="Kubernetes Dynamic Resource Allocation, explained from the terminal.",
    )
    commands = top.add_subparsers(dest="command", required=True, parser_class=_Parser)
    why = commands.add_parser(
        "why",
        help="why a Pod or ResourceClaim does (not) get its devices",
        description="Why a Pod or ResourceClaim does (not) get its devices: the stage where it "
        "is stuck, the reason, the allocator's funnel, evidence and next steps, from bundles "
        "(`kubectl get … -o json`, YAML, a dradash export; several files make one snapshot).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    why.add_argument("kind", choices=["pod", "claim"], help="what to explain")
    why.add_argument("ref", metavar="NAMESPACE/NAME", help="the Pod or claim")
    why.add_argument(
        "-f",
        "--file",
        dest="files",
        action="append",
        metavar="FILE",
        help="a bundle file, or - for standard input (repeatable; default: standard input "
        "when it is not a terminal)",
    )
    why.add_argument(
        "--json", action="store_true", help="print the diagnosis API's JSON instead of text"
    )
    why.add_argument(
        "--version",
        metavar="vX.Y",
        help="judge by the rules of this Kubernetes version (default: the bundle's server "
        "version, else the newest)",
    )
    why.add_argument(
        "--feature-gates",
        metavar="NAME=true,…",
        help="the feature gates kube-scheduler runs with, where they differ from the version's "
        "defaults (e.g. DRAPartitionableDevices=true); over the bundle's own",
    )
    why.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="colour the text: auto (on a terminal, unless NO_COLOR is set), always or never",
    )
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return why(args)


def why(args: argparse.Namespace) -> int:
    from dradash.dra import why as core
    from dradash.dra.bundle import BundleError

    namespace, slash, name = args.ref.partition("/")
    if not slash or not namespace or not name or "/" in name:
        return _fail(f"{args.ref!r}: give the object as NAMESPACE/NAME")
    files = args.files or []
    if not files:
        if sys.stdin.isatty():
            return _fail("no input: give bundle files with -f FILE, or pipe one in with -f -")
        files = ["-"]
    if files.count("-") > 1:
        return _fail("standard input (-f -) can be read only once")
    try:
        version = core.kubernetes_version(args.version) if args.version else None
        gates = core.feature_gates(args.feature_gates) if args.feature_gates else None
        max_bytes = int(os.environ.get("DRADASH_BUNDLE_MAX_BYTES") or DEFAULT_MAX_BYTES)
        with ExitStack() as stack:
            sources: list[tuple[str, BinaryIO]] = []
            for path in files:
                if path == "-":
                    sources.append(("<stdin>", sys.stdin.buffer))
                else:
                    sources.append((path, stack.enter_context(open(path, "rb"))))
            state = core.load(sources, max_bytes=max_bytes, version=version, gates=gates)
        verdict = core.verdict(state, args.kind, namespace, name)
    except (BundleError, core.UsageError) as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"{exc.filename or 'input'}: {exc.strerror or exc}")
    except ValueError as exc:  # DRADASH_BUNDLE_MAX_BYTES not a number
        return _fail(str(exc))
    if args.json:
        sys.stdout.write(core.json_text(verdict))
    else:
        colour = args.color == "always" or (
            args.color == "auto" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        )
        sys.stdout.write(core.render(verdict, colour=colour))
    sys.stdout.flush()
    if verdict.healthy:
        return EXIT_HEALTHY
    return EXIT_UNKNOWN if verdict.unknown else EXIT_STUCK


def _fail(message: str) -> int:
    from dradash.dra.why import terminal_safe  # a message may quote the bundle

    print(f"dradash: {terminal_safe(message)}", file=sys.stderr)
    return EXIT_UNUSABLE


if __name__ == "__main__":  # python -m dradash.cli
    sys.exit(main())
