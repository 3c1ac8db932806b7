"""Time the selector playground on a synthetic fleet, next to the naive per-device loop.

    python -m benchmarks.playground [--profile large] [--seed N] [--naive-sample N]

For typical selectors (a product, a memory size, a driver version, a combination), prints:

* ``cel-python loop``: cel-python's own Environment/program, evaluated once per device with the
  device as a plain CEL map (the naive approach; only for selectors cel-python can run, since it
  lacks Kubernetes' quantity and semver libraries and optional syntax);
* ``per-device loop``: dradash's compiled selector, evaluated once per device (no grouping);
* ``playground, first``: ``matching.evaluate`` on a freshly built ClusterState: building the
  device table, compiling, grouping by projection, evaluating, per-device verdicts;
* ``playground, again``: the same call again (device table and compiled program cached);

and the number of distinct projections. A benchmark, not a test: it asserts nothing.
With ``--naive-sample N`` the two naive loops run on N devices and are scaled to the fleet.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import time
from typing import Any

import celpy
from celpy import celtypes

from benchmarks.synthetic import PROFILES, generate
from dradash.dra import matching
from dradash.dra.cel import CelEvalError, cel_device, compile_selector
from dradash.dra.cel.device import projection, qualify
from dradash.dra.state import ClusterState

N = "device.attributes['gpu.nvidia.com']"
SELECTORS: list[tuple[str, str, bool]] = [  # (name, expression, cel-python can run it)
    ("product", f"{N}.productName == 'NVIDIA H100 80GB HBM3'", True),
    (
        "product regex && type",
        f"{N}.type == 'gpu' && {N}.productName.lowerAscii().matches('h100|h200')",
        False,
    ),
    (
        "memory >= 40Gi",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
        False,
    ),
    ("driver version", f"{N}.driverVersion.isGreaterThan(semver('550.0.0'))", False),
    ("MIG profile, guarded", f"{N}.?profile.orValue('') == '1g.10gb'", False),
]


def _celpy_device(device: Any) -> celtypes.MapType:
    """The device as a plain cel-python map: domain -> id -> value (strings for the rest)."""
    domains: dict[str, dict[str, Any]] = {}
    for name, raw in device.attributes.items():
        domain, ident = qualify(name, device.driver)
        (_, value), *_ = raw.items()
        cel_value: Any = (
            celtypes.BoolType(value)
            if isinstance(value, bool)
            else celtypes.IntType(value)
            if isinstance(value, int)
            else celtypes.StringType(str(value))
        )
        domains.setdefault(domain, {})[ident] = cel_value
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(device.driver),
            celtypes.StringType("attributes"): celtypes.MapType(
                {
                    celtypes.StringType(d): celtypes.MapType(
                        {celtypes.StringType(k): v for k, v in ids.items()}
                    )
                    for d, ids in domains.items()
                }
            ),
        }
    )


def _celpy_loop(expression: str, devices: list[Any]) -> float:
    env = celpy.Environment()
    program = env.program(env.compile(expression))
    started = time.perf_counter()
    for device in devices:
        with contextlib.suppress(celpy.CELEvalError):
            program.evaluate({"device": _celpy_device(device)})
    return time.perf_counter() - started


def _per_device_loop(expression: str, devices: list[Any]) -> float:
    program = compile_selector(expression)
    started = time.perf_counter()
    for device in devices:
        with contextlib.suppress(CelEvalError):
            program.matches(cel_device(matching.device_input(device)))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), default="large")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--naive-sample", type=int, default=0, metavar="N")
    args = parser.parse_args()

    started = time.perf_counter()
    objects = generate(**PROFILES[args.profile], seed=args.seed)
    state = ClusterState.build(objects)
    devices = sorted(state.devices.values(), key=lambda d: d.key)
    print(
        f"synthetic-{args.profile}: {len(devices):,} devices in current pools "
        f"(generated and indexed in {time.perf_counter() - started:.1f} s)"
    )
    sample = devices[: args.naive_sample] if args.naive_sample else devices
    scale = len(devices) / len(sample)
    header = (
        f"{'selector':24} {'cel-python loop':>16} {'per-device loop':>16} "
        f"{'playground, first':>18} {'playground, again':>18} {'projections':>11}  result"
    )
    print(header)
    print("-" * len(header))
    for name, expression, celpy_ok in SELECTORS:
        naive = f"{_celpy_loop(expression, sample) * scale:15.2f}s" if celpy_ok else f"{'n/a':>16}"
        per_device = _per_device_loop(expression, sample) * scale
        # A freshly loaded snapshot: no device table, no compiled program yet.
        fresh = None
        gc.collect()
        fresh = ClusterState.build(objects)
        gc.collect()
        compile_selector.cache_clear()
        t0 = time.perf_counter()
        evaluation = matching.evaluate(fresh, expression)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        evaluation = matching.evaluate(fresh, expression)
        again = time.perf_counter() - t0
        program = compile_selector(expression)
        inputs = [matching.device_input(d) for d in devices]
        groups = len({projection(program.reads, i) for i in inputs})
        s = evaluation.summary
        print(
            f"{name:24} {naive} {per_device:15.2f}s {first:17.2f}s {again:17.2f}s "
            f"{groups:11,}  {s['matched']:,} match, {s['unmatched']:,} not, {s['errors']:,} errors"
        )


if __name__ == "__main__":
    main()
