"""dradash settings: one module, configured by environment variables (see .env.example)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {value!r}")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {value!r}") from None


def envlist(name: str, default: str = "") -> list[str]:
    """A comma-separated list, empty entries dropped."""
    return [v.strip() for v in (os.environ.get(name) or default).split(",") if v.strip()]


def envrate(name: str, default: str) -> str:
    """A rate such as 60/minute or 6/hour (a count per second, minute, hour or day)."""
    value = os.environ.get(name) or default
    count, _, period = value.partition("/")
    if not (count.isdigit() and period[:1] in ("s", "m", "h", "d")):
        raise ImproperlyConfigured(f"{name} must look like 60/minute, not {value!r}")
    return value


def envsecret(name: str) -> str | None:
    """The value of NAME, or the contents of the file named by NAME_FILE."""
    if value := os.environ.get(name):
        return value
    if path := os.environ.get(f"{name}_FILE"):
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE: cannot read {path}: {exc}") from None
    return None


DEBUG = envbool("DRADASH_DEBUG", False)
# pytest (8.2+) sets PYTEST_VERSION for the whole session.
TESTING = "PYTEST_VERSION" in os.environ

SECRET_KEY = envsecret("DRADASH_SECRET_KEY")
if not SECRET_KEY:
    if not (DEBUG or TESTING):
        raise ImproperlyConfigured(
            "DRADASH_SECRET_KEY is not set. Set it (or DRADASH_SECRET_KEY_FILE) in production, "
            "or DRADASH_DEBUG=1 for local development."
        )
    SECRET_KEY = "dradash-insecure-development-key"

ALLOWED_HOSTS = envlist(
    "DRADASH_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if (DEBUG or TESTING) else ""
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "knox",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "dradash.accounts",
    "dradash.clusters",
    "dradash.snapshots",
    "dradash.analysis",
    "dradash.ui",
    "dradash.explorer",
    "dradash.playground",
    "dradash.compare",
    "dradash.readiness",
    "dradash.sharing",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "dradash.middleware.SecurityHeadersMiddleware",
    # Every error under /api/ as JSON, whoever answered it.
    "dradash.middleware.ApiErrorsMiddleware",
    # A NUL in the path: 404 before a view puts it in a query (PostgreSQL refuses it: a 500).
    "dradash.middleware.NulPathMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Request bodies over DRADASH_REQUEST_MAX_BYTES: 413 before anything reads them (CSRF does).
    "dradash.middleware.RequestBodyLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # /share/<token>/… pages without a login; its LoginRequiredMiddleware lets only them through.
    "dradash.sharing.middleware.ShareLinkMiddleware",
    "dradash.sharing.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Turns a login refused because of too many failures into the locked-out page (429).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "dradash.urls"
WSGI_APPLICATION = "dradash.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    }
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'dradash.sqlite3'}",
        conn_max_age=envint("DRADASH_DB_CONN_MAX_AGE", 60),
        # A kept connection is checked before a request reuses it, so a PostgreSQL restart
        # costs no request an error.
        conn_health_checks=True,
    )
}
if "postgresql" in DATABASES["default"]["ENGINE"]:
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", envint("DRADASH_DB_CONNECT_TIMEOUT", 5)
    )
# PostgreSQL lock_timeout and statement_timeout, in seconds, per kind of process (applied by
# dradash.db.use_timeouts: gunicorn.conf.py for web requests, dradash.celery for workers; none
# for management commands and runserver). A page waits at most 5 s for a lock and runs no query
# longer than 20 s, below gunicorn's 30 s request timeout, so it answers a clear 503 instead of
# getting its worker killed; workers store whole snapshots and wait for the blob lock of other
# captures, so theirs are longer, the statement timeout at most the soft task time limit.
DRADASH_DB_TIMEOUTS = {
    "web": {
        "lock_timeout": envint("DRADASH_DB_LOCK_TIMEOUT", 5),
        "statement_timeout": envint("DRADASH_DB_STATEMENT_TIMEOUT", 20),
    },
    "worker": {
        "lock_timeout": envint("DRADASH_WORKER_DB_LOCK_TIMEOUT", 120),
        "statement_timeout": envint("DRADASH_WORKER_DB_STATEMENT_TIMEOUT", 600),
    },
}
# Seconds a 503 (database or rate limiter unavailable) asks clients to wait (Retry-After).
DRADASH_RETRY_AFTER_SECONDS = 10
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Failed logins (django-axes, dradash.accounts.lockout): after DRADASH_LOGIN_FAILURE_LIMIT
# failures of one username from one address, or DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT from one
# address whatever the usernames, logins of that username from that address, or from that
# address, are refused (429) until DRADASH_LOGIN_LOCKOUT_MINUTES pass without a failure. Never
# per username alone: nobody can lock another user out from elsewhere. Counted in the database,
# so across processes. A successful login forgets its username's failures from its address.
AUTHENTICATION_BACKENDS = [
    "dradash.accounts.backends.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "dradash.accounts.lockout.LoginLockoutHandler"
AXES_FAILURE_LIMIT = envint("DRADASH_LOGIN_FAILURE_LIMIT", 10)
DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT = envint("DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT", 50)
if min(AXES_FAILURE_LIMIT, DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT) < 1:
    raise ImproperlyConfigured(
        "DRADASH_LOGIN_FAILURE_LIMIT and DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT must be at least 1"
    )
AXES_COOLOFF_TIME = timedelta(minutes=envint("DRADASH_LOGIN_LOCKOUT_MINUTES", 15))
# What axes' own logs and axes_reset commands go by; the handler counts both limits itself.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "dradash.accounts.views.locked_out"
AXES_CLIENT_IP_CALLABLE = "dradash.accounts.clients.client_ip"
# Behind N reverse proxies that each append to X-Forwarded-For, the client is the N-th address
# from the right (0: REMOTE_ADDR is the client). Login throttling and the audit log use it.
DRADASH_TRUSTED_PROXY_COUNT = envint("DRADASH_TRUSTED_PROXY_COUNT", 0)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Absolute, so pages under /share/<token>/ (another script prefix) do not prefix it.
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("DRADASH_STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not (DEBUG or TESTING)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Security headers; the Content-Security-Policy is set by dradash.middleware.
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_SECURE = envbool("DRADASH_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# HTTP Strict Transport Security: sent only on HTTPS responses, so it is on by default (one
# year); DRADASH_HSTS_SECONDS=0 turns it off.
SECURE_HSTS_SECONDS = envint("DRADASH_HSTS_SECONDS", 365 * 24 * 60 * 60)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("DRADASH_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("DRADASH_HSTS_PRELOAD", False)
# Behind a proxy that terminates TLS: the header it sets and its value for HTTPS, e.g.
# "X-Forwarded-Proto=https". Only set it when that proxy always sets (or strips) the header.
if _proxy_ssl := os.environ.get("DRADASH_SECURE_PROXY_SSL_HEADER", "").strip():
    _header, _, _value = _proxy_ssl.partition("=")
    if not (_header.strip() and _value.strip()):
        raise ImproperlyConfigured(
            "DRADASH_SECURE_PROXY_SSL_HEADER must look like X-Forwarded-Proto=https, "
            f"not {_proxy_ssl!r}"
        )
    SECURE_PROXY_SSL_HEADER = (
        "HTTP_" + _header.strip().upper().replace("-", "_"),
        _value.strip(),
    )
# Origins (scheme://host[:port]) whose unsafe requests CSRF protection accepts besides the
# site's own, e.g. when a proxy serves it under another name.
CSRF_TRUSTED_ORIGINS = envlist("DRADASH_CSRF_TRUSTED_ORIGINS")
for _origin in CSRF_TRUSTED_ORIGINS:
    if not _origin.startswith(("http://", "https://")):
        raise ImproperlyConfigured(
            f"DRADASH_CSRF_TRUSTED_ORIGINS: {_origin!r} must start with https:// or http://"
        )

# Prometheus metrics at /metrics, for scrapers that send "Authorization: Bearer <token>";
# unset: there is no /metrics.
DRADASH_METRICS_TOKEN = envsecret("DRADASH_METRICS_TOKEN") or ""

# Bundles: the largest file import_bundle and the upload form accept.
DRADASH_BUNDLE_MAX_BYTES = envint("DRADASH_BUNDLE_MAX_BYTES", 256 * 1024 * 1024)
# The largest upload request (all its files together), refused with 413 before it is read.
DRADASH_UPLOAD_MAX_BYTES = envint("DRADASH_UPLOAD_MAX_BYTES", 512 * 1024 * 1024)
# The largest body of any other request (the API's JSON, forms), refused with 413 before it is
# read (dradash.middleware.RequestBodyLimitMiddleware). 3 MiB, as the Kubernetes API server.
DRADASH_REQUEST_MAX_BYTES = envint("DRADASH_REQUEST_MAX_BYTES", 3 * 1024 * 1024)
# Per user: uploads queued or running at once, and bytes uploaded in any hour; beyond either the
# upload page and API answer 429 and store nothing.
DRADASH_UPLOADS_PER_USER = envint("DRADASH_UPLOADS_PER_USER", 2)
DRADASH_UPLOAD_BYTES_PER_HOUR = envint("DRADASH_UPLOAD_BYTES_PER_HOUR", 1024 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Parsed snapshots kept in memory per process (snapshots never change once stored).
DRADASH_STATE_CACHE_SIZE = envint("DRADASH_STATE_CACHE_SIZE", 4)

# POST /api/v1/selectors/evaluate: requests per user, e.g. "60/minute", "1000/hour" (429 beyond).
DRADASH_SELECTOR_RATE = envrate("DRADASH_SELECTOR_RATE", "60/minute")

# Share links (dradash.sharing.throttles): requests a link serves, per link and per client
# address; bundle downloads through links, per link and per address (429 beyond either).
DRADASH_SHARE_RATE = envrate("DRADASH_SHARE_RATE", "120/minute")
DRADASH_SHARE_DOWNLOAD_RATE = envrate("DRADASH_SHARE_DOWNLOAD_RATE", "6/hour")

REST_FRAMEWORK = {
    # Token first: DRF answers unauthenticated requests with the first class's WWW-Authenticate
    # (401); the session keeps working for the pages' own requests.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "dradash.accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "dradash.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "dradash.api.exception_handler",
    # Throttles count in the default cache (see CACHES).
    "DEFAULT_THROTTLE_RATES": {"selectors": DRADASH_SELECTOR_RATE},
}
# API tokens (django-rest-knox): stored as SHA-512 hashes, shown once, expiring.
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=envint("DRADASH_API_TOKEN_DAYS", 30)),
    "AUTO_REFRESH": False,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "dradash API",
    "DESCRIPTION": "Snapshots of Kubernetes Dynamic Resource Allocation state.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI's files come from drf-spectacular-sidecar, served by dradash itself.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Names for enums that would otherwise get a hash suffix ("SeverityDfeEnum").
    "ENUM_NAME_OVERRIDES": {
        "VerdictSeverityEnum": ["ok", "warning", "error", "unknown"],
        "GangMemberStateEnum": ["scheduled", "waiting", "fits", "does-not-fit", "unknown", "basic"],
        "EvictionStateEnum": ["evicted", "would-evict", "due", "tolerated"],
        "DeviceStatusEnum": ["allocated", "unusable", "tainted", "free"],
    },
}

# The default cache holds counters every web process must share: the selector API's rate limit
# and the coalescing of share-link refusals in the audit log. DRADASH_CACHE_URL (redis://…) puts
# it in Redis; without it (the embedded default) each process counts on its own. While Redis is
# down pages work without the cache, but rate limits (DRF throttles, keys "throttle_…") refuse
# with 503 rather than let everything through (dradash.cache).
DRADASH_CACHE_URL = os.environ.get("DRADASH_CACHE_URL", "")
if DRADASH_CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "dradash.cache.FailSafeRedisCache",
            "LOCATION": DRADASH_CACHE_URL,
            "KEY_PREFIX": "dradash",
            "OPTIONS": {
                "STRICT_KEY_PREFIXES": ["throttle_"],
                "socket_connect_timeout": 2,
                "socket_timeout": 2,
            },
        }
    }

# Celery: without a broker, tasks run eagerly in-process (the embedded default). No broker is
# reached then; "memory://localhost/" keeps kombu from guessing amqp://localhost (and saying
# so on every import: "No hostname was supplied. Reverting to default 'localhost'").
CELERY_TASK_ALWAYS_EAGER = not os.environ.get("CELERY_BROKER_URL")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "memory://localhost/"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SOFT_TIME_LIMIT = envint("DRADASH_TASK_SOFT_TIME_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = envint("DRADASH_TASK_TIME_LIMIT", 660)
# The analyse task's own limits (seconds): the large profile's analysis takes about 20 s, a
# snapshot whose allocator searches run out at most 16 × DRADASH_ALLOCATOR_SEARCH_SECONDS more.
# The soft limit fails the analysis with that reason; the hard limit replaces a stuck worker.
DRADASH_ANALYSIS_SOFT_TIME_LIMIT = envint("DRADASH_ANALYSIS_SOFT_TIME_LIMIT", 240)
DRADASH_ANALYSIS_TIME_LIMIT = envint("DRADASH_ANALYSIS_TIME_LIMIT", 270)
# Wall-clock seconds one node's allocator search may take, a safety net behind its budget of
# allocateOne calls, which stands for kube-scheduler's 10 s filterTimeout (dradash.dra.allocator
# .budget): the budget decides unless this machine searches unusually slowly.
DRADASH_ALLOCATOR_SEARCH_SECONDS = envint("DRADASH_ALLOCATOR_SEARCH_SECONDS", 10)
# One queue per kind of long work, each served by worker processes of its own
# (docker-compose.yml, deploy/kubernetes/worker.yaml), so that a burst of one kind (five large
# uploads) never delays another (a capture, the analysis of a small upload). Beat's periodic
# bookkeeping, a moment's work each, goes to the default queue, which every worker also serves.
# A worker started without -Q serves every queue (development, a small installation).
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_ROUTES = {
    "dradash.snapshots.tasks.upload_run_process": {"queue": "uploads"},
    "dradash.clusters.tasks.capture_run": {"queue": "captures"},
    "dradash.analysis.tasks.analyse_snapshot": {"queue": "analyses"},
}
CELERY_TASK_QUEUES = {
    name: {}
    for name in [CELERY_TASK_DEFAULT_QUEUE, *(r["queue"] for r in CELERY_TASK_ROUTES.values())]
}
# A worker reserves one message per process: the long tasks are acknowledged when they end
# (acks_late), so a busy worker holds back no queued task from a free one.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# kombu's Redis transport with the fix that keeps a worker alive when Redis drops under a
# running task (see dradash/broker.py). Only for redis:// brokers.
if CELERY_BROKER_URL and CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "dradash.broker:Transport"
# A worker whose broker went away reconnects for as long as it takes (not 100 tries, then exit).
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_BROKER_CONNECTION_TIMEOUT = 3
# A running task carries on when the broker drops (our tasks are idempotent; a redelivered
# message finds its run taken and does nothing).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "global_keyprefix": "dradash-celery:",
    "socket_connect_timeout": 3,
    "socket_timeout": 10,  # above the 1 s BRPOP poll; bounds a read from a Redis that hangs
    "socket_keepalive": True,
}
# Sending a task while the broker is down: a few quick retries (about 1.5 s), then the caller
# gets QueueUnavailable (dradash.celery.enqueue) and fails its run with that reason.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 3,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 1,
}
# Periodic work (run `celery -A dradash beat`). Each entry expires just under its period, so a
# backlog never runs stale duplicates.
CELERY_BEAT_SCHEDULE = {
    "capture-due": {
        "task": "dradash.clusters.tasks.capture_due",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    "capture-runs-reap": {
        "task": "dradash.clusters.tasks.capture_runs_reap",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    "analyses-reap": {
        "task": "dradash.analysis.tasks.analyses_reap",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    "upload-runs-reap": {
        "task": "dradash.snapshots.tasks.upload_runs_reap",
        "schedule": 60.0,
        "options": {"expires": 55},
    },
    "facts-prune": {
        "task": "dradash.analysis.tasks.facts_prune",
        "schedule": 3600.0,
        "options": {"expires": 3500},
    },
}

# Live capture: seconds one Kubernetes API request may take, objects per list page, how long a
# capture run may wait in the queue before it counts as lost, and how often a run whose worker
# was lost is retried.
DRADASH_CAPTURE_REQUEST_TIMEOUT = envint("DRADASH_CAPTURE_REQUEST_TIMEOUT", 30)
DRADASH_CAPTURE_PAGE_SIZE = envint("DRADASH_CAPTURE_PAGE_SIZE", 500)
DRADASH_CAPTURE_QUEUED_TIMEOUT = envint("DRADASH_CAPTURE_QUEUED_TIMEOUT", 1800)
DRADASH_CAPTURE_MAX_ATTEMPTS = envint("DRADASH_CAPTURE_MAX_ATTEMPTS", 3)
# "Capture now" (the home page, the admin) starts at most one capture of a cluster this often
# (seconds); asked again meanwhile, it joins the run under way or says when it may.
DRADASH_CAPTURE_NOW_INTERVAL = envint("DRADASH_CAPTURE_NOW_INTERVAL", 60)
# Largest object (its JSON, after redaction) a capture keeps; larger ones are named in the
# snapshot's kind status and left out (the snapshot is partial).
DRADASH_CAPTURE_MAX_OBJECT_BYTES = envint("DRADASH_CAPTURE_MAX_OBJECT_BYTES", 4 * 1024 * 1024)

# No share token reaches a log: every record through our handlers is masked (dradash.logs);
# gunicorn's access and error logs are masked by its logger class (gunicorn.conf.py).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_share_tokens": {"()": "dradash.logs.RedactShareTokens"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["redact_share_tokens"]}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "dradash": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# Selector playground: wall-clock seconds one evaluation request may take (each expression also
# has Kubernetes' cost limit), and the seconds of evaluation each user gets per minute, for the
# playground page and the selector API together (429 beyond; counted in the default cache).
DRADASH_SELECTOR_TIME_LIMIT = envint("DRADASH_SELECTOR_TIME_LIMIT", 5)
DRADASH_SELECTOR_SECONDS_PER_MINUTE = envint("DRADASH_SELECTOR_SECONDS_PER_MINUTE", 20)
# Evaluations one user may run at once (page and API together; 429 beyond).
DRADASH_SELECTOR_CONCURRENCY = envint("DRADASH_SELECTOR_CONCURRENCY", 2)
if not 1 <= DRADASH_SELECTOR_TIME_LIMIT <= 60:
    raise ImproperlyConfigured("DRADASH_SELECTOR_TIME_LIMIT must be from 1 to 60 seconds")
if DRADASH_SELECTOR_SECONDS_PER_MINUTE < 1 or DRADASH_SELECTOR_CONCURRENCY < 1:
    raise ImproperlyConfigured(
        "DRADASH_SELECTOR_SECONDS_PER_MINUTE and DRADASH_SELECTOR_CONCURRENCY must be at least 1"
    )
