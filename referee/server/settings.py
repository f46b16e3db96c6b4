"""Django settings of the club server (`DJANGO_SETTINGS_MODULE=referee.server.settings`).

Everything lives in the data folder ($REFEREE_SERVER_DATA): the SQLite database, the secret
key, uploads and the season's league. What differs between clubs (the host names, the TLS proxy
in front) comes from environment variables that `referee serve` sets from its flags.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import referee.report as report_package
from referee.server.secret import secret_key
from referee.server.shared.clubfolder import ClubFolder, data_dir


def _env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DATA_DIR = data_dir()
SECRET_KEY = secret_key(DATA_DIR)
DEBUG = os.environ.get("REFEREE_SERVER_DEBUG") == "1"
ALLOWED_HOSTS = _env_list("REFEREE_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
CSRF_TRUSTED_ORIGINS = _env_list("REFEREE_CSRF_TRUSTED_ORIGINS")

# Behind a TLS proxy (Caddy, nginx) that sets X-Forwarded-Proto: trust it and send the cookies
# over HTTPS only. Without the proxy the header is ignored: a client could forge it.
BEHIND_TLS_PROXY = os.environ.get("REFEREE_BEHIND_TLS_PROXY") == "1"
if BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "referee.server.club",
]

MIDDLEWARE = [
    "referee.server.csp.ContentSecurityPolicyMiddleware",   # first: it sees every answer
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "referee.server.club.signin.SignInMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "referee.server.club.views.common.NumberRefusalMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "referee.server.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "referee.server.club.context.club",
            ],
        },
    },
]

ASGI_APPLICATION = "referee.server.asgi.application"

# SQLite in the data folder. WAL lets the runner write while pages read; IMMEDIATE
# transactions take the write lock at BEGIN, so two processes never deadlock on an upgrade.
DATABASES = {
    "default": {
        "ENGINE": "referee.server.sqlitepool",   # Django's, with connections pooled
        "NAME": ClubFolder(DATA_DIR).database,
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Rate limits count in the database (referee.server.club.ratecount), not in a cache.

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Every sign-in form (the club's and the admin's) checks passwords here, under one set of
# limits on guessing (referee.server.club.signin).
AUTHENTICATION_BACKENDS = ["referee.server.club.signin.ClubBackend"]

LOGIN_URL = "club:login"
LOGIN_REDIRECT_URL = "club:home"
LOGOUT_REDIRECT_URL = "club:leaderboard"

# Cookies: never readable by scripts, never sent on cross-site requests that change things.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Strict"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Uploads always go to a file in the data folder (never held in memory), on the same disk as
# DIR/uploads so that a finished upload is moved into place, not copied.
FILE_UPLOAD_HANDLERS = ["django.core.files.uploadhandler.TemporaryFileUploadHandler"]
# Django's ASGI handler holds a request's body in a SpooledTemporaryFile of this size before it
# moves it to disk (DIR/tmp, see asgi.py): 0 would mean "never move it" (a whole upload in
# memory). The body itself is capped as it streams in (referee.server.bodycap).
FILE_UPLOAD_MAX_MEMORY_SIZE = 1 << 20
FILE_UPLOAD_TEMP_DIR = str(ClubFolder(DATA_DIR).tmp)
os.makedirs(FILE_UPLOAD_TEMP_DIR, exist_ok=True)
DATA_UPLOAD_MAX_MEMORY_SIZE = 1 << 20   # form fields other than files

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
# The replay viewer's script and styles (the report's own files) at /static/report/: the club's
# replays link them, where `referee match --html` inlines them (no inline script runs here).
STATICFILES_DIRS = [("report", str(Path(report_package.__file__).parent / "static"))]
WHITENOISE_USE_FINDERS = True   # serve the package's own files without a collectstatic step
# WhiteNoise hands Django a file iterator that is not async; Django then reads it in a thread,
# which is right for these small files: the warning would print on every file served.
warnings.filterwarnings("ignore", message="StreamingHttpResponse must consume synchronous")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django": {"handlers": ["console"], "level": "WARNING"}},
}
