"""How the analysis grows with the cluster: time and peak memory per node count (issue 28).

    python -m benchmarks.scale [--nodes 5000 10000 20000] [--profile large] [--seed N] [--json]

For each node count, in a fresh Python process (so that its peak memory is that size's alone):
generates the profile's synthetic cluster scaled to that many GPU nodes (Pods, claims and events
per node kept: ``benchmarks.synthetic.scaled``), writes every object as its own compact JSON
text to a temporary file (the database's part: it stores and returns them), frees the objects,
then times what the analyse task does: read each text and ``orjson.loads`` it as it comes (the
worker reads the rows a chunk at a time and parses each as it is read), ``ClusterState.build``
on those and ``analyse``.

Memory is the kernel's peak resident set (VmHWM, /proc/self/status): ``input peak`` is the peak
while generating the cluster and its texts; the peak is then reset (``/proc/self/clear_refs``),
so ``analysis peak`` is the highest RSS while parsing and analysing and ``share`` what that adds
to the RSS just before parsing. Where the
peak cannot be reset, ``analysis peak`` is the process's VmHWM and ``share`` its excess over the
input peak (a lower bound). ``× time`` compares each size's parse + analyse time with the first's.

This is a benchmark, not a test: it asserts nothing. It needs no Django (the core imports none).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import subprocess
import sys
import tempfile
import time
import types
from typing import Any

MIB = 1024  # /proc/self/status counts in kB


def _status(field: str) -> float:
    """A /proc/self/status figure (VmHWM, VmRSS), in MiB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / MIB
    return 0.0


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0); whether it could."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def measure(nodes: int, profile: str = "large", seed: int = 0) -> dict[str, Any]:
    """One size, in this process: the figures (run it in a fresh process)."""
    import orjson

    from benchmarks.state import _dump_all
    from benchmarks.synthetic import bundle_info, generate, scaled
    from dradash.dra.analysis import analyse
    from dradash.dra.state import ClusterState, SnapshotMeta

    sizes = scaled(profile, nodes)
    figures: dict[str, Any] = {"profile": profile, "seed": seed, **sizes}
    started = time.perf_counter()
    objects = generate(**sizes, seed=seed)
    figures["objects"] = len(objects)
    info = bundle_info(profile)
    meta = SnapshotMeta(
        cluster=info["cluster"],
        captured_at=info["capturedAt"],
        server_version=info["serverVersion"],
        api_versions=info["apiVersions"],
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as rows:
        figures["json_mib"] = 0.0
        for text in _dump_all(objects):
            rows.write(text + "\n")  # compact JSON holds no raw newline
            figures["json_mib"] += len(text) / 2**20
        figures["generate_s"] = time.perf_counter() - started
        del objects
        gc.collect()
        figures["input_peak_mib"] = _status("VmHWM")
        figures["rss_before_mib"] = _status("VmRSS")
        reset = _reset_peak()

        rows.seek(0)
        started = time.perf_counter()
        state = ClusterState.build((orjson.loads(line) for line in rows), meta)
    figures["build_s"] = time.perf_counter() - started
    figures["rss_after_build_mib"] = _status("VmRSS")
    started = time.perf_counter()
    result = analyse(state)
    figures["analyse_s"] = time.perf_counter() - started
    figures["rss_after_analyse_mib"] = _status("VmRSS")
    figures["devices"] = len(result.devices)
    figures["seconds"] = figures["build_s"] + figures["analyse_s"]
    peak = _status("VmHWM")
    figures["peak_reset"] = reset
    figures["analysis_peak_mib"] = peak
    figures["vmhwm_mib"] = max(peak, figures["input_peak_mib"])
    figures["share_mib"] = peak - (
        figures["rss_before_mib"] if reset else figures["input_peak_mib"]
    )
    return figures


def _deep_size(roots: list[Any], seen: set[int], stop: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """Bytes of everything reachable from ``roots`` not in ``seen`` (which it extends), not
    going through the objects of ``stop`` (other than the roots); types, functions and modules
    are not counted."""
    total = 0
    stack = list(roots)
    first = {id(r) for r in roots}
    while stack:
        obj = stack.pop()
        key = id(obj)
        if key in seen or isinstance(obj, type | types.ModuleType | types.FunctionType):
            continue
        if key in stop and key not in first:
            continue
        seen.add(key)
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total


def trace(nodes: int, profile: str = "large", seed: int = 0, top: int = 25) -> str:
    """Where the memory is at one size: tracemalloc by file:line after ClusterState.build and
    what analyse adds, then the sizes of the main structures (each counted once, first come
    first counted, in the order printed)."""
    import tracemalloc

    import orjson

    from benchmarks.state import _dump_all
    from benchmarks.synthetic import bundle_info, generate, scaled
    from dradash.dra.analysis import analyse
    from dradash.dra.gc import gc_paused
    from dradash.dra.state import ClusterState, SnapshotMeta

    texts = _dump_all(generate(**scaled(profile, nodes), seed=seed))
    gc.collect()
    out = []
    mib = 2**20

    def stats(title: str, snap: Any, before: Any = None) -> None:
        found = snap.compare_to(before, "lineno") if before else snap.statistics("lineno")
        total = sum(s.size_diff if before else s.size for s in found)
        out.append(f"{title}: {total / mib:,.1f} MiB traced")
        for s in found[:top]:
            size = s.size_diff if before else s.size
            frame = s.traceback[0]
            where = f"{frame.filename.split('/wt/scale/')[-1]}:{frame.lineno}"
            out.append(f"  {size / mib:8.1f} MiB  {where}")

    tracemalloc.start()
    with gc_paused():
        loaded = [orjson.loads(t) for t in texts]
    del texts
    info = bundle_info(profile)
    meta = SnapshotMeta(cluster=info["cluster"], captured_at=info["capturedAt"])
    state = ClusterState.build(loaded, meta)
    del loaded
    built = tracemalloc.take_snapshot()
    stats("after ClusterState.build (texts freed)", built)
    result = analyse(state)
    analysed = tracemalloc.take_snapshot()
    stats("what analyse adds (its result held)", analysed, built)
    tracemalloc.stop()
    del built, analysed

    seen: set[int] = set()
    rows: list[tuple[str, int]] = []
    kinds: dict[str, list[Any]] = {}
    groups = (state.pods, state.claims, state.slices, state.nodes, state.templates, state.classes)
    for group in groups:
        for obj in group.values():
            kinds.setdefault(obj.kind, []).append(obj)
    kinds["Event"] = state.events
    devices = list(state.devices.values())
    stop = {id(o) for objs in kinds.values() for o in objs}
    stop |= {id(d) for d in devices} | {id(p) for p in state.pools.values()}
    stop |= {id(state), id(result)}
    raw = [d.raw for d in devices]
    for title, roots in (
        ("device attribute dicts (raw)", [r.get("attributes") for r in raw]),
        ("device capacity dicts (raw)", [r.get("capacity") for r in raw]),
        ("device raw dicts (rest)", raw),
        ("Device objects", devices),
    ):
        rows.append((title, _deep_size(roots, seen, stop)))
    for kind, objs in sorted(kinds.items()):
        rows.append((f"{kind} raw dicts", _deep_size([o.raw for o in objs], seen, stop)))
        rows.append((f"{kind} wrappers (+ their own parts)", _deep_size(objs, seen, stop)))
    rows.append(("Pools", _deep_size(list(state.pools.values()), seen, stop)))
    for key, value in state._derived.items():
        rows.append((f"state.derived[{key!r}]", _deep_size([value], seen, stop)))
    rows.append(("ClusterState (rest)", _deep_size([state], seen, stop)))
    names = [f.name for f in dataclasses.fields(result)]
    for name in names:
        rows.append((f"analysis.{name}", _deep_size([getattr(result, name)], seen, stop)))
    out.append("structures (deep sizes, each object counted once):")
    width = max(len(r[0]) for r in rows)
    out += [f"  {name:<{width}}  {size / mib:8.1f} MiB" for name, size in rows]
    out.append(f"  {'total':<{width}}  {sum(r[1] for r in rows) / mib:8.1f} MiB")
    return "\n".join(out)


def run(nodes: list[int], profile: str = "large", seed: int = 0) -> list[dict[str, Any]]:
    """Each size in a fresh process, one after the other."""
    out = []
    for n in nodes:
        child = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.scale",
                "--child",
                str(n),
                "--profile",
                profile,
                "--seed",
                str(seed),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        out.append(json.loads(child.stdout.strip().splitlines()[-1]))
    return out


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as an aligned table."""
    first = rows[0]["seconds"] if rows else 1.0
    head = (
        "nodes",
        "objects",
        "devices",
        "read+build s",
        "analyse s",
        "parse+analyse s",
        "× time",
        "input peak MB",
        "analysis peak MB",
        "VmHWM MB",
        "share MB",
    )
    body = [
        (
            f"{r['nodes']:,}",
            f"{r['objects']:,}",
            f"{r['devices']:,}",
            f"{r['build_s']:.1f}",
            f"{r['analyse_s']:.1f}",
            f"{r['seconds']:.1f}",
            f"{r['seconds'] / first:.2f}",
            f"{r['input_peak_mib']:,.0f}",
            f"{r['analysis_peak_mib']:,.0f}",
            f"{r['vmhwm_mib']:,.0f}",
            f"{r['share_mib']:,.0f}",
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in (head, *body)) for i in range(len(head))]
    lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    if rows and not all(r["peak_reset"] for r in rows):
        lines.append("(peak not reset: analysis peak is the process's, share a lower bound)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.synthetic import PROFILES

    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--nodes", type=int, nargs="+", default=[5_000, 10_000, 20_000])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="large")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON line per size")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)  # one size, this process
    parser.add_argument(
        "--trace", type=int, metavar="NODES", help="where the memory is at that size, instead"
    )
    args = parser.parse_args(argv)
    if args.trace:
        print(trace(args.trace, args.profile, args.seed))
        return 0
    if args.child:
        print(json.dumps(measure(args.child, args.profile, args.seed), sort_keys=True))
        return 0
    rows = run(args.nodes, args.profile, args.seed)
    if args.json:
        for r in rows:
            rounded = {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
            print(json.dumps(rounded, sort_keys=True))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
