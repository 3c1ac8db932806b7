"""The recorded upstream allocator corpora replayed through the path users see: each line
imported as a bundle (its server version and feature gates in SnapshotInfo), analysed as the
analyse task does when a snapshot is stored, then read back from the explain and diagnosis APIs.

* ``GET …/pods/default/oracle-pod/explain``: the allocator's answer on every node (outcome and
  error text; PreFilter's own texts where the scheduler stops before the library, see
  tests/oracle_bundle.py) and, on the node it names, the devices chosen, equal to what
  k8s.io/dynamic-resource-allocation decided (v0.36.2, and 1.37's development code).
* ``GET …/diagnosis``: where the recording decides it, the verdict agrees: an error on some node
  aborts the scheduling attempt (the reason is that error's); claims that fit somewhere are
  ``schedulable-now``; claims that fit nowhere without an error are not reported as aborting.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from dradash.dra.allocator.explain import error_reason
from tests.oracle_bundle import POD, bundle, corpus, differences
from tests.stored import import_analysed

pytestmark = pytest.mark.django_db

CASES = [(release, name) for release in (36, 37) for name in sorted(corpus(release))]
CHUNK = 25  # cases per test: each is imported and analysed on its own, in one transaction
CHUNKS = [CASES[i : i + CHUNK] for i in range(0, len(CASES), CHUNK)]


def verdict_problems(case: dict[str, Any], diagnosis: dict[str, Any]) -> list[str]:
    recorded = case["expect"]["nodes"]
    errors = [n["error"] for n in recorded if n["outcome"] == "error"]
    stage, reason, summary = diagnosis["stage"], diagnosis["reason"], diagnosis["summary"]
    if stage != "claim-unallocated":
        return [f"stage {stage}, expected claim-unallocated (the Pod's claims are pending)"]
    if errors:
        if reason not in {error_reason(e) for e in errors}:
            return [f"reason {reason}, recorded errors {errors[:2]}"]
    elif any(n["outcome"] == "fit" for n in recorded):
        if reason != "schedulable-now":
            return [f"reason {reason}, but the claims fit on some node"]
    elif reason == "schedulable-now" or "aborts scheduling of the Pod" in summary:
        return [f"reason {reason} ({summary[:120]}), but nothing fits and nothing aborts"]
    return []


def replay(release: int, name: str, api_client: Any) -> list[str]:
    """Import the line, analyse it, read the Pod's explanation and diagnosis from the API."""
    case = corpus(release)[name]
    data = json.dumps(bundle(case, release)).encode()
    snapshot = import_analysed(files=[(f"{name}.json", data)])
    base = f"/api/v1/snapshots/{snapshot.pk}/pods/{POD[0]}/{POD[1]}"
    explanation = api_client.get(f"{base}/explain")
    diagnosis = api_client.get(f"{base}/diagnosis")
    if explanation.status_code != 200 or diagnosis.status_code != 200:
        return [f"explain {explanation.status_code}, diagnosis {diagnosis.status_code}"]
    return differences(case, explanation.json()) + verdict_problems(case, diagnosis.json())


@pytest.mark.parametrize(
    "chunk", CHUNKS, ids=[f"1.{c[0][0]}-{c[0][1]}..{c[-1][1]}" for c in CHUNKS]
)
def test_the_stored_analysis_answers_as_kubernetes_did(
    chunk: list[tuple[int, str]], api_client: Any
) -> None:
    problems = {
        f"1.{release} {name}": found
        for release, name in chunk
        for found in [replay(release, name, api_client)]
        if found
    }
    assert problems == {}


def test_both_corpora_are_replayed_whole() -> None:
    """The shared corpora as their READMEs describe them: nothing left out of the replay."""
    assert [len(corpus(r)) for r in (36, 37)] == [1500, 1500]
    nodes = [sum(len(c["expect"]["nodes"]) for c in corpus(r).values()) for r in (36, 37)]
    assert nodes == [3889, 3900]
    assert {c["profile"] for c in corpus(37).values()} == {"plain", "advanced", "mixed", "v137"}
