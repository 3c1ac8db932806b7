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


@register.simple_tag
def linked(text: str, refs: Any, snapshot_id: int, namespace: str = "") -> str:
    """A sentence (a finding's message, a diff change) with the names of objects that have a
    page linked to it (dradash.ui.links)."""
    from dradash.ui.links import linked as link

    return link(str(text), refs or [], snapshot_id, namespace)


@register.simple_tag
def device_link(device: Any, snapshot_id: int) -> str:
    """``pool/device`` of a device row ({"driver", "pool", "device"}), linked to the devices
    list showing it."""
    from dradash.ui.links import device_url

    driver, pool, name = device.get("driver", ""), device.get("pool", ""), device.get("device", "")
    return format_html(
        '<a href="{}"><code>{}/{}</code></a>',
        device_url(snapshot_id, driver, pool, name),
        pool,
        name,
    )
