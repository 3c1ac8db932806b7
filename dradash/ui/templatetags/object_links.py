"""Links from an object reference ({"kind", "namespace", "name"}) to its page, where it has one."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html

from dradash.dra.extended import IN_MEMORY_NAME

register = template.Library()

PAGES = {
    "Pod": "pod-detail",
    "ResourceClaim": "claim-detail",
    "DeviceClass": "class-detail",
    "PodGroup": "podgroup-detail",
    "Node": "node-detail",
}


@register.simple_tag
def object_link(ref: Any, snapshot_id: int) -> str:
    """``Kind namespace/name``, linked to the object's page in the snapshot when there is one."""
    kind, namespace, name = ref.get("kind", ""), ref.get("namespace", ""), ref.get("name", "")
    label = format_html(
        '<span class="muted">{} {}</span>{}',
        kind,
        f"{namespace}/" if namespace else "",
        name,
    )
    page = PAGES.get(kind)
    if page is None or not name or name == IN_MEMORY_NAME:
        return label  # (the claim kube-scheduler keeps in memory for extended resources)
    args = [snapshot_id, namespace, name] if namespace else [snapshot_id, name]
    return format_html('<a href="{}">{}</a>', reverse(page, args=args), label)


@register.simple_tag
def object_link_text(kind: str, ref: str, snapshot_id: int) -> str:
    """``namespace/name`` (as the API writes it) linked to the object's page."""
    namespace, _, name = ref.rpartition("/")
    label = format_html(
        '<span class="muted">{}</span>{}', f"{namespace}/" if namespace else "", name
    )
    page = PAGES.get(kind)
    if page is None or not name:
        return label
    args = [snapshot_id, namespace, name] if namespace else [snapshot_id, name]
    return format_html('<a href="{}">{}</a>', reverse(page, args=args), label)


@register.simple_tag(takes_context=True)
def linked(context: Any, text: str, refs: Any, snapshot_id: int, namespace: str = "") -> str:
    """A sentence (a finding's message, a diff change) with the names of objects that have a
    page linked to it (dradash.ui.links); nodes only where they are the snapshot's."""
    from dradash.ui.links import NODES
    from dradash.ui.links import linked as link

    text = str(text)
    refs = refs or []
    wants_nodes = NODES.search(text) is not None or any(
        isinstance(r, dict) and r.get("kind") == "Node" for r in refs
    )
    nodes = _snapshot_nodes(context.get("request"), snapshot_id) if wants_nodes else set()
    return link(text, refs, snapshot_id, namespace, nodes=nodes)


def _snapshot_nodes(request: Any, snapshot_id: int) -> set[str]:
    """The snapshot's node names, read once per request (a page may link hundreds of
    sentences)."""
    from dradash.analysis.selectors import node_names

    memo: dict[int, set[str]] | None = getattr(request, "_dradash_nodes", None)
    if memo is None:
        memo = {}
        if request is not None:
            request._dradash_nodes = memo
    if snapshot_id not in memo:
        memo[snapshot_id] = node_names(snapshot_id)
    return memo[snapshot_id]


@register.simple_tag
def device_link(device: Any, snapshot_id: int, full: bool = False) -> str:
    """``pool/device`` of a device row ({"driver", "pool", "device"}), linked to the device's
    page; ``driver/pool/device`` with ``full``."""
    from dradash.ui.links import device_url

    driver, pool, name = device.get("driver", ""), device.get("pool", ""), device.get("device", "")
    label = f"{driver}/{pool}/{name}" if full else f"{pool}/{name}"
    url = device_url(snapshot_id, driver, pool, name)
    if url is None:
        return format_html("<code>{}</code>", label)
    return format_html('<a href="{}"><code>{}</code></a>', url, label)


@register.simple_tag
def node_link(name: Any, snapshot_id: int) -> str:
    """A node's name linked to its page (a node the snapshot lacks has a page that says so)."""
    from dradash.ui.links import node_url

    name = str(name or "")
    url = node_url(snapshot_id, name)
    if url is None:
        return format_html("{}", name)
    return format_html('<a href="{}" class="node-link">{}</a>', url, name)
