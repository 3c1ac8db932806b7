"""dradash settings: one module, configured by environment variables (see .env.example)."""

from __future__ import annotations

import os
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

ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get(
        "DRADASH_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if (DEBUG or TESTING) else ""
    ).split(",")
    if h.strip()
]

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
    "rest_framework.authtoken",
    "drf_spectacular",
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
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # /share/<token>/… pages without a login; its LoginRequiredMiddleware lets only them through.
    "dradash.sharing.middleware.ShareLinkMiddleware",
    "dradash.sharing.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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
    )
}
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

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Absolute, so pages under /share/<token>/ (another script prefix) do not prefix it.
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
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

# Prometheus metrics at /metrics, for scrapers that send "Authorization: Bearer <token>";
# unset: there is no /metrics.
DRADASH_METRICS_TOKEN = envsecret("DRADASH_METRICS_TOKEN") or ""

# Bundles: the largest file import_bundle and the upload form accept.
DRADASH_BUNDLE_MAX_BYTES = envint("DRADASH_BUNDLE_MAX_BYTES", 256 * 1024 * 1024)
# The largest upload request (all its files together), refused with 413 before it is read.
DRADASH_UPLOAD_MAX_BYTES = envint("DRADASH_UPLOAD_MAX_BYTES", 512 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Parsed snapshots kept in memory per process (snapshots never change once stored).
DRADASH_STATE_CACHE_SIZE = envint("DRADASH_STATE_CACHE_SIZE", 4)

# POST /api/v1/selectors/evaluate: requests per user, e.g. "60/minute", "1000/hour" (429 beyond).
DRADASH_SELECTOR_RATE = os.environ.get("DRADASH_SELECTOR_RATE") or "60/minute"
_count, _, _period = DRADASH_SELECTOR_RATE.partition("/")
if not (_count.isdigit() and _period[:1] in ("s", "m", "h", "d")):
    raise ImproperlyConfigured(
        f"DRADASH_SELECTOR_RATE must look like 60/minute, not {DRADASH_SELECTOR_RATE!r}"
    )

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "rest_framework.views.exception_handler",
    # Throttles count in the default cache (see CACHES).
    "DEFAULT_THROTTLE_RATES": {"selectors": DRADASH_SELECTOR_RATE},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "dradash API",
    "DESCRIPTION": "Snapshots of Kubernetes Dynamic Resource Allocation state.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
}

# The default cache holds counters every web process must share: the selector API's rate limit
# and the coalescing of share-link refusals in the audit log. DRADASH_CACHE_URL (redis://…) puts
# it in Redis; without it (the embedded default) each process counts on its own.
DRADASH_CACHE_URL = os.environ.get("DRADASH_CACHE_URL", "")
if DRADASH_CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": DRADASH_CACHE_URL,
            "KEY_PREFIX": "dradash",
        }
    }

# Celery: without a broker, tasks run eagerly in-process (the embedded default).
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or None
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SOFT_TIME_LIMIT = envint("DRADASH_TASK_SOFT_TIME_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = envint("DRADASH_TASK_TIME_LIMIT", 660)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": "dradash-celery:"}
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
}

# Live capture: seconds one Kubernetes API request may take, objects per list page, how long a
# capture run may wait in the queue before it counts as lost, and how often a run whose worker
# was lost is retried.
DRADASH_CAPTURE_REQUEST_TIMEOUT = envint("DRADASH_CAPTURE_REQUEST_TIMEOUT", 30)
DRADASH_CAPTURE_PAGE_SIZE = envint("DRADASH_CAPTURE_PAGE_SIZE", 500)
DRADASH_CAPTURE_QUEUED_TIMEOUT = envint("DRADASH_CAPTURE_QUEUED_TIMEOUT", 1800)
DRADASH_CAPTURE_MAX_ATTEMPTS = envint("DRADASH_CAPTURE_MAX_ATTEMPTS", 3)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "dradash": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}

# Selector playground: wall-clock seconds one evaluation request may take (each expression also
# has Kubernetes' cost limit).
DRADASH_SELECTOR_TIME_LIMIT = envint("DRADASH_SELECTOR_TIME_LIMIT", 5)
