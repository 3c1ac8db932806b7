"""Time the pure core on a synthetic cluster: parsing stored objects, ClusterState, the analysis.

    python -m benchmarks.state [--profile large] [--seed N] [--chains N] [--bundle] [--json]

Generates the profile's cluster in memory (``benchmarks.synthetic``), turns every object into its
own compact JSON text (as the database stores and returns them), then times what the analyse task
computes: ``json.loads`` of every text (GC paused), ``ClusterState.build``, the diagnosis of every
DRA Pod and claim, the findings, the whole analysis (``dradash.dra.analysis.analyse``), and
``pod_chain`` for a sample of Pods (what a Pod's page computes). ``--bundle`` also times writing
the whole bundle and ``parse_bundle`` on it (the import path). Prints an aligned table, or one
JSON line with ``--json``.

This is a benchmark, not a test: it asserts nothing. It needs no Django (the core imports none).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from benchmarks.synthetic import PROFILES, bundle_chunks, bundle_info, current_devices, generate
from dradash.dra.analysis import analyse
from dradash.dra.bundle import parse_bundle
from dradash.dra.chain import pod_chain
from dradash.dra.diagnosis import diagnose_all
from dradash.dra.findings import find
from dradash.dra.gc import gc_paused
from dradash.dra.state import ClusterState, SnapshotMeta

T = TypeVar("T")


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    started = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - started


def _dump_all(objects: list[dict[str, Any]]) -> list[str]:
    """Each object as the compact JSON text the database stores for it."""
    with gc_paused():
        return [
            json.dumps(o, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
            for o in objects
        ]


def _load_all(texts: list[str]) -> list[dict[str, Any]]:
    """Each text parsed on its own, as ``snapshot_state`` parses the rows the database returns."""
    with gc_paused():
        return [json.loads(t) for t in texts]


def _parse(data: bytes) -> Any:
    return parse_bundle([("bundle.json", data)], max_bytes=len(data))


def _bundle_bytes(profile: str, objects: list[dict[str, Any]]) -> bytes:
    return "".join(bundle_chunks(profile, objects)).encode()


def _rss_mib() -> float:
    """Resident set size now (Linux /proc), in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run(profile: str, seed: int = 0, chains: int = 50, bundle: bool = False) -> dict[str, Any]:
    """Generate, load and read one synthetic snapshot; return the figures."""
    sizes = PROFILES[profile]
    figures: dict[str, Any] = {"profile": profile, "seed": seed, **sizes}

    objects, figures["generate_s"] = _timed(lambda: generate(**sizes, seed=seed))
    figures["objects"] = len(objects)
    figures["devices"] = current_devices(objects)
    figures["rss_after_generate_mib"] = round(_rss_mib(), 1)

    texts, figures["json_dumps_s"] = _timed(_dump_all, objects)
    figures["json_bytes"] = sum(len(t.encode()) for t in texts)

    if bundle:
        data, figures["write_bundle_s"] = _timed(_bundle_bytes, profile, objects)
        figures["bundle_bytes"] = len(data)
        _, figures["parse_bundle_s"] = _timed(_parse, data)
        del data
    del objects
    gc.collect()

    loaded, figures["json_loads_s"] = _timed(_load_all, texts)
    del texts
    info = bundle_info(profile)
    meta = SnapshotMeta(
        cluster=info["cluster"],
        captured_at=info["capturedAt"],
        server_version=info["serverVersion"],
        api_versions=info["apiVersions"],
    )
    state, figures["build_s"] = _timed(lambda: ClusterState.build(loaded, meta))
    figures["rss_after_build_mib"] = round(_rss_mib(), 1)
    figures["dra_pods"] = len(state.dra_pods)
    figures["state_devices"] = len(state.devices)

    # What the analyse task computes once per snapshot: first the diagnosis of every DRA Pod
    # and claim and the findings alone, then everything (dradash.dra.analysis.analyse).
    verdicts, figures["diagnose_all_s"] = _timed(diagnose_all, state)
    figures["stuck_pods"] = sum(1 for d in verdicts.pods.values() if d.stuck)
    found, figures["findings_s"] = _timed(find, state)
    figures["findings"] = len(found)
    result, figures["analyse_s"] = _timed(analyse, ClusterState.build(loaded, meta))
    figures["analysed_devices"] = len(result.devices)
    figures["explanations"] = len({id(c.explanation) for c in result.claims})

    pods = sorted(state.dra_pods, key=lambda p: (p.namespace, p.name))
    step = max(1, len(pods) // max(1, chains))
    sample = pods[::step][:chains]
    per_pod = []
    for pod in sample:
        _, seconds = _timed(lambda pod=pod: pod_chain(state, pod))
        per_pod.append(seconds)
    figures["pod_chain_pods"] = len(sample)
    figures["pod_chain_s"] = sum(per_pod)
    figures["pod_chain_mean_ms"] = 1000 * sum(per_pod) / len(per_pod) if per_pod else 0.0
    figures["pod_chain_max_ms"] = 1000 * max(per_pod, default=0.0)
    figures["pod_chain_all_pods_est_s"] = figures["pod_chain_mean_ms"] * len(pods) / 1000
    figures["peak_rss_mib"] = round(_peak_rss_mib(), 1)
    return figures


def table(f: dict[str, Any]) -> str:
    """The figures as an aligned table (times in milliseconds)."""
    mib = 2**20

    def ms(key: str) -> str:
        return f"{1000 * f[key]:,.1f}"

    rows: list[tuple[str, str, str]] = [
        ("generate", ms("generate_s"), f"{f['objects']:,} objects, {f['devices']:,} devices"),
        ("json.dumps each object", ms("json_dumps_s"), f"{f['json_bytes'] / mib:.1f} MiB"),
    ]
    if "parse_bundle_s" in f:
        rows += [
            ("write_bundle", ms("write_bundle_s"), f"{f['bundle_bytes'] / mib:.1f} MiB"),
            ("parse_bundle", ms("parse_bundle_s"), "the import path (GC not paused)"),
        ]
    rows += [
        ("json.loads each (gc paused)", ms("json_loads_s"), ""),
        (
            "ClusterState.build",
            ms("build_s"),
            f"{f['dra_pods']:,} DRA pods, {f['state_devices']:,} devices",
        ),
    ]
    rows += [
        (
            "diagnose every Pod and claim",
            ms("diagnose_all_s"),
            f"{f['stuck_pods']:,} Pods stuck (target ≤ 10 s)",
        ),
        ("findings", ms("findings_s"), f"{f['findings']:,} findings"),
    ]
    rows += [
        (
            "analyse (everything, fresh state)",
            ms("analyse_s"),
            f"{f['analysed_devices']:,} devices, {f['explanations']:,} distinct explanations",
        ),
        (
            f"pod_chain × {f['pod_chain_pods']}",
            ms("pod_chain_s"),
            f"{f['pod_chain_mean_ms']:.2f} ms/pod (max {f['pod_chain_max_ms']:.2f}); "
            f"all {f['dra_pods']:,} ≈ {f['pod_chain_all_pods_est_s']:.1f} s",
        ),
        ("RSS after generate", "", f"{f['rss_after_generate_mib']:,.0f} MiB"),
        ("RSS after build", "", f"{f['rss_after_build_mib']:,.0f} MiB"),
        ("peak RSS", "", f"{f['peak_rss_mib']:,.0f} MiB"),
    ]
    width = max(len(r[0]) for r in rows)
    ms_width = max(len(r[1]) for r in rows)
    head = (
        f"synthetic-{f['profile']} (seed {f['seed']}): {f['nodes']:,} GPU nodes × "
        f"{f['devices_per_node']}, {f['pods']:,} pods, {f['claims']:,} claims, "
        f"{f['events']:,} events"
    )
    lines = [head, f"{'step':<{width}}  {'ms':>{ms_width}}  notes"]
    lines += [f"{name:<{width}}  {t:>{ms_width}}  {note}".rstrip() for name, t, note in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.state", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="large")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chains", type=int, default=50, help="Pods to run pod_chain on")
    parser.add_argument("--bundle", action="store_true", help="also time the bundle round trip")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    figures = run(args.profile, args.seed, args.chains, args.bundle)
    if args.json:
        rounded = {k: round(v, 6) if isinstance(v, float) else v for k, v in figures.items()}
        print(json.dumps(rounded, sort_keys=True))
    else:
        print(table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
