"""Pages of the list APIs: every list answers at most ``max_limit`` rows, ``limit``/``offset``
choosing which (a larger limit is that maximum, an invalid one the default).

- ``Page``: the Pods' and claims' lists, ``{"count", "next", "previous", "results"}``.
- ``ListPage``: the lists whose answer was a JSON array before they were paged (snapshots,
  findings, devices, pools, share links): still an array, the page's rows, with the total in
  ``X-Total-Count`` and the neighbouring pages in ``Link`` (``rel="next"``, ``rel="prev"``).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response


class Page(LimitOffsetPagination):
    default_limit = 100
    max_limit = 1000


class ListPage(LimitOffsetPagination):
    default_limit = 1000
    max_limit = 1000

    def get_paginated_response(self, data: Any) -> Response:
        links = [
            f'<{url}>; rel="{rel}"'
            for rel, url in (("next", self.get_next_link()), ("prev", self.get_previous_link()))
            if url
        ]
        headers = {"X-Total-Count": str(self.count)}
        if links:
            headers["Link"] = ", ".join(links)
        return Response(data, headers=headers)


def page_parameters(
    page: type[LimitOffsetPagination], *, query: bool = True
) -> list[OpenApiParameter]:
    """The schema's words for a list's paging: its query parameters (unless a serializer
    documents them) and, for a ListPage, the response headers."""
    parameters = []
    if query:
        parameters += [
            OpenApiParameter(
                "limit",
                int,
                description=f"rows per page (default {page.default_limit}, at most "
                f"{page.max_limit})",
            ),
            OpenApiParameter("offset", int, description="rows to skip"),
        ]
    if issubclass(page, ListPage):
        parameters += [
            OpenApiParameter(
                "X-Total-Count",
                int,
                OpenApiParameter.HEADER,
                description="how many rows there are in all",
                response=[200],
            ),
            OpenApiParameter(
                "Link",
                str,
                OpenApiParameter.HEADER,
                description='the next and previous pages, as <url>; rel="next", <url>; rel="prev"',
                response=[200],
            ),
        ]
    return parameters
