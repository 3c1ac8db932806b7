from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from dradash.analysis.apis import AnalysisNotReady
from dradash.api import BaseApi
from dradash.dra import matching, validation
from dradash.dra.bundle import GATE_NAME, MAX_GATES
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import RESOURCE_GROUP, RESOURCE_VERSIONS
from dradash.playground.services import (
    EvaluationRefused,
    NotAnalysed,
    evaluation_time,
    selector_evaluate,
)
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_list

SLICE_API_VERSIONS = {f"{RESOURCE_GROUP}/{v}" for v in RESOURCE_VERSIONS}
# Inline slices: each is checked as the API server checks it (at most 128 devices, …), and
# together they hold at most this many devices (a snapshot holds more: upload or import it).
MAX_INLINE_SLICES = 10_000
MAX_INLINE_DEVICES = 10_000
PROBLEMS_SHOWN = 20  # per refused slice


def _devices(obj: Any) -> Any:
    """An inline slice's spec.devices, whatever its shape (None when it has none)."""
    spec = obj.get("spec") if isinstance(obj, dict) else None
    return spec.get("devices") if isinstance(spec, dict) else None


# The response is built by hand (serializers are too slow for 40,000 rows); these document it.
class SelectorResultSerializer(serializers.Serializer):
    driver = serializers.CharField()
    pool = serializers.CharField()
    device = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    matches = serializers.BooleanField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    unknown = serializers.BooleanField(
        help_text="dradash stopped before the verdict on this device (its own time limits, "
        "not Kubernetes'): matches is null, error says so, and the outcome is unknown; not a "
        "CEL runtime error."
    )
    failed_clauses = serializers.ListField(
        child=serializers.CharField(),
        help_text="For a device the expression rejects: its top-level && clauses that "
        "are not true there.",
    )


class SelectorCompileErrorSerializer(serializers.Serializer):
    message = serializers.CharField()


class SelectorSummarySerializer(serializers.Serializer):
    matched = serializers.IntegerField()
    unmatched = serializers.IntegerField()
    errors = serializers.IntegerField(help_text="Devices with a CEL runtime error.")
    unknown = serializers.IntegerField(
        help_text="Devices dradash stopped evaluating (its own time limits): outcome unknown."
    )


class SelectorEvaluationSerializer(serializers.Serializer):
    compile_error = SelectorCompileErrorSerializer(allow_null=True)
    # Compiles for the scheduler, but the apiserver refuses it in a new or changed selector
    # (its feature gates, e.g. includes() without DRAListTypeAttributes).
    new_selector_error = SelectorCompileErrorSerializer(allow_null=True)
    results = SelectorResultSerializer(many=True)
    summary = SelectorSummarySerializer()


