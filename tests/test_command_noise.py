"""Commands print what they did and nothing else: no warning from the broker library on every launch.

kombu logged "No hostname was supplied. Reverting to default 'localhost'" whenever a command put a message
on the default filesystem broker, whose URL named no host. The real ``manage.py``, on the embedded defaults
(SQLite and the filesystem broker in a temporary folder), launches a replay run and must not print it.
"""

from __future__ import annotations

from pathlib import Path

from tests.arena import builders
from tests.test_project import manage


def test_launching_a_run_on_the_default_broker_prints_no_hostname_warning(tmp_path: Path) -> None:
    var = tmp_path / "var"
    env = {"LIT2TEST_VAR_DIR": str(var)}
    files = builders.small_release()
    # Texts that differ once model names are redacted, so that the orientation gate can tell A from B.
    for number, row in enumerate(files["proposals.jsonl"]):
        row |= {field: f"Proposal {number}: its {field}." for field in builders.SIX}
    release = builders.write(tmp_path / "release", files)
    for args in (("migrate", "-v0"), ("import_lit2test", str(release))):
        done = manage(*args, **env)
        assert done.returncode == 0, done.stdout + done.stderr

    # Run 1 is the imported release judge's; replaying it calls no endpoint and needs no worker to launch.
    launched = manage("run_judge", "lit2test", "--model", "Replay-Judge", "--replay-of", "1", "--pairs", "sample:1", **env)

    assert launched.returncode == 0, launched.stdout + launched.stderr
    assert launched.stdout.splitlines()[:2] == ["run: 2", "2 ordered tasks (replay of stored judgments)"]
    assert list((var / "celery-broker" / "queue").iterdir()), "the launch put its message on the filesystem broker"
    assert "hostname" not in (launched.stdout + launched.stderr).lower()
