"""Time and memory of the red team's CEL attacks (issue 22), each in a process of its own.

    python -m benchmarks.cel_budget [--timeout 30] [--memory-cap-mb 3000]

Each attack is evaluated as the selector API and the playground evaluate it
(``evaluate_devices`` on one device, with the per-evaluation time budget), in a child process
capped at ``--memory-cap-mb`` of address space and killed after ``--timeout`` seconds. Prints
the wall time, how much the child's peak resident memory grew, and the answer (the first words
of the verdict or the error). The regex line compiles 200 distinct large regexes and prints how
much resident memory stays with the process afterwards (the compiled-regex cache). A benchmark,
not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time

D = "dra.example.com"


def _doubling(copies: int, levels: int, start: str, body: str) -> str:
    """``cel.bind(x0, start, cel.bind(x1, x0 + x0 …, … body))``: ``levels`` times ``copies``
    copies of the list before."""
    binds = "".join(f"cel.bind(x{i + 1}, {' + '.join([f'x{i}'] * copies)}, " for i in range(levels))
    return f"cel.bind(x0, {start}, {binds}{body}" + ")" * (levels + 1)


# Each level a list of 4 copies of the level before: 4^20 elements once flattened.
_NESTED = "cel.bind(x0, [1], " + "".join(
    f"cel.bind(x{i + 1}, [x{i}, x{i}, x{i}, x{i}], " for i in range(20)
)
TIMESTAMP = 'timestamp("2024-01-01T00:00:00Z")'
ATTACKS: list[tuple[str, str]] = [
    ("distinct of 14,000", "lists.range(14000).distinct().size() > 0"),
    ("sets.contains 10,000²", "sets.contains(lists.range(10000), lists.range(10000))"),
    ("sets.equivalent 6,000²", "sets.equivalent(lists.range(6000), lists.range(6000))"),
    ("sort of 4M (doubling)", _doubling(2, 12, "lists.range(1000)", "x12.sort().size() > 0")),
    ("equality of 8M (doubling)", _doubling(2, 13, "lists.range(1000)", "x13 == x13")),
    ("format %.999999999e", '"%.999999999e".format([1.0]).size() > 0'),
    ("a + a + a + a, 10 levels", _doubling(4, 10, "lists.range(10)", "size(x10) > 0")),
    ("[l, l, l, l] 20 levels", _NESTED + "x20.flatten(20).size() > 0" + ")" * 21),
    ("int of 5,000 digits", f'int("{"9" * 5000}") == 1'),
    ('getHours("America")', f'{TIMESTAMP}.getHours("America") == 1'),
    ('getHours("A" × 256)', f'{TIMESTAMP}.getHours("{"A" * 256}") == 1'),
    ("200 distinct regexes", "<regexes>"),
]


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def _one(index: int) -> dict[str, object]:
    from dradash.dra.cel import CelCompileError, DeviceInput, compile_selector
    from dradash.dra.cel.batch import Selector, evaluate_devices

    device = DeviceInput(driver=D, attributes={"model": {"string": "a"}}, capacity={})
    name, expression = ATTACKS[index]
    gc.collect()
    if expression == "<regexes>":
        device = DeviceInput(driver=D, attributes={"model": {"string": "a" * 2000}}, capacity={})
        before = _rss_kb()
        started = time.perf_counter()
        answers = set()
        for i in range(200):
            regex = f"[a-z]{{1000}}[0-9]{{{i + 1}}}"
            program = compile_selector(f'device.attributes["{D}"].model.matches("{regex}")')
            [verdict] = evaluate_devices([Selector(program)], [device])
            answers.add(str(verdict.matches if verdict.error is None else verdict.error)[:60])
        gc.collect()
        return {
            "seconds": time.perf_counter() - started,
            "grew_mb": (_rss_kb() - before) / 1024,
            "answer": ", ".join(sorted(answers)),
        }
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        program = compile_selector(expression)
    except CelCompileError as exc:
        answer = f"compile error: {exc}"
    else:
        [verdict] = evaluate_devices([Selector(program)], [device])
        answer = str(verdict.matches) if verdict.error is None else verdict.error
    return {
        "seconds": time.perf_counter() - started,
        "grew_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024,
        "answer": answer,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=30)
    parser.add_argument("--memory-cap-mb", type=int, default=3000)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        cap = args.memory_cap_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        try:
            result = _one(args.one)
        except MemoryError:
            result = {"answer": f"MemoryError at the {args.memory_cap_mb} MB cap"}
        except Exception as exc:  # a 500 in the API
            result = {"answer": f"uncaught {type(exc).__name__}: {exc}"[:200]}
        print(json.dumps(result))
        return
    print(f"{'attack':28} {'time':>9} {'memory':>10}  answer")
    for i, (name, _) in enumerate(ATTACKS):
        cmd = [sys.executable, "-m", "benchmarks.cel_budget", "--one", str(i)]
        cmd += ["--memory-cap-mb", str(args.memory_cap_mb)]
        started = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            lines = done.stdout.strip().splitlines()
            result = json.loads(lines[-1]) if lines else {"answer": done.stderr[-200:]}
        except subprocess.TimeoutExpired:
            result = {"answer": f"killed after {args.timeout:.0f} s"}
        seconds = result.get("seconds", time.perf_counter() - started)
        grew = result.get("grew_mb")
        memory = f"{grew:7.0f} MB" if isinstance(grew, int | float) else f"{'?':>10}"
        answer = " ".join(str(result["answer"]).split())[:90]
        print(f"{name:28} {seconds:8.2f}s {memory}  {answer}", flush=True)


if __name__ == "__main__":
    main()
