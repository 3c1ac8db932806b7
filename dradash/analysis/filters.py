"""One FilterSet per list, shared by the list page and its API (as NetBox does).

Lists sort worst first by default (the stage that stuck earliest in the troubleshooting order),
and by any column with ``?sort=`` (``-`` for descending).
"""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db import connection
from django.db.models import Q, QuerySet
from drf_spectacular.utils import OpenApiParameter

from dradash.analysis import models
from dradash.dra.analysis import attribute_filter_tokens
from dradash.dra.diagnosis import STAGE_TITLES
from dradash.dra.inventory import AttributeFilter, AttributeFilterError

NAME = {"max_length": 253}
STAGE_CHOICES = list(STAGE_TITLES.items())
CLAIM_STATES = [
    ("pending", "pending (unallocated)"),
    ("allocated", "allocated, not reserved"),
    ("reserved", "allocated and reserved"),
    ("deleting", "being deleted"),
]
# dradash.dra.analysis.severity
SEVERITIES = [
    ("error", "error (stuck)"),
    ("warning", "warning (in progress)"),
    ("unknown", "unknown (the snapshot lacks what would say)"),
    ("ok", "ok (healthy)"),
]
DEVICE_STATES = [
    ("free", "free"),
    ("allocated", "allocated"),
    ("tainted", "tainted (allocated or not)"),
    ("unusable", "unusable (in a pool the allocator skips)"),
]
# dradash.dra.gangs.Gang.state
PODGROUP_STATES = [
    ("waiting", "waiting for members"),
    ("does-not-fit", "does not fit"),
    ("unknown", "unknown"),
    ("fits", "fits, not placed yet"),
    ("scheduled", "scheduled"),
    ("basic", "basic (not a gang)"),
]


def _line(field: str) -> Any:
    """A filter method: the value is one of the lines of a lines() column."""

    def method(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(**{f"{field}__contains": f"\n{value}\n"}) if value else queryset

    return method


def name_contains(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
    """Part of the name, or of ``namespace/name``, in any case."""
    if not value:
        return queryset
    namespace, slash, rest = value.rpartition("/")
    if slash:
        return queryset.filter(namespace__icontains=namespace, name__icontains=rest)
    return queryset.filter(name__icontains=value)


class _WorstFirst(django_filters.OrderingFilter):
    """?sort=column or -column; without it, worst stage first, then by namespace and name.

    A column may sort by several fields (``then``: the Pod column by namespace, then name;
    the stage column by stage, then reason); the default order breaks the remaining ties.
    """

    def __init__(
        self,
        *args: Any,
        default: list[str],
        then: dict[str, tuple[str, ...]] | None = None,
        **kwargs: Any,
    ) -> None:
        self.default = default
        self.then = then or {}
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet[Any], value: Any) -> QuerySet[Any]:
        ordering: list[str] = []
        for param in value or []:
            descending = param.startswith("-")
            column = param.lstrip("-")
            for name in (self.param_map[column], *self.then.get(column, ())):
                ordering.append(f"-{name}" if descending else name)
        used = {o.lstrip("-") for o in ordering}
        return qs.order_by(*ordering, *[f for f in self.default if f not in used])


class PodFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method=name_contains, **NAME)
    namespace = django_filters.CharFilter(**NAME)
    phase = django_filters.CharFilter(max_length=32)
    node = django_filters.CharFilter(**NAME)
    stage = django_filters.ChoiceFilter(choices=STAGE_CHOICES)
    reason = django_filters.CharFilter(max_length=64)
    podgroup = django_filters.CharFilter(
        **NAME, label="the PodGroup its spec.schedulingGroup names (exact name)"
    )
    sort = _WorstFirst(
        fields=[
            ("name", "name"),
            ("namespace", "namespace"),
            ("stage_order", "stage"),
            ("reason", "reason"),
            ("phase", "phase"),
            ("node", "node"),
            ("owner", "owner"),
            ("created", "age"),
            ("restarts", "restarts"),
        ],
        default=["stage_order", "namespace", "name"],
        then={"namespace": ("name",), "stage": ("reason",)},
    )

    class Meta:
        model = models.PodVerdict
        fields: list[str] = []


class ClaimFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method=name_contains, **NAME)
    namespace = django_filters.CharFilter(**NAME)
    state = django_filters.ChoiceFilter(choices=CLAIM_STATES)
    device_class = django_filters.CharFilter(method=_line("classes"), **NAME)
    driver = django_filters.CharFilter(method=_line("drivers"), **NAME)
    node = django_filters.CharFilter(method=_line("nodes"), **NAME)
    stage = django_filters.ChoiceFilter(choices=STAGE_CHOICES)
    reason = django_filters.CharFilter(max_length=64)
    severity = django_filters.ChoiceFilter(choices=SEVERITIES)
    sort = _WorstFirst(
        fields=[
            ("name", "name"),
            ("namespace", "namespace"),
            ("stage_order", "stage"),
            ("reason", "reason"),
            ("state", "state"),
            ("devices", "devices"),
        ],
        default=["stage_order", "namespace", "name"],
        then={"namespace": ("name",), "stage": ("reason",)},
    )

    class Meta:
        model = models.ClaimVerdict
        fields: list[str] = []


class PodGroupFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method=name_contains, **NAME)
    namespace = django_filters.CharFilter(**NAME)
    state = django_filters.ChoiceFilter(choices=PODGROUP_STATES)
    sort = _WorstFirst(
        fields=[
            ("name", "name"),
            ("namespace", "namespace"),
            ("state_rank", "state"),
            ("members", "members"),
            ("fit", "fit"),
        ],
        default=["state_rank", "namespace", "name"],  # selectors.podgroup_rows' rank
        then={"namespace": ("name",)},
    )

    class Meta:
        model = models.PodGroupRow
        fields: list[str] = []


class _AttributeField(forms.CharField):
    """``name`` or ``name=value`` (dradash.dra.inventory.AttributeFilter)."""

    def clean(self, value: Any) -> AttributeFilter | None:
        value = super().clean(value)
        if not value:
            return None
        try:
            return AttributeFilter.parse(value)
        except AttributeFilterError as exc:
            raise forms.ValidationError(str(exc)) from exc


class _AttributeFilter(django_filters.CharFilter):
    field_class = _AttributeField

    def filter(self, qs: QuerySet[Any], value: AttributeFilter | None) -> QuerySet[Any]:
        if value is None:
            return qs
        alternatives = attribute_filter_tokens(value)
        if len(alternatives) == 1 and not alternatives[0][0]:
            return self.parent.require(qs, alternatives[0][1])
        query = Q()
        for driver, token in alternatives:
            has = self.parent.has(token)
            query |= has & Q(driver=driver) if driver else has
        return qs.filter(query)


def _device_search(queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
    if not value:
        return queryset
    return queryset.filter(Q(device__icontains=value) | Q(claims__icontains=value))


class DeviceFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method=_device_search, **NAME)
    driver = django_filters.CharFilter(**NAME)
    pool = django_filters.CharFilter(**NAME)
    device_class = django_filters.CharFilter(method="filter_class", **NAME)
    node = django_filters.CharFilter(**NAME)
    state = django_filters.ChoiceFilter(choices=DEVICE_STATES, method="filter_state")
    attribute = _AttributeFilter(max_length=400)

    class Meta:
        model = models.DeviceRow
        fields: list[str] = []

    def __init__(self, *args: Any, snapshot_id: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.snapshot_id = snapshot_id
        self._tokens: list[str] | None = None

    def has(self, token: str) -> Q:
        """Devices with this token (DeviceRow.tokens): on PostgreSQL a GIN lookup, with the
        snapshot's token so that the index finds only its devices; elsewhere a text search."""
        if connection.vendor != "postgresql":
            return Q(attributes__contains=f"\n{token}\n")
        keys = [models.token_key(token)]
        if self.snapshot_id is not None:
            keys.append(f"snapshot:{self.snapshot_id}")
        return Q(tokens__contains=keys)

    def require(self, queryset: QuerySet[Any], token: str) -> QuerySet[Any]:
        """Devices with this token. On PostgreSQL the tokens a filter requires are looked up
        together, as one containment: the GIN index finds the rows that have them all, and each
        row found is checked once, not once per filter."""
        if self._tokens is not None:
            self._tokens.append(models.token_key(token))
            return queryset
        return queryset.filter(self.has(token))

    def filter_class(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return self.require(queryset, f"class:{value}") if value else queryset

    def filter_state(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        if value == "tainted":
            return queryset.filter(tainted=True)
        if value and connection.vendor == "postgresql":
            return self.require(queryset, f"status:{value}")
        return queryset.filter(status=value) if value else queryset

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if connection.vendor != "postgresql":
            return super().filter_queryset(queryset)
        self._tokens = []
        try:
            found = super().filter_queryset(queryset)
            tokens = self._tokens
        finally:
            self._tokens = None
        if not tokens:
            return found
        if self.snapshot_id is not None:  # then the index finds only this snapshot's devices
            tokens.append(f"snapshot:{self.snapshot_id}")
        return found.filter(tokens__contains=tokens)


def openapi_parameters(filterset: type[django_filters.FilterSet]) -> list[OpenApiParameter]:
    """The FilterSet's query parameters, for an API operation that uses it."""
    out = []
    for name, f in filterset.base_filters.items():
        choices = [value for value, _ in getattr(f, "extra", {}).get("choices", []) or []]
        if isinstance(f, django_filters.OrderingFilter):
            choices = [p for value, _ in f.extra.get("choices", []) for p in (value,)]
        out.append(OpenApiParameter(name, str, enum=choices or None, description=f.label or ""))
    return out
