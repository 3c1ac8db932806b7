"""Which allocator runs, with which features: ``structured/internal/types.go`` (Features) and
``structured/allocator.go`` (NewAllocator picks the first of stable → incubating → experimental
whose supported features cover the enabled ones), plus the feature gates' defaults per
Kubernetes version (``pkg/features/kube_features.go``; dra-reference §4.6).

Every page and verdict reads the snapshot's server version through ``kubernetes_minor``; a
snapshot without one is judged by the newest release's rules, Kubernetes 1.37 (DESIGN
"Kubernetes fidelity").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dradash.dra.cel.dialect import NEWEST, Dialect

if TYPE_CHECKING:
    from dradash.dra.state import ClusterState
_VERSION = re.compile(r"\s*v?(\d+)\.(\d+)")


def kubernetes_minor(server_version: str) -> int | None:
    """The minor version of a Kubernetes 1.x server version ("v1.36.1" → 36), or None."""
    match = _VERSION.match(server_version or "")
    if not match or int(match.group(1)) != 1:
        return None
    return int(match.group(2))


@dataclass(frozen=True)
class Features:
    """What the cluster's version enables; the defaults are Kubernetes 1.37's.

    The first seven are upstream's ``structured.Features``; ``skip_incomplete_pools`` and
    ``release`` select the code of older releases where it decides differently.
    """

    prioritized_list: bool = True  # DRAPrioritizedList: GA 1.36
    admin_access: bool = True  # DRAAdminAccess: GA 1.36
    # DRADeviceTaints (GA 1.37); also whether DeviceTaintRules apply (DRADeviceTaintRules, GA
    # 1.37: before, a snapshot only holds rules where the beta API was switched on).
    device_taints: bool = True
    partitionable_devices: bool = True  # DRAPartitionableDevices: beta 1.36
    consumable_capacity: bool = True  # DRAConsumableCapacity: beta 1.36
    # DRADeviceBindingConditions (beta 1.36) + DRAResourceClaimDeviceStatus (GA 1.37)
    binding_conditions: bool = True
    # DRAListTypeAttributes (alpha 1.36, still alpha in 1.37): only the experimental allocator
    # supports it; list-typed attributes take part in matchAttribute/distinctAttribute.
    list_type_attributes: bool = False
    # DRAFractionalCapacityRange (beta 1.37, off until the compatibility version is 1.37):
    # capacity request policy ranges with fractional min/step/max are computed in milli-units.
    fractional_capacity_range: bool = False
    # 1.35+: incomplete and invalid pools are skipped for ExactCount; 1.34 uses incomplete pools
    # and stops with an error at an invalid one. Off, it selects the v0.34 allocator as a whole:
    # its GatherPools, and results without the request's tolerations.
    skip_incomplete_pools: bool = True
    # DRASchedulerFilterTimeout (beta, on since 1.34): the DynamicResources plugin gives each
    # node's Allocate a deadline, filterTimeout (10 s). Off (before 1.34), a search runs to its end.
    filter_timeout: bool = True
    # The minor release whose allocator code runs, where releases differ beyond the gates
    # (1.37: a config that applies to every request has no request list, CEL runtime errors
    # name the device and suggest optional chaining for "no such key").
    release: int = NEWEST

    @property
    def implementation(self) -> str:
        """Which of upstream's allocators NewAllocator picks: ``experimental`` for list-typed
        attributes; ``incubating`` with consumable capacity or binding conditions; else
        ``stable`` (v0.36+), which knows neither: it ignores capacity requests and refuses
        distinctAttribute ("empty constraint") — as 1.35's default allocator did too. 1.34
        ran its ``experimental`` allocator with the default gates."""
        if not self.skip_incomplete_pools:
            return "experimental"
        if self.list_type_attributes:
            return "experimental"
        if self.consumable_capacity or self.binding_conditions:
            return "incubating"
        return "stable"

    @property
    def combinations(self) -> bool:
        """Whether allocateOne looks for a request's next device after the one it took (its
        startLocation: every set of devices is tried once), as incubating and experimental do
        since 1.36; ``stable``, and every implementation before, tries every order."""
        return self.implementation != "stable" and self.release >= 36

    @property
    def timeout_is_error(self) -> bool:
        """1.36+ (kubernetes PR #137607): a node whose search timed out fails the whole
        scheduling attempt with an Error status; before, it is one unschedulable node."""
        return self.release >= 36

    @property
    def cel(self) -> Dialect:
        """The DRA CEL environment the scheduler compiles selectors in."""
        return Dialect(self.release, self.list_type_attributes, self.consumable_capacity)

    @classmethod
    def of(cls, state: ClusterState) -> Features:
        """The features a snapshot's scheduler runs with: its version's defaults;
        DRAListTypeAttributes (alpha, off by default) where a ResourceSlice of a 1.36+ server
        holds a list-typed attribute, which the apiserver only stores with the gate on; then
        the feature gates the snapshot states (SnapshotInfo ``featureGates``)."""
        return state.derived("features", _features_of)

    @classmethod
    def for_version(cls, server_version: str) -> Features:
        """The default feature gates of a Kubernetes version ("v1.34.2"); unknown or "" means
        the newest release, 1.37."""
        minor = kubernetes_minor(server_version)
        if minor is None or minor >= NEWEST:
            return cls()
        if minor >= 36:
            return cls(release=minor)
        return cls(
            prioritized_list=minor >= 34,  # beta (on) in 1.34, alpha before
            admin_access=minor >= 34,
            device_taints=False,  # alpha until 1.36
            partitionable_devices=False,
            consumable_capacity=False,
            binding_conditions=False,
            skip_incomplete_pools=minor >= 35,
            filter_timeout=minor >= 34,  # DRASchedulerFilterTimeout: beta (on) since 1.34
            release=minor,
        )


# Kubernetes' feature gates (pkg/features/kube_features.go) and the Features fields they set.
# Upstream's Features.DeviceBindingAndStatus needs both of its gates.
GATES: dict[str, tuple[str, ...]] = {
    "DRAPrioritizedList": ("prioritized_list",),
    "DRAAdminAccess": ("admin_access",),
    "DRADeviceTaints": ("device_taints",),
    "DRAPartitionableDevices": ("partitionable_devices",),
    "DRAConsumableCapacity": ("consumable_capacity",),
    "DRADeviceBindingConditions": ("binding_conditions",),
    "DRAResourceClaimDeviceStatus": ("binding_conditions",),
    "DRAListTypeAttributes": ("list_type_attributes",),
    "DRAFractionalCapacityRange": ("fractional_capacity_range",),
    "DRASchedulerFilterTimeout": ("filter_timeout",),
}


def with_gates(features: Features, gates: dict[str, bool]) -> Features:
    """The features with the cluster's feature gates (``--feature-gates`` of kube-scheduler, as
    a bundle's SnapshotInfo states them) instead of the version's defaults. Gates dradash does
    not model are ignored (``unmodelled_gates`` names them); a gate switched off wins over
    another switched on for the same field (DeviceBindingAndStatus needs both)."""
    changes: dict[str, bool] = {}
    for gate, on in gates.items():
        for name in GATES.get(gate, ()):
            changes[name] = changes.get(name, True) and on
    if "binding_conditions" in changes and not all(g in gates for g in _BINDING):
        changes["binding_conditions"] &= features.binding_conditions  # the other one's default
    return replace(features, **changes) if changes else features


_BINDING = ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")


def unmodelled_gates(gates: dict[str, bool]) -> list[str]:
    """The gates of ``gates`` that change nothing dradash decides."""
    return sorted(g for g in gates if g not in GATES)


def _features_of(state: ClusterState) -> Features:
    features = Features.for_version(state.meta.server_version)
    if features.release >= 36 and state.has_list_attributes:
        features = replace(features, list_type_attributes=True)
    return with_gates(features, state.meta.feature_gates)
