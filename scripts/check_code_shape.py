#!/usr/bin/env python3
"""The code-shape rules `make lint` holds beside ruff and import-linter (and ``tests/test_architecture.py`` checks):

- no function or method above radon cyclomatic complexity 30 (split it into named steps);
- no module above 800 lines, migrations excepted (a module per concern);
- no module imports a ``_private`` name from another top-level package (if a protocol needs it, it is public API);
- the engine (``jobs/``) holds no protocol's vocabulary: no identifier or string names pairs, contexts, hypotheses,
  candidates or proposals.

Prints each violation with its file and line, and exits 1 when there is any. Standard library and radon only.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_COMPLEXITY = 30
MAX_LINES = 800
SKIP_PARTS = {".venv", "var", "staticfiles", "node_modules", "migrations", "__pycache__", ".git"}
#: What only a protocol talks about; the engine (jobs/) names none of it.
PROTOCOL_WORDS = re.compile(r"pair|context(?!manager)|hypothes|candidate|proposal", re.IGNORECASE)


def python_files(root: Path = ROOT) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        if not SKIP_PARTS & set(path.relative_to(root).parts):
            yield path


def complexity_problems(paths: list[Path]) -> list[str]:
    from radon.complexity import cc_visit

    out = []
    for path in paths:
        for block in cc_visit(path.read_text(encoding="utf-8")):
            items = [block, *getattr(block, "methods", [])]
            for item in items:
                if item.complexity > MAX_COMPLEXITY:
                    out.append(
                        f"{path.relative_to(ROOT)}:{item.lineno}: {item.name} has cyclomatic complexity {item.complexity} (at most {MAX_COMPLEXITY})"
                    )
    return out


def length_problems(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_LINES:
            out.append(f"{path.relative_to(ROOT)}: {lines} lines (at most {MAX_LINES}; split it by concern)")
    return out


def private_import_problems(paths: list[Path]) -> list[str]:
    """``from other_package... import _name`` (or from a ``_private`` module of another package)."""
    out = []
    for path in paths:
        top = path.relative_to(ROOT).parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if node.module.split(".")[0] == top:
                continue
            private_module = any(part.startswith("_") and not part.startswith("__") for part in node.module.split("."))
            for alias in node.names:
                if private_module or (alias.name.startswith("_") and not alias.name.startswith("__")):
                    out.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports the private {node.module}.{alias.name}")
    return out


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def vocabulary_problems(paths: list[Path]) -> list[str]:
    """Identifiers and strings (docstrings and comments aside) of the engine that speak a protocol's language."""
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstring_nodes(tree)
        for node in ast.walk(tree):
            words: list[str] = []
            if isinstance(node, ast.Name):
                words = [node.id]
            elif isinstance(node, ast.Attribute):
                words = [node.attr]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                words = [node.name]
            elif isinstance(node, ast.arg):
                words = [node.arg]
            elif isinstance(node, ast.keyword) and node.arg:
                words = [node.arg]
            elif isinstance(node, ast.alias):
                words = [node.name, node.asname or ""]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                words = [node.value]
            for word in words:
                found = PROTOCOL_WORDS.search(word)
                if found:
                    out.append(
                        f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}: the engine says {found.group()!r} ({word[:60]!r})"
                    )
    return out


def problems(root: Path = ROOT) -> list[str]:
    paths = list(python_files(root))
    engine = [p for p in paths if p.relative_to(root).parts[0] == "jobs"]
    return [
        *complexity_problems(paths),
        *length_problems(paths),
        *private_import_problems(paths),
        *vocabulary_problems(engine),
    ]


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} code-shape problem(s)", file=sys.stderr)
        return 1
    print("code shape: complexity, module length, private imports and the engine's vocabulary are as they should be")
    return 0


if __name__ == "__main__":
    sys.exit(main())
