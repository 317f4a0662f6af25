#!/usr/bin/env bash
# Runs the demo on the embedded defaults: SQLite, a filesystem Celery broker, one worker.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBUG="${DEBUG:-1}"
PY=.venv/bin/python
HOST="${DEMO_HOST:-127.0.0.1}"
PORT="${DEMO_PORT:-8000}"

$PY manage.py migrate --no-input -v0
$PY manage.py demo_setup
$PY manage.py demo_study || true

mkdir -p var
.venv/bin/celery -A lit2test_web worker --loglevel=INFO --concurrency=2 --pool=threads >var/celery-worker.log 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true' EXIT INT TERM

cat <<MSG

  Lit2Test Web is running at http://$HOST:$PORT/
  Celery worker log: var/celery-worker.log
  Stop with Ctrl-C.

MSG
$PY manage.py runserver "$HOST:$PORT" --noreload
