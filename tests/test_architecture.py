"""The platform's shape, held by tests as well as by ``make lint``: layers (import-linter), code shape (complexity,
module length, private imports, the engine's vocabulary; ``scripts/check_code_shape.py``), no protocol named below
the protocol apps, and a ``manage.py check`` that loads no statistics library."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _checker():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("check_code_shape", ROOT / "scripts" / "check_code_shape.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tree_keeps_its_code_shape() -> None:
    assert _checker().problems() == []


def test_the_code_shape_check_finds_each_kind_of_problem(tmp_path: Path) -> None:
    checker = _checker()
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "engine.py").write_text("def claim(pair_id: int) -> int:\n    return pair_id\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "long.py").write_text("x = 1\n" * 801)
    (tmp_path / "other" / "private.py").write_text("from jobs.engine import _hidden\n")
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(31))
    (tmp_path / "other" / "branchy.py").write_text(f"def f(x: int) -> int:\n{branches}    return -1\n")
    checker.ROOT = tmp_path
    found = "\n".join(checker.problems(tmp_path))
    assert "other/branchy.py:1: f has cyclomatic complexity 32 (at most 30)" in found
    assert "other/long.py: 801 lines (at most 800" in found
    assert "other/private.py:1: imports the private jobs.engine._hidden" in found
    assert "jobs/engine.py:1: the engine says 'pair'" in found


def test_the_layers_hold() -> None:
    result = subprocess.run([str(Path(sys.executable).parent / "lint-imports")], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def _strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_module_of_arena_or_jobs_names_a_protocol_or_its_kinds() -> None:
    """The names the protocol apps register (protocols, judging task kinds, run kinds) appear in no string literal of
    the shared layers. The one name arena owns is ``pairs``: the subjects of its own canonical pairs (and the name of
    their relation), defined once as ``arena.models.PAIRS``."""
    from arena.models import PAIRS
    from arena.protocols import judge_subjects, protocols
    from jobs.kinds import run_kinds
    from jobs.models import RunKind

    names = {*protocols.names(), *judge_subjects.names(), *(set(run_kinds.names()) - set(RunKind.values))} - {PAIRS}
    assert {"lit2test", "hypoarena", "controls", "toy_protocol", "generation", "intrinsic_scoring"} <= names
    # The pure statistics speak their documents' own words ("controls" of a Reconstruction report are its oracle
    # controls): there only the names of the benchmark protocols count.
    benchmark_names = {p.name for p in protocols.values() if p.holds_benchmarks}
    found = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for package in ("arena", "jobs")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for watched in [benchmark_names if "stats" in path.parts else names]
        for line, value in _strings(path)
        if value in watched or any(re.fullmatch(rf"{re.escape(n)}[:.\s].*", value, re.S) for n in watched)
    ]
    assert found == []
    owners = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in ("arena", "jobs")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts and "stats" not in path.parts
        for line, value in _strings(path)
        if value == PAIRS
    ]
    assert [o.split(":")[0] for o in owners] == ["arena/models.py"] * len(owners)


@pytest.mark.parametrize("command", ["check"])
def test_manage_py_check_imports_no_scipy_or_pandas(command: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE",)} | {"DEBUG": "1"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "manage.py", command], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "django.urls" in imported and "arena.protocols" in imported  # the URLconf and the apps were loaded
    heavy = sorted(name for name in imported if name.split(".")[0] in ("scipy", "pandas"))
    assert heavy == []


def test_no_public_statistic_shares_its_name_with_a_module_of_the_package() -> None:
    """``arena.stats`` loads its modules lazily; a module named like one of the functions it exports would replace
    that function on the package once the module is imported (``from arena.stats import x`` would give the module)."""
    import arena.stats

    modules = {path.stem for path in (ROOT / "arena" / "stats").glob("*.py")}
    assert set(arena.stats.__all__) & modules == set()
    assert all(callable(getattr(arena.stats, name)) or not name[0].islower() for name in arena.stats.__all__)