class SelectorEvaluateApi(BaseApi):
    # Evaluations are expensive: at most DRADASH_SELECTOR_RATE per user (429 beyond).
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "selectors"

    def throttled(self, request: Request, wait: float | None) -> None:
        raise exceptions.Throttled(
            wait,
            detail="Too many selector evaluations: the limit is "
            f"{ScopedRateThrottle.THROTTLE_RATES.get(self.throttle_scope)} per user.",
        )

    class InputSerializer(serializers.Serializer):
        class Meta:
            ref_name = "SelectorEvaluationRequest"  # the schema's name for the request body

        # An empty expression is a CEL syntax error, reported like any other compile error.
        expression = serializers.CharField(trim_whitespace=False, allow_blank=True)
        snapshot = serializers.IntegerField(required=False, allow_null=True)
        device_class = serializers.CharField(required=False, allow_null=True, allow_blank=True)
        resource_slices = serializers.ListField(
            child=serializers.DictField(),
            required=False,
            allow_null=True,
            max_length=MAX_INLINE_SLICES,
            help_text="ResourceSlice objects (resource.k8s.io v1, v1beta2, v1beta1 or "
            "v1alpha3), validated as the API server validates them (at most 128 devices per "
            f"slice, …); at most {MAX_INLINE_DEVICES:,} devices in all.",
        )

        server_version = serializers.RegexField(
            r"^v?1\.\d{1,3}(\.\d{1,4})?([-+][0-9A-Za-z.+-]{0,40})?$",
            required=False,
            allow_blank=True,
            help_text="With resource_slices: the Kubernetes version whose CEL environment "
            'judges them ("v1.36.2"; default the newest, 1.37). A snapshot has its own.',
        )
        feature_gates = serializers.DictField(
            child=serializers.BooleanField(),
            required=False,
            help_text="With resource_slices: feature gates that differ from the version's "
            'defaults ({"DRAListTypeAttributes": true}). A snapshot has its own.',
        )

        def validate_feature_gates(self, value: dict[str, bool]) -> dict[str, bool]:
            if len(value) > MAX_GATES or not all(GATE_NAME.fullmatch(g) for g in value):
                raise serializers.ValidationError(
                    f"at most {MAX_GATES} feature gates, each named as in Kubernetes"
                )
            return value

        def validate_snapshot(self, value: int | None) -> Snapshot | None:
            if value is None:
                return None
            snapshot = snapshot_list().filter(pk=value).first()
            if snapshot is None:
                raise serializers.ValidationError(f"snapshot {value} does not exist")
            return snapshot

        def validate_resource_slices(self, value: list[dict[str, Any]] | None) -> Any:
            if value is None:
                return None
            devices = sum(len(d) for obj in value if isinstance(d := _devices(obj), list))
            if devices > MAX_INLINE_DEVICES:
                raise serializers.ValidationError(
                    f"{devices:,} devices in all: at most {MAX_INLINE_DEVICES:,} are evaluated "
                    "inline; store the slices as a snapshot (upload or import them) and give "
                    "its id instead"
                )
            refused: dict[int, list[str]] = {}
            for i, obj in enumerate(value):
                obj.setdefault("apiVersion", f"{RESOURCE_GROUP}/v1")
                obj.setdefault("kind", "ResourceSlice")
                if (
                    obj["kind"] != "ResourceSlice"
                    or not isinstance(obj["apiVersion"], str)
                    or obj["apiVersion"] not in SLICE_API_VERSIONS
                ):
                    raise serializers.ValidationError(
                        f"item {i} is a {obj['apiVersion']} {obj['kind']}, not a ResourceSlice "
                        f"of {', '.join(sorted(SLICE_API_VERSIONS))}"
                    )
                if not isinstance(obj.get("metadata"), dict) or not obj["metadata"].get("name"):
                    obj["metadata"] = {"name": f"inline-{i}"}
                # What the API server would refuse, as an import refuses it (field paths).
                if found := validation.problems(obj):
                    shown = [f"{path}: {problem}" for path, problem in found[:PROBLEMS_SHOWN]]
                    if len(found) > PROBLEMS_SHOWN:
                        shown.append(f"… and {len(found) - PROBLEMS_SHOWN} more")
                    refused[i] = shown
            if refused:
                raise serializers.ValidationError(refused)
            return value

        def validate(self, data: dict[str, Any]) -> dict[str, Any]:
            has_snapshot = data.get("snapshot") is not None
            has_slices = data.get("resource_slices") is not None
            if has_snapshot == has_slices:
                raise serializers.ValidationError("give either snapshot or resource_slices")
            if data.get("device_class") and not has_snapshot:
                raise serializers.ValidationError(
                    {"device_class": "a device class needs a snapshot to come from"}
                )
            for field in ("server_version", "feature_gates"):
                if data.get(field) and has_snapshot:
                    raise serializers.ValidationError(
                        {field: "a snapshot is judged by its own; give it with resource_slices"}
                    )
            return data

    @extend_schema(
        summary="Which devices a CEL selector matches",
        description="Evaluates a CEL selector with the Kubernetes scheduler's DRA semantics on "
        "every device of a snapshot's current pools (optionally after a DeviceClass's own "
        "selectors), or on ResourceSlices given inline. A device on which the expression "
        "raises an error has `matches: null` and the error: such a device aborts scheduling "
        "of any Pod whose claim uses the selector. A device dradash stopped evaluating (its own "
        "time limits, never Kubernetes' cost limit) has `matches: null`, `unknown: true` and an "
        "error saying so: its outcome is unknown, and it counts in `summary.unknown`, not in "
        "`summary.errors`. Rate limited per user (429), in requests "
        "(DRADASH_SELECTOR_RATE) and in evaluation time (DRADASH_SELECTOR_SECONDS_PER_MINUTE), "
        "for this API and the playground page together.",
        request=InputSerializer,
        responses=SelectorEvaluationSerializer,
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            with evaluation_time(request.user.pk) as seconds:
                evaluation = selector_evaluate(**data.validated_data, time_limit=seconds)
        except EvaluationRefused as exc:
            raise exceptions.Throttled(exc.retry_after, detail=str(exc)) from None
        except matching.UnknownDeviceClass as exc:
            raise serializers.ValidationError({"device_class": [str(exc)]}) from None
        except NotAnalysed as exc:
            raise AnalysisNotReady(exc.analysis) from None
        error, refused = evaluation.compile_error, evaluation.new_selector_error
        with gc_paused():
            results = [_result(row) for row in evaluation.rows]
        return Response(
            {
                "compile_error": {"message": error} if error else None,
                "new_selector_error": {"message": refused} if refused else None,
                "results": results,
                "summary": evaluation.summary,
            }
        )


def _result(row: matching.DeviceRow) -> dict[str, Any]:
    device, verdict = row.device, row.verdict
    return {
        "driver": device.driver,
        "pool": device.pool_name,
        "device": device.name,
        "node": device.node_name or None,
        "matches": verdict.matches,
        "error": verdict.error,
        "unknown": verdict.unknown,
        "failed_clauses": verdict.failed_clauses,
    }
