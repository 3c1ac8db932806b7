"""Diagnosis, allocation explainer and findings as JSON (DESIGN "REST API")."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from dradash.analysis.apis import AnalysedApi
from dradash.analysis.filters import (
    DEVICE_STATES,
    ClaimFilter,
    DeviceFilter,
    PodFilter,
    PodGroupFilter,
    openapi_parameters,
)
from dradash.analysis.models import ClaimVerdict, PodVerdict
from dradash.analysis.selectors import (
    Detail,
    claim_detail,
    claim_explanation,
    claim_verdicts,
    device_detail,
    device_history,
    device_pool,
    device_rows,
    device_timeline,
    node_detail,
    node_devices,
    pod_detail,
    pod_explanation,
    pod_verdicts,
    podgroup_detail,
    podgroup_rows,
    pool_rows,
    snapshot_findings,
    snapshot_search,
)
from dradash.dra import inventory
from dradash.dra.analysis import device_counters, node_rules
from dradash.pagination import ListPage, Page, page_parameters

# One class, for the findings list and a diagnosis's findings (an inline serializer takes its
# fields away from the dict it is given: a second one made of the same dict had none).
FindingSerializer = type(
    inline_serializer(
        "Finding",
        {
            "code": serializers.CharField(),
            "severity": serializers.ChoiceField(choices=["error", "warning", "info"]),
            "message": serializers.CharField(),
            "objects": serializers.ListField(child=serializers.DictField()),
            "next_step": serializers.CharField(),
        },
    )
)
HistorySerializer = inline_serializer(
    "StageHistory",
    {
        "snapshot": serializers.IntegerField(),
        "captured_at": serializers.DateTimeField(),
        "stage": serializers.CharField(),
        "reason": serializers.CharField(),
    },
    many=True,
)


# A verdict's severity (dradash.dra.analysis.severity): "unknown" where the snapshot lacks the
# kinds that would say whether the object is stuck at all (a claim of a bundle without Pods).
VERDICT_SEVERITIES = ["ok", "warning", "error", "unknown"]

DiagnosisSerializer = inline_serializer(
    "Diagnosis",
    {
        "stage": serializers.CharField(),
        "reason": serializers.CharField(),
        "severity": serializers.ChoiceField(choices=VERDICT_SEVERITIES),
        "unknown": serializers.ListField(
            child=serializers.CharField(),
            help_text="The kinds the snapshot lacks that would say whether the object is stuck "
            'at all (e.g. ["Pod"] for a claim of a bundle without Pods); not empty exactly when '
            'severity is "unknown": the stage is then only how far the object itself got.',
        ),
        "summary": serializers.CharField(),
        "evidence": serializers.ListField(child=serializers.DictField()),
        "next_steps": serializers.ListField(child=serializers.CharField()),
        "findings": FindingSerializer(many=True),
        "chain": serializers.DictField(),
        "history": HistorySerializer,
    },
)
ExplainSerializer = inline_serializer(
    "Explanation",
    {
        "allocatable": serializers.BooleanField(allow_null=True),
        "error": serializers.CharField(allow_null=True),
        "node": serializers.CharField(allow_null=True),
        "reason": serializers.CharField(allow_null=True),
        "requests": serializers.ListField(child=serializers.DictField()),
        "nodes": inline_serializer(
            "NodeOutcome",
            {
                "node": serializers.CharField(),
                # timeout: the search ran out of its budget, the scheduler's filter timeout
                "outcome": serializers.ChoiceField(
                    choices=["fit", "nofit", "node-error", "error", "timeout"]
                ),
                "error": serializers.CharField(),
                # a Pod's extended resources that the node's device plugin serves instead
                "device_plugin": serializers.ListField(
                    child=serializers.CharField(), required=False
                ),
            },
            many=True,
        ),
        "allocation": serializers.ListField(child=serializers.DictField()),
    },
)


def _diagnosis(detail: Detail) -> dict[str, Any]:
    """The diagnosis API's JSON: the same verdict, findings and chain as the object's page."""
    return {
        **detail.verdict.diagnosis(),
        "findings": [f.as_dict() for f in detail.findings],
        "chain": detail.chain,
        "history": detail.history.as_list(),
    }


class PodDiagnosisApi(AnalysedApi):
    @extend_schema(
        summary="Why a Pod does (not) get its devices",
        description="The verdict on a Pod that uses DRA, as its page shows it: the stage where "
        "it is stuck (or healthy), the reason, a one-sentence summary, the evidence and next "
        "steps, the findings about it and its claims, its object chain, and its stage in the "
        "cluster's other snapshots (newest first). 404 for a Pod that is not in the snapshot or "
        "does not use DRA; 503 while the snapshot is being analysed.",
        responses=DiagnosisSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        detail = pod_detail(snapshot, namespace, name)
        if detail is None or not detail.verdict.uses_dra:
            raise Http404(f"No Pod using DRA named {namespace}/{name} in snapshot {snapshot_id}")
        return Response(_diagnosis(detail))


class ClaimDiagnosisApi(AnalysedApi):
    @extend_schema(
        summary="Why a ResourceClaim is (not) allocated and in use",
        description="The verdict on a ResourceClaim, as its page shows it: stage, reason, "
        "summary, evidence, next steps, findings, object chain and its stage in the cluster's "
        "other snapshots. 404 for a claim that is not in the snapshot; 503 while the snapshot "
        "is being analysed.",
        responses=DiagnosisSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        detail = claim_detail(snapshot, namespace, name)
        if detail is None:
            raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}")
        return Response(_diagnosis(detail))


class ClaimExplainApi(AnalysedApi):
    @extend_schema(
        summary="What the allocator would do with a claim",
        description="The allocation explainer: whether the scheduler's structured allocator "
        "could allocate the claim now (null when it would stop with an error), on which node, "
        "per request the funnel of devices left after each check with the first check each "
        "device fails, and its answer on each node the Pod may use (timeout: the search ran "
        "out of its budget, kube-scheduler's filter timeout; nodes left unsearched after 16 "
        "timeouts are not listed).",
        responses=ExplainSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        try:
            found = claim_explanation(snapshot, namespace, name)
        except ClaimVerdict.DoesNotExist:
            raise Http404(
                f"No ResourceClaim {namespace}/{name} in snapshot {snapshot_id}"
            ) from None
        return Response(found)


class PodExplainApi(AnalysedApi):
    @extend_schema(
        summary="What the allocator would do with a Pod's unallocated claims",
        description="The allocation explainer for a Pod: its unallocated claims explained "
        "together, as the scheduler allocates them, the claim it keeps in memory for the "
        "Pod's extended resources until binding included (which has no claim of its own to "
        "explain), with the same fields as a claim's explanation: whether they could be "
        "allocated now (null when the allocator would stop with an error), on which node, per "
        "request the funnel of devices left after each check with the first check each device "
        "fails, and its answer on each node the Pod may use. 404 for a Pod that is not in the "
        "snapshot or does not use DRA, and for one that waits for no allocation (its claims "
        "are allocated, or it is stuck before allocation: its diagnosis says where); 503 while "
        "the snapshot is being analysed.",
        responses=ExplainSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        try:
            found = pod_explanation(snapshot, namespace, name)
        except PodVerdict.DoesNotExist:
            raise Http404(
                f"No Pod using DRA named {namespace}/{name} in snapshot {snapshot_id}"
            ) from None
        if found is None:
            raise Http404(
                f"Pod {namespace}/{name} waits for no allocation in snapshot {snapshot_id}, so "
                "there is nothing to explain: its claims are allocated, or it is stuck before "
                "allocation (see its diagnosis)"
            )
        return Response(found)


def _page_of(name: str, row: type[serializers.Serializer]) -> Any:
    """A page of rows as LimitOffsetPagination answers: count, next, previous, results."""
    return inline_serializer(
        f"{name}Page",
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": row(many=True),
        },
    )


VERDICT_FIELDS = {
    "namespace": serializers.CharField(),
    "name": serializers.CharField(),
    "stage": serializers.CharField(),
    "reason": serializers.CharField(),
    "severity": serializers.ChoiceField(choices=VERDICT_SEVERITIES),
    "summary": serializers.CharField(),
}


# One class per row (the lists' pages and the search answer hold them): drf-spectacular names a
# component once.
PodRowSerializer = type(
    inline_serializer(
        "PodVerdict",
        {
            **VERDICT_FIELDS,
            "phase": serializers.CharField(),
            "node": serializers.CharField(),
            "owner": serializers.CharField(),
            "podgroup": serializers.CharField(
                help_text="The PodGroup its spec.schedulingGroup names (it is scheduled with "
                'its gang); "" for a Pod of no group.'
            ),
            "claims": serializers.ListField(child=serializers.CharField()),
            "extended_resources": serializers.DictField(
                child=serializers.IntegerField(),
                help_text="Extended resources its containers ask for that a DeviceClass maps "
                "(resource name: devices), which DRA serves where a node does not advertise "
                "them; {} for a Pod that asks for none.",
            ),
        },
    )
)
ClaimRowSerializer = type(
    inline_serializer(
        "ClaimVerdict",
        {
            **VERDICT_FIELDS,
            "state": serializers.CharField(),
            "template": serializers.CharField(),
            "devices": serializers.IntegerField(),
            "pods": serializers.ListField(child=serializers.CharField()),
            "classes": serializers.ListField(child=serializers.CharField()),
            "drivers": serializers.ListField(child=serializers.CharField()),
            "nodes": serializers.ListField(child=serializers.CharField()),
        },
    )
)


class _VerdictListApi(AnalysedApi):
    """A list of Pods or claims, filtered and sorted by the FilterSet its page uses."""

    filterset_class: type[Any]
    rows: Any  # (snapshot) -> QuerySet
    fields: tuple[str, ...]

    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        filterset = self.filterset_class(request.query_params, type(self).rows(snapshot))
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        paginator = Page()
        page = paginator.paginate_queryset(filterset.qs, request, view=self) or []
        return paginator.get_paginated_response([self.row(v) for v in page])

    def row(self, verdict: Any) -> dict[str, Any]:
        out = {name: getattr(verdict, name) for name in (*VERDICT_FIELDS, *self.fields)}
        return out


class PodListApi(_VerdictListApi):
    filterset_class = PodFilter
    rows = staticmethod(pod_verdicts)
    fields = ("phase", "node", "owner", "podgroup", "claims")

    def row(self, verdict: Any) -> dict[str, Any]:
        return {**super().row(verdict), "extended_resources": verdict.extended}

    @extend_schema(
        summary="Pods that use DRA, worst first",
        description="The Pods list of the snapshot, a page at a time: each Pod's stage, reason "
        "and summary, phase, node, owner, claims and the extended resources DRA may serve it "
        "(a Pod that asks for devices that way uses DRA without claims); filtered and sorted "
        "as on the Pods page (q: part of the name or namespace/name; sort: a column, - first "
        "for descending; without it, worst stage first).",
        parameters=[*openapi_parameters(PodFilter), *page_parameters(Page)],
        responses=_page_of("PodVerdict", PodRowSerializer),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        return super().get(request, snapshot_id)


class ClaimListApi(_VerdictListApi):
    filterset_class = ClaimFilter
    rows = staticmethod(claim_verdicts)
    fields = ("state", "template", "devices", "pods")

    def row(self, verdict: Any) -> dict[str, Any]:
        return {
            **super().row(verdict),
            "classes": verdict.class_list,
            "drivers": verdict.driver_list,
            "nodes": verdict.node_list,
        }

    @extend_schema(
        summary="ResourceClaims, worst first",
        description="The claims list of the snapshot, a page at a time: each claim's stage, "
        "reason and summary, state, template, classes, drivers, nodes, devices and the Pods "
        "using it; filtered and sorted as on the claims page.",
        parameters=[*openapi_parameters(ClaimFilter), *page_parameters(Page)],
        responses=_page_of("ClaimVerdict", ClaimRowSerializer),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        return super().get(request, snapshot_id)


GANG_STATES = ["scheduled", "waiting", "fits", "does-not-fit", "unknown", "basic"]
PLACEMENTS = ["running", "fits", "does-not-fit", "not-tried", "waiting"]

PodGroupSerializer = inline_serializer(
    "PodGroup",
    {
        "namespace": serializers.CharField(),
        "name": serializers.CharField(),
        "policy": serializers.CharField(allow_null=True, help_text="gang or basic"),
        "min_count": serializers.IntegerField(
            allow_null=True, help_text="The gang's minCount; null for a basic group."
        ),
        "state": serializers.ChoiceField(
            choices=GANG_STATES,
            help_text="scheduled (no member waits), waiting (fewer members than minCount), "
            "fits (the waiting members can all be placed), does-not-fit, unknown (too many "
            "members to replay), basic (not a gang: each Pod is scheduled alone)",
        ),
        "members": inline_serializer(
            "PodGroupMember",
            {
                "pod": serializers.CharField(),
                "stage": serializers.CharField(),
                "reason": serializers.CharField(),
                "phase": serializers.CharField(),
                "node": serializers.CharField(allow_null=True),
                "placement": serializers.ChoiceField(choices=PLACEMENTS),
                "would_go_to": serializers.CharField(
                    allow_null=True,
                    help_text="For a member not on a node: the node the replay of the gang's "
                    "scheduling cycle placed it on (the first by name where its claims fit).",
                ),
            },
            many=True,
        ),
        "fit": serializers.IntegerField(
            allow_null=True,
            help_text="Members placed or placeable together (all of them for a running group); "
            "null when unknown (the snapshot lacks the Pods).",
        ),
        "breaking_member": serializers.CharField(
            allow_null=True,
            help_text="The first member, in the scheduler's order, that does not fit with "
            "those before it; null when the gang fits or is not judged.",
        ),
        "summary": serializers.CharField(),
        "next_steps": serializers.ListField(child=serializers.CharField()),
        "workload": inline_serializer(
            "PodGroupWorkload",
            {
                "name": serializers.CharField(),
                "template": serializers.CharField(),
                "exists": serializers.BooleanField(),
            },
            allow_null=True,
        ),
        "claims": inline_serializer(
            "PodGroupClaim",
            {
                "name": serializers.CharField(),
                "source": serializers.CharField(),
                "claim": serializers.CharField(allow_null=True),
                "template": serializers.CharField(allow_null=True),
                "status": serializers.CharField(),
                "allocated": serializers.BooleanField(allow_null=True),
            },
            many=True,
        ),
        "conditions": serializers.ListField(child=serializers.DictField()),
        "events": serializers.ListField(child=serializers.DictField()),
    },
)


class PodGroupApi(AnalysedApi):
    @extend_schema(
        operation_id="v1_snapshots_podgroups_retrieve",
        summary="A PodGroup's gang: how many of its members fit together",
        description="A PodGroup (KEP-4671) as its page shows it: its minimum (min_count), its "
        "members in the scheduler's order with their stage and reason, how many fit together "
        "(fit), the first that does not (breaking_member), a one-sentence summary and next "
        "steps, its claims (KEP-5729), Workload, conditions and events. 404 for a PodGroup "
        "that is not in the snapshot; 503 while the snapshot is being analysed.",
        responses=PodGroupSerializer,
    )
    def get(self, request: Request, snapshot_id: int, namespace: str, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        group = podgroup_detail(snapshot, namespace, name)
        if group is None:
            raise Http404(f"No PodGroup {namespace}/{name} in snapshot {snapshot_id}")
        return Response(group.data)


PodGroupRowSerializer = type(
    inline_serializer(
        "PodGroupRow",
        {
            "namespace": serializers.CharField(),
            "name": serializers.CharField(),
            "state": serializers.ChoiceField(choices=GANG_STATES),
            "min_count": serializers.IntegerField(allow_null=True),
            "members": serializers.IntegerField(),
            "fit": serializers.IntegerField(allow_null=True),
            "summary": serializers.CharField(),
        },
    )
)


class PodGroupListApi(AnalysedApi):
    @extend_schema(
        operation_id="v1_snapshots_podgroups_list",
        summary="PodGroups, stuck first",
        description="The PodGroups of the snapshot, a page at a time: each gang's state, "
        "minimum, members, how many fit together and summary; filtered and sorted as on the "
        "PodGroups page (without sort: waiting, not fitting and unknown gangs first).",
        parameters=[*openapi_parameters(PodGroupFilter), *page_parameters(Page)],
        responses=_page_of("PodGroupRow", PodGroupRowSerializer),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        filterset = PodGroupFilter(request.query_params, podgroup_rows(snapshot))
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        paginator = Page()
        page = paginator.paginate_queryset(filterset.qs, request, view=self) or []
        return paginator.get_paginated_response(
            [
                {
                    "namespace": g.namespace,
                    "name": g.name,
                    "state": g.state,
                    "min_count": g.min_count,
                    "members": g.members,
                    "fit": g.fit,
                    "summary": g.summary,
                }
                for g in page
            ]
        )


class FindingListApi(AnalysedApi):
    @extend_schema(
        summary="Problems in the snapshot",
        description="Findings: problems that do not block one Pod but matter (leaked claims, "
        "incomplete or stale pools, tainted devices, missing classes …), each with a code, "
        "severity, message, the objects it names and a next step.",
        responses=FindingSerializer(many=True),
        parameters=page_parameters(ListPage),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        paginator = ListPage()
        page = paginator.paginate_queryset(snapshot_findings(snapshot), request, view=self) or []
        return paginator.get_paginated_response([f.as_dict() for f in page])


DeviceSerializer = inline_serializer(
    "Device",
    {
        "driver": serializers.CharField(),
        "pool": serializers.CharField(),
        "device": serializers.CharField(),
        "node": serializers.CharField(allow_null=True),
        "allocated_to": serializers.CharField(allow_null=True),
        "taints": serializers.ListField(child=serializers.DictField()),
        "status": serializers.ChoiceField(choices=list(inventory.STATUSES)),
        "classes": serializers.ListField(child=serializers.CharField()),
        "claims": serializers.ListField(child=serializers.CharField()),
        "pods": serializers.ListField(child=serializers.CharField()),
        "attributes": serializers.DictField(child=serializers.DictField()),
        "capacity": serializers.DictField(child=serializers.DictField()),
        "consumes_counters": serializers.ListField(child=serializers.DictField()),
        "consumed_capacity": serializers.DictField(child=serializers.CharField()),
    },
    many=True,
)
PoolSerializer = inline_serializer(
    "Pool",
    {
        "driver": serializers.CharField(),
        "pool": serializers.CharField(),
        "generation": serializers.IntegerField(),
        "slices": serializers.IntegerField(),
        "resource_slice_count": serializers.IntegerField(),
        "complete": serializers.BooleanField(),
        "devices": serializers.IntegerField(),
        "allocated": serializers.IntegerField(),
        "valid": serializers.BooleanField(),
        "usable": serializers.BooleanField(),
        "problem": serializers.ChoiceField(choices=["incomplete", "invalid"], allow_null=True),
        "free": serializers.IntegerField(),
        "tainted": serializers.IntegerField(),
        "unusable": serializers.IntegerField(),
        "nodes": serializers.ListField(child=serializers.CharField()),
        "stale_slices": inline_serializer(
            "StaleSlice",
            {
                "name": serializers.CharField(),
                "generation": serializers.IntegerField(),
                "devices": serializers.IntegerField(),
            },
            many=True,
        ),
        "duplicate_devices": serializers.ListField(child=serializers.CharField()),
        "counter_sets": inline_serializer(
            "CounterSet",
            {
                "name": serializers.CharField(),
                "counters": inline_serializer(
                    "Counter",
                    {
                        "name": serializers.CharField(),
                        "total": serializers.CharField(),
                        "consumed": serializers.CharField(),
                    },
                    many=True,
                ),
            },
            many=True,
        ),
    },
    many=True,
)


class DeviceListApi(AnalysedApi):
    @extend_schema(
        summary="Devices of the snapshot",
        description="One row per device of the pools the allocator would use: where it is, "
        "who holds it, its taints, state, classes, attributes and capacity. Filters as on the "
        "devices page; a page at a time.",
        responses=DeviceSerializer,
        parameters=[
            OpenApiParameter("q", str, description="part of the device's or a claim's name"),
            OpenApiParameter("driver", str),
            OpenApiParameter("pool", str),
            OpenApiParameter("device_class", str, description="devices the class admits"),
            OpenApiParameter("node", str),
            OpenApiParameter("state", str, enum=[value for value, _ in DEVICE_STATES if value]),
            OpenApiParameter(
                "attribute",
                str,
                description="name or name=value; a name without domain is the driver's",
            ),
            *page_parameters(ListPage),
        ],
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        filterset = DeviceFilter(
            request.query_params, device_rows(snapshot), snapshot_id=snapshot.pk
        )
        if not filterset.is_valid():
            raise serializers.ValidationError(filterset.errors)
        paginator = ListPage()
        rows = filterset.qs.values_list("facts__data", flat=True)
        return paginator.get_paginated_response(
            paginator.paginate_queryset(rows, request, view=self) or []
        )


class PoolListApi(AnalysedApi):
    @extend_schema(
        summary="Pools of the snapshot",
        description="Every pool as the allocator gathers it from the ResourceSlices: "
        "generation, slices, completeness, devices allocated and free, stale slices, duplicate "
        "device names and shared counters; those that need attention first.",
        responses=PoolSerializer,
        parameters=page_parameters(ListPage),
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        paginator = ListPage()
        rows = pool_rows(snapshot).values_list("facts__data", flat=True)
        return paginator.get_paginated_response(
            paginator.paginate_queryset(rows, request, view=self) or []
        )


SearchSerializer = inline_serializer(
    "SearchResult",
    {
        "query": serializers.CharField(),
        "pods": PodRowSerializer(many=True),
        "claims": ClaimRowSerializer(many=True),
        "nodes": inline_serializer(
            "NodeHit",
            {
                "name": serializers.CharField(),
                "devices": serializers.IntegerField(),
                "pods": serializers.IntegerField(),
            },
            many=True,
        ),
        "totals": inline_serializer(
            "SearchTotals",
            {
                "pods": serializers.IntegerField(),
                "claims": serializers.IntegerField(),
                "nodes": serializers.IntegerField(),
            },
        ),
    },
)


class SnapshotSearchApi(AnalysedApi):
    class QuerySerializer(serializers.Serializer):
        q = serializers.CharField(max_length=253 * 2 + 1, trim_whitespace=True)

        class Meta:
            ref_name = "SearchQuery"

    @extend_schema(
        summary="Find Pods, claims and nodes by name",
        description="What the search box of the snapshot's pages finds: Pods (those that do "
        "not use DRA too) and ResourceClaims whose name contains q (or namespace/name), worst "
        "stage first, and nodes with devices or Pods whose name contains q; the first 20 of "
        "each, and how many there are.",
        parameters=[QuerySerializer],
        responses=SearchSerializer,
    )
    def get(self, request: Request, snapshot_id: int) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        params = self.QuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        found = snapshot_search(snapshot, params.validated_data["q"])
        return Response(
            {
                "query": found.query,
                "pods": [PodListApi().row(v) for v in found.pods],
                "claims": [ClaimListApi().row(v) for v in found.claims],
                "nodes": found.nodes,
                "totals": {
                    "pods": found.pod_total,
                    "claims": found.claim_total,
                    "nodes": found.node_total,
                },
            }
        )


DEVICE_STATUSES = ["allocated", "unusable", "tainted", "free"]
NodeSerializer = inline_serializer(
    "Node",
    {
        "name": serializers.CharField(),
        "labels": serializers.DictField(
            child=serializers.CharField(),
            help_text="The labels that say which node it is and where: hostname, zone, region, "
            "instance type (those it has).",
        ),
        "ready": inline_serializer(
            "NodeReady",
            {
                "type": serializers.CharField(),
                "status": serializers.CharField(),
                "reason": serializers.CharField(),
                "message": serializers.CharField(),
                "lastTransitionTime": serializers.CharField(),
            },
            allow_null=True,
            help_text="Its Ready condition; null when its status has none.",
        ),
        "unschedulable": serializers.BooleanField(),
        "taints": serializers.ListField(child=serializers.DictField()),
        "drivers": inline_serializer(
            "NodeDriver",
            {
                "driver": serializers.CharField(),
                "local": serializers.BooleanField(
                    help_text="Whether a slice of the driver is this node's own (nodeName)."
                ),
                "devices": serializers.IntegerField(help_text="Its devices this node reaches."),
                "slices": inline_serializer(
                    "NodeSlice",
                    {
                        "name": serializers.CharField(),
                        "pool": serializers.CharField(),
                        "node_access": serializers.ChoiceField(
                            choices=["node", "all-nodes", "node-selector", "per-device", "none"]
                        ),
                        "generation": serializers.IntegerField(),
                        "devices": serializers.IntegerField(),
                    },
                    many=True,
                ),
            },
            many=True,
            help_text="The DRA drivers whose current ResourceSlices reach the node: its own "
            "(node-local) and shared ones (all nodes, a node selector, per device).",
        ),
        "devices": inline_serializer(
            "NodeDevice",
            {
                "driver": serializers.CharField(),
                "pool": serializers.CharField(),
                "device": serializers.CharField(),
                "status": serializers.ChoiceField(choices=DEVICE_STATUSES),
                "claims": serializers.ListField(child=serializers.CharField()),
                "pods": serializers.ListField(child=serializers.CharField()),
                "taints": serializers.ListField(child=serializers.DictField()),
            },
            many=True,
            help_text="The devices of its own slices, with the claims (namespace/name) and "
            "Pods holding them.",
        ),
        "pods": inline_serializer(
            "NodePod",
            {
                "namespace": serializers.CharField(),
                "name": serializers.CharField(),
                "phase": serializers.CharField(),
                "stage": serializers.CharField(),
                "reason": serializers.CharField(),
            },
            many=True,
            help_text="The Pods on it that use DRA, with their verdicts.",
        ),
        "rules": inline_serializer(
            "NodeDeviceTaintRule",
            {
                "name": serializers.CharField(),
                "effect": serializers.CharField(help_text="NoSchedule · NoExecute · None"),
                "conditions": serializers.ListField(
                    child=serializers.DictField(child=serializers.CharField()),
                    help_text="status.conditions (EvictionInProgress).",
                ),
                "devices": serializers.ListField(
                    child=serializers.DictField(),
                    help_text="The devices of this node it taints: driver, pool, device, taint.",
                ),
                "evictions": serializers.ListField(
                    child=serializers.DictField(),
                    help_text="As in the device API's rules[].evictions.",
                ),
            },
            many=True,
            help_text="The DeviceTaintRules tainting its devices (KEP-5055), by name.",
        ),
        "pods_total": serializers.IntegerField(help_text="All Pods bound to it."),
        "events": serializers.ListField(child=serializers.DictField(), help_text="Newest first."),
    },
)


class NodeApi(AnalysedApi):
    @extend_schema(
        operation_id="v1_snapshots_nodes_retrieve",
        summary="A node: its DRA drivers, devices and Pods",
        description="A Node as its page shows it: the labels that say which node it is, its "
        "Ready condition and taints, the DRA drivers whose slices reach it, its devices and "
        "who holds them, the Pods on it that use DRA with their stage and reason, and its "
        "latest events. 404 for a node that is not in the snapshot; 503 while the snapshot is "
        "being analysed.",
        responses=NodeSerializer,
    )
    def get(self, request: Request, snapshot_id: int, name: str) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        node = node_detail(snapshot, name)
        if node is None:
            raise Http404(f"No Node {name} in snapshot {snapshot_id}")
        rows = node_devices(snapshot, name)
        devices = [
            {
                "driver": row.driver,
                "pool": row.pool,
                "device": row.device,
                "status": row.status,
                "claims": row.data.get("claims", []),
                "pods": row.data.get("pods", []),
                "taints": row.data.get("taints", []),
            }
            for row in rows
        ]
        rules = node_rules([row.data for row in rows])
        return Response({**node.data, "devices": devices, "rules": rules})


DeviceDetailSerializer = inline_serializer(
    "DeviceDetail",
    {
        "driver": serializers.CharField(),
        "pool": serializers.CharField(),
        "device": serializers.CharField(),
        "node": serializers.CharField(allow_null=True, help_text="null: not node-local"),
        "node_access": serializers.CharField(),
        "slice": serializers.CharField(),
        "status": serializers.ChoiceField(choices=DEVICE_STATUSES),
        "classes": serializers.ListField(child=serializers.CharField()),
        "allocated_to": serializers.CharField(allow_null=True),
        "claims": serializers.ListField(child=serializers.CharField()),
        "pods": serializers.ListField(child=serializers.CharField()),
        "attributes": serializers.DictField(
            child=serializers.DictField(),
            help_text="Every attribute as published: {name: {type: value}}.",
        ),
        "capacity": serializers.DictField(child=serializers.DictField()),
        "consumed_capacity": serializers.DictField(child=serializers.CharField()),
        "consumes_counters": serializers.ListField(child=serializers.DictField()),
        "counters": inline_serializer(
            "DeviceCounter",
            {
                "counter_set": serializers.CharField(),
                "counter": serializers.CharField(),
                "consumes": serializers.CharField(allow_null=True),
                "total": serializers.CharField(allow_null=True),
                "consumed": serializers.CharField(allow_null=True),
                "left": serializers.CharField(allow_null=True),
            },
            many=True,
            help_text="What it consumes of its pool's shared counters, with each counter's "
            "total, what the pool's allocated devices consume and what is left (null where "
            "the pool declares no such counter).",
        ),
        "taints": serializers.ListField(child=serializers.DictField()),
        "taint_sources": inline_serializer(
            "DeviceTaintSource",
            {
                "key": serializers.CharField(),
                "value": serializers.CharField(),
                "effect": serializers.CharField(),
                "time_added": serializers.CharField(),
                "source_kind": serializers.ChoiceField(
                    choices=["ResourceSlice", "DeviceTaintRule"]
                ),
                "source_name": serializers.CharField(),
            },
            many=True,
        ),
        "health": inline_serializer(
            "DeviceHealthReport",
            {
                "health": serializers.ChoiceField(choices=["Healthy", "Unhealthy", "Unknown"]),
                "message": serializers.CharField(),
                "pod": serializers.CharField(),
                "container": serializers.CharField(),
                "init": serializers.BooleanField(),
                "resource": serializers.CharField(),
                "resource_id": serializers.CharField(),
                "claim": serializers.CharField(allow_null=True),
            },
            many=True,
            help_text="The kubelet's reports of the device in the Pods using it "
            "(status.containerStatuses[].allocatedResourcesStatus, KEP-4680).",
        ),
        "rules": inline_serializer(
            "DeviceTaintRuleOfDevice",
            {
                "name": serializers.CharField(),
                "effect": serializers.CharField(help_text="NoSchedule · NoExecute · None"),
                "taint": serializers.DictField(help_text="As in taint_sources."),
                "selector": serializers.DictField(child=serializers.CharField()),
                "conditions": serializers.ListField(
                    child=serializers.DictField(child=serializers.CharField()),
                    help_text="status.conditions (EvictionInProgress): type, status, reason, "
                    "message, lastTransitionTime.",
                ),
                "evictions": inline_serializer(
                    "DeviceTaintRuleEviction",
                    {
                        "pod": serializers.CharField(),
                        "claim": serializers.CharField(),
                        "device": serializers.CharField(),
                        "taint": serializers.DictField(),
                        "toleration_seconds": serializers.IntegerField(),
                        "evict_at": serializers.CharField(),
                        "state": serializers.ChoiceField(
                            choices=["evicted", "due", "tolerated", "would-evict"]
                        ),
                    },
                    many=True,
                ),
            },
            many=True,
            help_text="The DeviceTaintRules tainting it (KEP-5055): effect, status conditions "
            "and the Pods using it that the rule evicts, will evict after their "
            "tolerationSeconds, would evict (effect None) or did, at capture.",
        ),
        "binding_conditions": serializers.ListField(child=serializers.CharField()),
        "binding_failure_conditions": serializers.ListField(child=serializers.CharField()),
        "binds_to_node": serializers.BooleanField(),
        "allocations": inline_serializer(
            "DeviceAllocation",
            {
                "claim": serializers.CharField(),
                "request": serializers.CharField(),
                "admin_access": serializers.BooleanField(),
                "conditions": serializers.ListField(child=serializers.DictField()),
            },
            many=True,
            help_text="The claims' allocation results naming it, with the conditions the "
            "claim's status.devices reports for it.",
        ),
        "history": inline_serializer(
            "DeviceHistory",
            {
                "snapshot": serializers.IntegerField(),
                "captured_at": serializers.DateTimeField(),
                "status": serializers.ChoiceField(choices=DEVICE_STATUSES),
                "claims": serializers.ListField(child=serializers.CharField()),
                "pods": serializers.ListField(child=serializers.CharField()),
                "tainted": serializers.BooleanField(),
            },
            many=True,
            help_text="The device in the cluster's analysed snapshots, newest first (the "
            "last 50 with it).",
        ),
        "evictions": inline_serializer(
            "DeviceEviction",
            {
                "pod": serializers.CharField(),
                "claim": serializers.CharField(),
                "device": serializers.CharField(),
                "taint": serializers.DictField(),
                "toleration_seconds": serializers.IntegerField(),
                "evict_at": serializers.CharField(),
                "state": serializers.ChoiceField(
                    choices=["evicted", "would-evict", "due", "tolerated"]
                ),
                "marked_at": serializers.CharField(),
            },
            many=True,
            help_text="The Pods its NoExecute (or effect None) taints evicted, evict or would "
            "evict, at the capture time.",
        ),
        "timeline": inline_serializer(
            "DeviceMoment",
            {
                "time": serializers.DateTimeField(),
                "exact": serializers.BooleanField(
                    help_text="A time Kubernetes recorded; false: first seen in ``snapshot``."
                ),
                "kind": serializers.ChoiceField(
                    choices=[
                        "allocated",
                        "released",
                        "health",
                        "tainted",
                        "untainted",
                        "evicted",
                        "eviction-due",
                    ]
                ),
                "text": serializers.CharField(),
                "snapshot": serializers.IntegerField(),
                "pod": serializers.CharField(allow_null=True),
            },
            many=True,
            help_text="Its life up to this snapshot, oldest first.",
        ),
    },
)


class DeviceApi(AnalysedApi):
    @extend_schema(
        operation_id="v1_snapshots_devices_detail",
        summary="A device: attributes, capacity, counters, taints, holders and history",
        description="A device of the pools the allocator would use, as its page shows it: "
        "every attribute with its type, capacity and what allocations consume of it, the "
        "shared counters it consumes and what is left of them, its taints (from its slice and "
        "from DeviceTaintRules), binding conditions, the claims and Pods holding it, its node, "
        "its status in the cluster's snapshots, newest first, and its timeline up to this "
        "snapshot (allocated, reported unhealthy, tainted, Pods evicted, in order, with the "
        "time Kubernetes recorded or the snapshot that first saw it). A pool's name may contain "
        "slashes. 404 for a device that is not in the snapshot; 503 while the snapshot is "
        "being analysed.",
        responses=DeviceDetailSerializer,
    )
    def get(
        self, request: Request, snapshot_id: int, driver: str, pool: str, device: str
    ) -> Response:
        snapshot, _ = self.analysed(snapshot_id)
        row = device_detail(snapshot, driver, pool, device)
        if row is None:
            raise Http404(f"No device {driver}/{pool}/{device} in snapshot {snapshot_id}")
        history = [
            {**h, "captured_at": h["captured_at"].isoformat().replace("+00:00", "Z")}
            for h in device_history(snapshot, driver, pool, device)
        ]
        return Response(
            {
                **row.data,
                "counters": device_counters(row.data, device_pool(snapshot, driver, pool)),
                "history": history,
                "timeline": device_timeline(snapshot, driver, pool, device),
            }
        )
