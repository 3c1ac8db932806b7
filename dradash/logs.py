"""Keeping share-link tokens out of every log the project configures.

A share link's token is the whole of its secret and sits in the path (``/share/<token>/…``), so
anything that logs a path, a URL, a Referer or a Location header would leak it. Two guards:

- ``RedactShareTokens``, a logging filter on the handlers of settings.LOGGING (Django's request
  and security loggers, dradash's, the root logger's) and on gunicorn's error and access logs;
- ``GunicornLogger``, gunicorn's logger class with every access-log atom masked before the
  format is applied, so no ``access_log_format`` (request line, path, query, Referer, Location,
  any header or environ variable) can print a token. gunicorn.conf.py selects it.

Both replace the token with ``<redacted>``; the rest of the line stays useful.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from gunicorn.glogging import Logger


def _as_sent(text: str) -> str:
    """A pattern for ``text`` as a path may carry it: each character itself or percent-encoded
    (the server decodes the path, so /%73hare/<token>/ opens the share view too)."""
    return "".join(f"(?:{re.escape(c)}|%{ord(c):02x})" for c in text)


# /share/<token> in any text, in every spelling that reaches the share view (any of its
# characters percent-encoded) and percent-encoded in a ?next= parameter or a Referer, up to the
# next separator (/, %2F, ?, #, &, quotes, whitespace).
SHARE_TOKEN_IN_TEXT = re.compile(
    rf"(?P<prefix>{_as_sent('/share/')})(?P<token>(?:[^/\s?#&\"'<>%]|%(?!2F))+)", re.IGNORECASE
)
REDACTED = "<redacted>"


def mask_share_tokens(text: str) -> str:
    """``text`` with the token of every share path in it replaced by <redacted>."""
    if "share" not in text.lower() and "%" not in text:
        return text
    return SHARE_TOKEN_IN_TEXT.sub(lambda m: m["prefix"] + REDACTED, text)


class RedactShareTokens(logging.Filter):
    """Mask share tokens in a record's message (its arguments merged in first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as it would
            return True
        masked = mask_share_tokens(message)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


class GunicornLogger(Logger):
    """gunicorn's Logger with share tokens masked in the access log and the error log."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            if not any(isinstance(f, RedactShareTokens) for f in log.filters):
                log.addFilter(RedactShareTokens())

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)
        return {k: mask_share_tokens(v) if isinstance(v, str) else v for k, v in atoms.items()}
