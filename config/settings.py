"""memdesk settings: one file, driven by environment variables (see README and .env.example)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _load_dotenv(path: Path) -> None:
    """Read KEY=VALUE lines from .env without overriding the real environment."""
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        os.environ.setdefault(key.strip(), value.strip().strip('"').strip("'"))


_load_dotenv(BASE_DIR / ".env")

VAR_DIR = Path(os.environ.get("MEMDESK_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("MEMDESK_DEBUG", False)
SECRET_KEY = os.environ.get("MEMDESK_SECRET_KEY") or "dev-only-insecure-key-change-me-" + "x" * 20
ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("MEMDESK_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()
]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("MEMDESK_CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
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
    "django_q",
    "axes",  # login throttling
    "memory",
    "review",
    "wiki",
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "web.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last: answers a locked-out login attempt
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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
        },
    }
]

# --- database -------------------------------------------------------------------------------------------
SQLITE_PATH = Path(os.environ.get("MEMDESK_SQLITE_PATH", VAR_DIR / "memdesk.sqlite3"))
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(SQLITE_PATH),
            "OPTIONS": {
                # WAL lets readers run beside the single writer; IMMEDIATE takes the write lock at BEGIN so
                # concurrent writers queue on the busy timeout instead of failing with "database is locked".
                "init_command": (
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
                    " PRAGMA cache_size=-65536; PRAGMA mmap_size=268435456; PRAGMA temp_store=MEMORY;"
                    # checkpoint (and fsync) every ~40 MB of WAL instead of every 4 MB: ~10% faster writes
                    " PRAGMA wal_autocheckpoint=10000;"
                ),
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
            },
            "TEST": {"NAME": os.environ.get("MEMDESK_TEST_SQLITE_PATH") or None},
        }
    }
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"].setdefault("TEST", {})["NAME"] = os.environ.get(
        "MEMDESK_TEST_PG_NAME", "test_memdesk"
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request when it is missing
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the <body> hx-headers, not the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Content-Security-Policy of every page: empty means web.security.DEFAULT_POLICY (the site's own scripts only,
# nothing inline or evaluated).
MEMDESK_CSP = os.environ.get("MEMDESK_CSP", "")

# MEMDESK_HTTPS=true: served over HTTPS only (secure cookies, HSTS, HTTP redirected to HTTPS). Behind a proxy
# that terminates TLS, also set MEMDESK_PROXY_SSL_HEADER=true so the X-Forwarded-Proto header is believed.
HTTPS = env_bool("MEMDESK_HTTPS", False)
if HTTPS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = True
    SECURE_HSTS_SECONDS = int(os.environ.get("MEMDESK_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    if env_bool("MEMDESK_PROXY_SSL_HEADER", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Login throttling (django-axes): after MEMDESK_LOGIN_FAILURE_LIMIT failed sign-ins for one username from one
# address, that pair is refused (HTTP 429) for MEMDESK_LOGIN_COOLOFF_MINUTES; a success resets the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("MEMDESK_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("MEMDESK_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

# --- background jobs --------------------------------------------------------------------------------------
# MEMDESK_TASK_BACKEND = "q2" (django-q2, database broker; default), "celery" (Redis broker; run
# `celery -A config worker -B`), or "sync" (inline, for tests and one-off commands).
TASK_BACKEND = os.environ.get("MEMDESK_TASK_BACKEND", "q2")
Q_CLUSTER = {
    "name": "memdesk",
    "workers": int(os.environ.get("MEMDESK_Q_WORKERS", "1")),
    "timeout": 300,
    "retry": 360,
    "orm": "default",
    "catch_up": False,
}
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
CELERY_TASK_ACKS_LATE = True  # jobs are safe to run twice
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- memdesk ----------------------------------------------------------------------------------------------
MEMDESK_CONFIG_PATH = os.environ.get("MEMDESK_CONFIG", str(BASE_DIR / "memdesk.toml"))
# Optional: engine events (knowledge.quarantined, …) are POSTed here as JSON, retried by the sweep job.
MEMDESK_WEBHOOK_URL = os.environ.get("MEMDESK_WEBHOOK_URL", "")

# --- MCP (SPEC A) -----------------------------------------------------------------------------------------
# memory_store calls allowed per agent per UTC day (SPEC A3); past it the tool answers ``rate_limited``.
MEMDESK_MCP_STORE_DAILY_LIMIT = int(os.environ.get("MEMDESK_MCP_STORE_DAILY_LIMIT", "1000"))
# memory_store_fact calls allowed per token per UTC day (each is injection-scanned: a bounded cost per token).
MEMDESK_MCP_FACT_DAILY_LIMIT = int(os.environ.get("MEMDESK_MCP_FACT_DAILY_LIMIT", "2000"))
# Tool calls run on this many database threads per server process (memory.mcp_calls), never on one shared
# thread; each token may have this many calls in flight and this many calls per second (bursts up to BURST).
MEMDESK_MCP_WORKERS = int(os.environ.get("MEMDESK_MCP_WORKERS", "8"))
MEMDESK_MCP_TOKEN_CONCURRENCY = int(os.environ.get("MEMDESK_MCP_TOKEN_CONCURRENCY", "2"))
MEMDESK_MCP_TOKEN_RATE = float(os.environ.get("MEMDESK_MCP_TOKEN_RATE", "20"))
MEMDESK_MCP_TOKEN_BURST = int(os.environ.get("MEMDESK_MCP_TOKEN_BURST", "40"))
# ... and at most this many seconds of CPU per second (bursts of CPU_BURST seconds), charged after each call.
MEMDESK_MCP_TOKEN_CPU_SHARE = float(os.environ.get("MEMDESK_MCP_TOKEN_CPU_SHARE", "0.05"))
MEMDESK_MCP_TOKEN_CPU_BURST = float(os.environ.get("MEMDESK_MCP_TOKEN_CPU_BURST", "0.5"))
# Tokens that spent much of their CPU lately run their calls in this many shared "heavy" lanes.
MEMDESK_MCP_HEAVY_LANES = int(os.environ.get("MEMDESK_MCP_HEAVY_LANES", "1"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("MEMDESK_LOG_LEVEL", "WARNING")},
}
