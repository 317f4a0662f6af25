#!/usr/bin/env bash
# Runs the demo on the embedded defaults: SQLite, a filesystem Celery broker, one worker.
#
# The demo runs as production does, with DEBUG off: an error shows a plain error page, never Django's debug
# page with the settings (database and broker URLs) on it. Its secret key is random, written once to
# var/secret_key (so sessions survive restarts), and static files are collected and served by WhiteNoise.
# The server listens on 127.0.0.1 only: the demo accounts have a published password. Plain HTTP on loopback,
# so the HTTPS redirect, HSTS and Secure-only cookies are off here (they stay on by default elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
HOST=127.0.0.1
PORT="${DEMO_PORT:-8000}"
VAR="${LIT2TEST_VAR_DIR:-var}"

mkdir -p "$VAR"
if [ ! -s "$VAR/secret_key" ]; then
  (umask 077 && $PY -c 'import secrets; print(secrets.token_urlsafe(50))' >"$VAR/secret_key")
fi
export DEBUG=0 SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0 SECURE_HSTS_SECONDS=0

$PY manage.py migrate --no-input -v0
$PY manage.py collectstatic --no-input -v0
$PY manage.py demo_setup
$PY manage.py demo_study || true

.venv/bin/celery -A lit2test_web worker --loglevel=INFO --concurrency=2 --pool=threads >"$VAR/celery-worker.log" 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true' EXIT INT TERM

cat <<MSG

  Lit2Test Web is running at http://$HOST:$PORT/ (this machine only; DEBUG is off)
  Celery worker log: $VAR/celery-worker.log
  Stop with Ctrl-C.

MSG
$PY manage.py runserver "$HOST:$PORT" --noreload
