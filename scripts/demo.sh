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

# Before anything else, so that nothing says the demo is running when it cannot be: the address must be free.
if [ -n "${DEMO_HOST:-}" ] && [ "$DEMO_HOST" != "$HOST" ]; then
  echo "DEMO_HOST is no longer read: the demo listens on $HOST only, because its accounts have a published" \
    "password. Unset DEMO_HOST; to serve other machines, deploy as README.md (\"Running on real services\") says." >&2
  exit 1
fi
$PY - "$HOST" "$PORT" <<'PY' || exit 1
import socket
import sys

host, port = sys.argv[1], sys.argv[2]
if not (port.isdigit() and 0 < int(port) < 65536):
    sys.exit(f"DEMO_PORT must be a port number from 1 to 65535, not {port!r}.")
with socket.socket() as probe:
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: closing connections do not count
    try:
        probe.bind((host, int(port)))
    except OSError as exc:
        sys.exit(
            f"Cannot start the demo: {host}:{port} is not free ({exc.strerror}); another demo or server may hold it.\n"
            f"Set DEMO_PORT to a free port, e.g. DEMO_PORT={int(port) % 65535 + 1} make demo"
        )
PY

mkdir -p "$VAR"
if [ ! -s "$VAR/secret_key" ]; then
  (umask 077 && $PY -c 'import secrets; print(secrets.token_urlsafe(50))' >"$VAR/secret_key")
fi
export DEBUG=0 SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0 SECURE_HSTS_SECONDS=0

$PY manage.py migrate --no-input -v0
$PY manage.py collectstatic --no-input -v0
$PY manage.py demo_setup
$PY manage.py demo_hypoarena || true  # the synthetic HypoArena benchmark (hypoarena/demo.py); a second start adds nothing
$PY manage.py demo_reconstruction || true  # the synthetic Reconstruction benchmark (reconstruction/demo.py); a second start adds nothing
$PY manage.py demo_intrinsic || true  # the synthetic Intrinsic-scoring benchmark (intrinsic/demo.py: drawn scores, no model); a second start adds nothing
# The demo's practice and formal rounds for annotator1..3, and a study on the same items labelled by synthetic accounts
# with a word-count rule (annotation/demo.py: demo data, NOT human judgments), so that the study page's agreement figures
# and the leaderboard's Human WR column have content before anyone annotates.
$PY manage.py demo_study --synthetic-labels || true
# Template-made diagnostic controls (no language model needed) for the review page; a second start adds nothing.
# Subtle and sham come from the reserve templates here (--templates-only); with a model they are written by it.
$PY manage.py generate_controls lit2test --kinds clear,rendering,falsifier_off,naive --contexts 4 --seed 0 || true
$PY manage.py generate_controls lit2test --kinds subtle,sham --templates-only --contexts 4 --seed 0 || true
# Controls runs for the Controls page, by a word-count heuristic that is NOT a language model (controls/demo.py), and a replay.
$PY manage.py demo_controls lit2test || true

.venv/bin/celery -A lit2test_web worker --loglevel=INFO --concurrency=2 --pool=threads >"$VAR/celery-worker.log" 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null || true' EXIT INT TERM

# The scripted scorer endpoint (intrinsic/demo_endpoint.py: a deterministic toy, NOT a language model) and one real
# Intrinsic scoring run against it on the 12 papers of intrinsic-demo-live, driven by the worker above.
SCORER_PORT="${DEMO_SCORER_PORT:-$((PORT + 11))}"
if $PY -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1])))" "$SCORER_PORT" 2>/dev/null; then
  $PY manage.py intrinsic_demo_endpoint --port "$SCORER_PORT" >"$VAR/demo-scorer.log" 2>&1 &
  SCORER=$!
  trap 'kill $WORKER $SCORER 2>/dev/null || true' EXIT INT TERM
  sleep 1
  $PY manage.py intrinsic_score intrinsic-demo-live --model demo-toy-lm --criterion nll --logprobs-mode raw_logprobs \
    --base-url "http://127.0.0.1:$SCORER_PORT/v1" >>"$VAR/demo-scorer.log" 2>&1 || true
else
  echo "The demo scorer endpoint's port $SCORER_PORT is taken: no live scoring run this time (set DEMO_SCORER_PORT)." >&2
fi

cat <<MSG

  Lit2Test Web is running at http://$HOST:$PORT/ (this machine only; DEBUG is off)
  Celery worker log: $VAR/celery-worker.log
  Stop with Ctrl-C.

MSG
$PY manage.py runserver "$HOST:$PORT" --noreload
