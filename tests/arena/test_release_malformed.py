"""A corpus of malformed release folders: each is refused with a message naming file, line and field,
by the command and by the dashboard upload, and nothing is written.

Every case starts from one small valid release (``base_release``) and breaks one thing. The kinds come
from issue 8 item 7 (values longer than their column, NUL, lone surrogates, NaN/Infinity, integers out of
range, a bad ``benchmark.json``, deep nesting, empty files, wrong types accepted before) plus our own
(invalid UTF-8 per line, public ids that could carry model names, unsafe URLs, JSON nested too deep for
the database encoder). Run it on PostgreSQL too: that is where NUL, lengths and integer ranges crash.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from lit2test.release import release_import
from tests.clients import client_for

from . import builders as b

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK = "benchmark.json"
CONTEXTS = "contexts.jsonl"
PROPOSALS = "proposals.jsonl"
FOLDED = "corrected_folded_pairs.jsonl"
JUDGMENTS = "judgments.jsonl"
PUBLIC_ID = "0123456789abcdef"

Files = dict[str, Any]  # file name -> list of records, one object (benchmark.json), str or bytes


def base_release() -> Files:
    """Every release file kind, valid: the corpus breaks one thing at a time in it."""
    files: Files = dict(b.small_release())
    files[BENCHMARK] = {
        "name": "corpus",
        "version": "1",
        "description": "a valid base",
        "verdict_rule": "ab-tie",
        "proposal_schema": "lit2test-six-field-v1",
        "orientation_seed": 7,
    }
    extra = {"run_label": "second-judge", "prompt_tokens": 1200, "completion_tokens": 300, "batch": "b1"}
    extra |= {"provider": "recorded", "is_canonical": False, "metadata": {"note": "kept"}, "pair_public_id": PUBLIC_ID}
    files[JUDGMENTS] = [
        b.judgment("ctx_001__v1", "Alpha 1", "Beta-2", "original", "A") | extra,
        b.judgment("ctx_001__v1", "Beta-2", "Alpha 1", "reverse", "B") | extra,
    ]
    return files


encode, write = b.encode, b.write


# --------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Case:
    id: str
    mutate: Callable[[Files], None]
    expected: str  # the problem line, or its beginning


def put(file: str, line: int, key: str, value: Any) -> Callable[[Files], None]:
    """Set ``key`` on the record of ``file`` at 1-based ``line``."""

    def mutate(files: Files) -> None:
        files[file][line - 1][key] = value

    return mutate


def put_paper(line: int, paper: int, key: str, value: Any) -> Callable[[Files], None]:
    def mutate(files: Files) -> None:
        files[CONTEXTS][line - 1]["papers"][paper][key] = value

    return mutate


def put_meta(key: str, value: Any) -> Callable[[Files], None]:
    def mutate(files: Files) -> None:
        files[BENCHMARK][key] = value

    return mutate


def replace_line(file: str, line: int, raw: bytes) -> Callable[[Files], None]:
    """Replace one line of a JSONL file by raw bytes."""

    def mutate(files: Files) -> None:
        lines = encode(files[file]).splitlines()
        lines[line - 1] = raw
        files[file] = b"\n".join(lines) + b"\n"

    return mutate


def text_edit(file: str, old: str, new: str) -> Callable[[Files], None]:
    def mutate(files: Files) -> None:
        text = encode(files[file]).decode()
        assert old in text
        files[file] = text.replace(old, new, 1)

    return mutate


def empty_every_file(content: str) -> Callable[[Files], None]:
    def mutate(files: Files) -> None:
        del files[BENCHMARK]
        for name in list(files):
            files[name] = content

    return mutate


def all_of(*mutations: Callable[[Files], None]) -> Callable[[Files], None]:
    def mutate(files: Files) -> None:
        for m in mutations:
            m(files)

    return mutate


def add_judgment(**overrides: Any) -> Callable[[Files], None]:
    def mutate(files: Files) -> None:
        files[JUDGMENTS].append(dict(files[JUDGMENTS][0]) | overrides)

    return mutate


LONG_URL = "https://example.org/" + "a" * 490
LONG_PAIR_ID = "ctx_001__v1__" + "x" * 500
TOO_MANY_PAPERS = [{"title": "t"}] * 32769
DEEP = {"a": 1}
for _ in range(200):
    DEEP = {"a": DEEP}
ALPHA_GAMMA = b.pair_id("ctx_001__v1", "Alpha 1", "Gamma-3")
FINITE = "must be a finite number, got"
TOKENS = "must be a whole number from 0 to 2147483647, got"
ATTEMPT = "must be a whole number from 1 to 32767, got"
SEED = "must be a whole number from -9223372036854775808 to 9223372036854775807, got"

CASES = [
    # Values longer than their column (issue 8: ids, model names, paper year, URL, confidence, public id).
    Case(
        "context-id-too-long",
        put(CONTEXTS, 1, "context_id", "c" * 301),
        f"{CONTEXTS}, line 1: context_id: has 301 characters; the limit is 300",
    ),
    Case(
        "model-name-too-long",
        put(PROPOSALS, 1, "model", "M" * 201),
        f"{PROPOSALS}, line 1: model: has 201 characters; the limit is 200",
    ),
    Case(
        "model-pair-name-too-long",
        put(FOLDED, 1, "model_pair", ["Alpha 1", "B" * 201]),
        f"{FOLDED}, line 1: model_pair[1]: has 201 characters; the limit is 200",
    ),
    Case(
        "system-a-too-long",
        put(JUDGMENTS, 1, "system_a", "A" * 201),
        f"{JUDGMENTS}, line 1: system_a: has 201 characters; the limit is 200",
    ),
    Case(
        "paper-year-too-long",
        put_paper(1, 1, "year", "2025-01-01T00:00"),
        f"{CONTEXTS}, line 1: papers[1].year: has 16 characters; the limit is 10",
    ),
    Case(
        "paper-url-too-long",
        put_paper(1, 0, "url", LONG_URL),
        f"{CONTEXTS}, line 1: papers[0].url: has 510 characters; the limit is 500",
    ),
    Case(
        "paper-id-too-long",
        put_paper(2, 3, "paper_id", "p" * 201),
        f"{CONTEXTS}, line 2: papers[3].paper_id: has 201 characters; the limit is 200",
    ),
    Case(
        "folded-confidence-too-long",
        put(FOLDED, 2, "gemini_original_confidence", "very very high"),
        f"{FOLDED}, line 2: gemini_original_confidence: has 14 characters; the limit is 10",
    ),
    Case(
        "judgment-confidence-too-long",
        put(JUDGMENTS, 1, "confidence", "very very high"),
        f"{JUDGMENTS}, line 1: confidence: has 14 characters; the limit is 10",
    ),
    Case(
        "pair-id-too-long",
        put(FOLDED, 3, "pair_id", LONG_PAIR_ID),
        f"{FOLDED}, line 3: pair_id: has {len(LONG_PAIR_ID)} characters; the limit is 500",
    ),
    Case(
        "public-id-too-long",
        put(JUDGMENTS, 1, "pair_public_id", "a" * 33),
        f"{JUDGMENTS}, line 1: pair_public_id: has 33 characters; the limit is 32",
    ),
    Case(
        "judge-model-too-long",
        put(JUDGMENTS, 2, "judge_model", "J" * 201),
        f"{JUDGMENTS}, line 2: judge_model: has 201 characters; the limit is 200",
    ),
    Case(
        "run-label-too-long",
        put(JUDGMENTS, 1, "run_label", "r" * 201),
        f"{JUDGMENTS}, line 1: run_label: has 201 characters; the limit is 200",
    ),
    Case(
        "prompt-version-too-long",
        put(JUDGMENTS, 1, "prompt_version", "v" * 51),
        f"{JUDGMENTS}, line 1: prompt_version: has 51 characters; the limit is 50",
    ),
    Case("batch-too-long", put(FOLDED, 4, "batch", "b" * 101), f"{FOLDED}, line 4: batch: has 101 characters; the limit is 100"),
    Case(
        "condition-too-long",
        put(CONTEXTS, 2, "condition", "k" * 101),
        f"{CONTEXTS}, line 2: condition: has 101 characters; the limit is 100",
    ),
    Case("benchmark-name-too-long", put_meta("name", "n" * 101), f"{BENCHMARK}: name: has 101 characters; the limit is 100"),
    # NUL characters (PostgreSQL refuses them in text and in jsonb) and lone surrogates.
    Case(
        "nul-in-context-text",
        put(CONTEXTS, 1, "research_context", "before\x00after"),
        f"{CONTEXTS}, line 1: research_context: contains a NUL character",
    ),
    Case(
        "nul-in-proposal-field",
        put(PROPOSALS, 3, "hypothesis", "H\x00"),
        f"{PROPOSALS}, line 3: hypothesis: contains a NUL character",
    ),
    Case("nul-in-model-name", put(PROPOSALS, 4, "model", "Alpha\x001"), f"{PROPOSALS}, line 4: model: contains a NUL character"),
    Case(
        "nul-in-metadata-key",
        put(CONTEXTS, 2, "pool_metadata", {"a\x00b": 1}),
        f"{CONTEXTS}, line 2: pool_metadata: key 'a\\x00b' contains a NUL character",
    ),
    Case(
        "nul-in-judgment-reason",
        put(JUDGMENTS, 1, "main_reason", "\x00"),
        f"{JUDGMENTS}, line 1: main_reason: contains a NUL character",
    ),
    Case(
        "surrogate-in-model-name",
        put(PROPOSALS, 2, "model", "Beta-\ud800"),
        f"{PROPOSALS}, line 2: model: contains a lone surrogate (\\ud800)",
    ),
    Case(
        "surrogate-in-paper-metadata",
        put_paper(1, 0, "rating_summary", {"note": "x\udc80"}),
        f"{CONTEXTS}, line 1: papers[0].rating_summary.note: contains a lone surrogate (\\udc80)",
    ),
    Case(
        "surrogate-in-winner",
        put(FOLDED, 6, "gemini_reverse_winner", "\udbff"),
        f"{FOLDED}, line 6: gemini_reverse_winner: contains a lone surrogate",
    ),
    # Numbers JSON does not have, and integers outside their column's range.
    Case(
        "nan-elapsed", put(JUDGMENTS, 1, "elapsed_seconds", float("nan")), f"{JUDGMENTS}, line 1: elapsed_seconds: {FINITE} NaN"
    ),
    Case(
        "infinity-in-metadata",
        put(JUDGMENTS, 2, "metadata", {"score": float("inf")}),
        f"{JUDGMENTS}, line 2: metadata.score: {FINITE} Infinity",
    ),
    Case(
        "minus-infinity-in-flags",
        put(PROPOSALS, 1, "lit2test_flags", {"x": float("-inf")}),
        f"{PROPOSALS}, line 1: lit2test_flags.x: {FINITE} -Infinity",
    ),
    Case(
        "overflowing-float",
        text_edit(JUDGMENTS, '"elapsed_seconds": 1.5', '"elapsed_seconds": 1e400'),
        f"{JUDGMENTS}, line 1: elapsed_seconds: {FINITE} Infinity",
    ),
    Case(
        "negative-elapsed",
        put(JUDGMENTS, 2, "elapsed_seconds", -1),
        f"{JUDGMENTS}, line 2: elapsed_seconds: must be 0 or more, got -1",
    ),
    Case("fractional-attempt", put(JUDGMENTS, 1, "attempt", 1.5), f"{JUDGMENTS}, line 1: attempt: {ATTEMPT} 1.5"),
    Case("negative-attempt", put(JUDGMENTS, 1, "attempt", -1), f"{JUDGMENTS}, line 1: attempt: {ATTEMPT} -1"),
    Case("zero-attempt", put(JUDGMENTS, 2, "attempt", 0), f"{JUDGMENTS}, line 2: attempt: {ATTEMPT} 0"),
    Case("huge-attempt", put(JUDGMENTS, 1, "attempt", 10**30), f"{JUDGMENTS}, line 1: attempt: {ATTEMPT} {10**30}"),
    Case("text-attempt", put(JUDGMENTS, 1, "attempt", "2"), f'{JUDGMENTS}, line 1: attempt: {ATTEMPT} "2"'),
    Case("negative-prompt-tokens", put(JUDGMENTS, 1, "prompt_tokens", -5), f"{JUDGMENTS}, line 1: prompt_tokens: {TOKENS} -5"),
    Case(
        "huge-prompt-tokens", put(JUDGMENTS, 2, "prompt_tokens", 10**30), f"{JUDGMENTS}, line 2: prompt_tokens: {TOKENS} {10**30}"
    ),
    Case(
        "boolean-completion-tokens",
        put(JUDGMENTS, 1, "completion_tokens", True),
        f"{JUDGMENTS}, line 1: completion_tokens: {TOKENS} true",
    ),
    Case(
        "number-with-5000-digits",
        text_edit(JUDGMENTS, '"attempt": 1,', '"attempt": ' + "9" * 5000 + ","),
        f"{JUDGMENTS}, line 1: invalid JSON (a number has too many digits)",
    ),
    Case(
        "too-many-papers",
        put(CONTEXTS, 1, "papers", TOO_MANY_PAPERS),
        f"{CONTEXTS}, line 1: papers: has 32769 papers; the limit is 32768",
    ),
    # benchmark.json
    Case("seed-not-an-integer", put_meta("orientation_seed", "abc"), f'{BENCHMARK}: orientation_seed: {SEED} "abc"'),
    Case("seed-fractional", put_meta("orientation_seed", 1.5), f"{BENCHMARK}: orientation_seed: {SEED} 1.5"),
    Case("seed-out-of-range", put_meta("orientation_seed", 2**63), f"{BENCHMARK}: orientation_seed: {SEED} {2**63}"),
    Case(
        "benchmark-json-array",
        lambda files: files.update({BENCHMARK: "[1, 2]"}),
        f"{BENCHMARK}: expected a JSON object, got array",
    ),
    Case(
        "benchmark-json-truncated",
        lambda files: files.update({BENCHMARK: '{\n  "name": "x",\n  "version": '}),
        f"{BENCHMARK}, line 3: invalid JSON",
    ),
    Case(
        "unknown-verdict-rule",
        put_meta("verdict_rule", "best-of-5"),
        f'{BENCHMARK}: verdict_rule: must be one of "ab-tie"; got "best-of-5"',
    ),
    Case("version-as-list", put_meta("version", ["1"]), f"{BENCHMARK}: version: must be text, got array"),
    # Structure: nesting, empty files, invalid UTF-8, types that used to slip through.
    Case(
        "deeply-nested-line",
        replace_line(JUDGMENTS, 2, b"[" * 100_000 + b"]" * 100_000),
        f"{JUDGMENTS}, line 2: invalid JSON (nested too deeply)",
    ),
    Case(  # Python's message ends in "at": the problem reads "starting at column 16", not "starting at at column"
        "unterminated-string",
        replace_line(PROPOSALS, 2, b'{"context_id": "ctx'),
        f"{PROPOSALS}, line 2: invalid JSON (Unterminated string starting at column 16); truncated line?",
    ),
    Case(
        "nested-metadata", put(JUDGMENTS, 1, "metadata", DEEP), f"{JUDGMENTS}, line 1: metadata: nested more than 64 levels deep"
    ),
    Case("all-files-empty", empty_every_file(""), "every release file is empty; nothing to import"),
    Case("all-files-blank", empty_every_file("\n  \n\n"), "every release file is empty; nothing to import"),
    Case(
        "invalid-utf8-line",
        replace_line(PROPOSALS, 3, b'{"context_id": "ctx_001__v1", "model": "Gamma-3\xff"}'),
        f"{PROPOSALS}, line 3: not UTF-8 text",
    ),
    Case(
        "invalid-utf8-benchmark",
        lambda files: files.update({BENCHMARK: b'{\n  "name": "caf\xe9"\n}'}),
        f"{BENCHMARK}, line 2: not UTF-8 text",
    ),
    Case("batch-as-list", put(JUDGMENTS, 1, "batch", ["b1"]), f"{JUDGMENTS}, line 1: batch: must be text, got array"),
    Case("schema-as-list", put(PROPOSALS, 1, "schema", ["x"]), f"{PROPOSALS}, line 1: schema: must be text, got array"),
    Case(
        "is-canonical-as-text",
        put(JUDGMENTS, 1, "is_canonical", "false"),
        f'{JUDGMENTS}, line 1: is_canonical: must be true or false, got "false"',
    ),
    Case(
        "unknown-provider",
        put(JUDGMENTS, 2, "provider", "openai"),
        f'{JUDGMENTS}, line 2: provider: must be one of "recorded", "openai_compatible"; got "openai"',
    ),
    Case(
        "paper-title-as-object",
        put_paper(1, 2, "title", {"en": "x"}),
        f"{CONTEXTS}, line 1: papers[2].title: must be text, got object",
    ),
    Case(
        "paper-abstract-as-list",
        put_paper(2, 1, "abstract", ["x"]),
        f"{CONTEXTS}, line 2: papers[1].abstract: must be text, got array",
    ),
    Case(
        "reason-as-object",
        put(JUDGMENTS, 1, "main_reason", {"why": "x"}),
        f"{JUDGMENTS}, line 1: main_reason: must be text, got object",
    ),
    Case(
        "metadata-as-list", put(JUDGMENTS, 2, "metadata", ["x"]), f"{JUDGMENTS}, line 2: metadata: must be an object, got array"
    ),
    Case(
        "judgment-source-as-object",
        put(FOLDED, 5, "reverse_judgment_source", {"x": 1}),
        f"{FOLDED}, line 5: reverse_judgment_source: must be text, got object",
    ),
    Case(
        "javascript-url",
        put_paper(2, 0, "url", "javascript:alert(1)"),
        f'{CONTEXTS}, line 2: papers[0].url: must be an http or https URL, got "javascript:alert(1)"',
    ),
    # Public ids leave the researcher side: they must be random hex, one per pair.
    Case(
        "public-id-names-models",
        all_of(
            put(JUDGMENTS, 1, "pair_public_id", "alpha1-vs-beta2-x"), put(JUDGMENTS, 2, "pair_public_id", "alpha1-vs-beta2-x")
        ),
        f"{JUDGMENTS}, line 1: pair_public_id: must be 16 to 32 lowercase hexadecimal characters",
    ),
    Case(
        "public-id-differs-within-a-pair",
        put(JUDGMENTS, 2, "pair_public_id", "fedcba9876543210"),
        f"{JUDGMENTS}, line 2: pair_public_id: differs from line 1 for the same pair",
    ),
    Case(
        "public-id-shared-by-two-pairs",
        add_judgment(pair_id=ALPHA_GAMMA, system_b="Gamma-3", winning_system="Alpha 1"),
        f'{JUDGMENTS}, line 3: pair_public_id: "{PUBLIC_ID}" is also the public id of another pair (line 1)',
    ),
]


def corpus_ids() -> list[str]:
    return [case.id for case in CASES]


def arena_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in apps.get_app_config("arena").get_models()}


def malformed_folder(tmp_path: Path, case: Case) -> Path:
    files = base_release()
    case.mutate(files)
    return write(tmp_path / case.id, files)


def upload(client: Client, folder: Path, **data: str):  # noqa: ANN201
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.iterdir())]
    return client.post(reverse("arena:dashboard"), {"files": files, "benchmark": "uploaded", "version": "1"} | data)


@pytest.fixture
def researcher_client(researcher) -> Client:  # noqa: ANN001
    return client_for(researcher)


def test_the_corpus_is_large_and_every_case_has_its_own_name() -> None:
    assert len(CASES) >= 40
    assert len(set(corpus_ids())) == len(CASES)


def test_the_base_release_is_valid_for_the_command(tmp_path: Path) -> None:
    call_command("import_lit2test", str(write(tmp_path, base_release())))
    counts = arena_counts()
    assert (counts["Benchmark"], counts["Proposal"], counts["OrderedJudgment"], counts["Paper"]) == (1, 6, 14, 8)


def test_the_base_release_is_valid_for_the_upload(tmp_path: Path, researcher_client: Client) -> None:
    response = upload(researcher_client, write(tmp_path, base_release()))
    assert response.status_code == 302
    assert arena_counts()["OrderedJudgment"] == 14


@pytest.mark.parametrize("case", CASES, ids=corpus_ids())
def test_the_command_refuses_the_malformed_folder_and_writes_nothing(case: Case, tmp_path: Path) -> None:
    folder = malformed_folder(tmp_path, case)
    with pytest.raises(CommandError) as caught:
        call_command("import_lit2test", str(folder))
    assert caught.value.returncode != 0
    message = str(caught.value)
    assert message.startswith("import failed, nothing was written")
    assert case.expected in message, f"{case.expected!r} not in:\n{message}"
    assert set(arena_counts().values()) == {0}


@pytest.mark.parametrize("case", CASES, ids=corpus_ids())
def test_the_upload_lists_the_problem_of_the_malformed_folder_and_writes_nothing(
    case: Case, tmp_path: Path, researcher_client: Client
) -> None:
    response = upload(researcher_client, malformed_folder(tmp_path, case))
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert case.expected in page, f"{case.expected!r} not in the page"
    assert set(arena_counts().values()) == {0}


def test_a_malformed_folder_changes_nothing_in_a_benchmark_that_holds_data(tmp_path: Path) -> None:
    release_import(directory=write(tmp_path / "first", base_release()))
    before = arena_counts()
    for case in CASES[::7]:
        with pytest.raises(CommandError, match="nothing was written"):
            call_command("import_lit2test", str(malformed_folder(tmp_path, case)))
        assert arena_counts() == before, case.id


def test_a_long_benchmark_name_on_the_command_line_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="benchmark: has 101 characters; the limit is 100"):
        call_command("import_lit2test", str(write(tmp_path, base_release())), "--benchmark", "x" * 101)
    with pytest.raises(CommandError, match="version: has 51 characters; the limit is 50"):
        call_command("import_lit2test", str(write(tmp_path, base_release())), "--version", "9" * 51)
    assert set(arena_counts().values()) == {0}


def test_an_upload_naming_one_file_twice_is_refused(tmp_path: Path, researcher_client: Client) -> None:
    folder = write(tmp_path, base_release())
    files = [SimpleUploadedFile(p.name, p.read_bytes()) for p in sorted(folder.iterdir())]
    files.append(SimpleUploadedFile("sub/" + PROPOSALS, encode(base_release()[PROPOSALS][:1])))
    response = researcher_client.post(reverse("arena:dashboard"), {"files": files, "benchmark": "b", "version": "1"})
    assert response.status_code == 200
    assert f"{PROPOSALS}: uploaded twice; upload each release file once" in html.unescape(response.content.decode())
    assert set(arena_counts().values()) == {0}


def test_an_upload_without_release_files_names_the_upload_not_the_servers_folder(researcher_client: Client) -> None:
    files = [SimpleUploadedFile("notes.txt", b"not a release")]
    response = researcher_client.post(reverse("arena:dashboard"), {"files": files, "benchmark": "b", "version": "1"})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200
    assert "the uploaded files: no release files found" in page
    assert tempfile.gettempdir() not in page
    assert set(arena_counts().values()) == {0}


def test_an_empty_release_file_beside_others_is_imported(tmp_path: Path, researcher_client: Client) -> None:
    """An export of a benchmark without a second judge has an empty judgments file; that is not an error."""
    files = base_release()
    files[JUDGMENTS] = ""
    response = upload(researcher_client, write(tmp_path, files))
    assert response.status_code == 302
    assert arena_counts()["OrderedJudgment"] == 12


def test_text_with_unicode_line_separators_a_bom_and_crlf_imports_intact(tmp_path: Path) -> None:
    files = base_release()
    files[PROPOSALS][0]["hypothesis"] = "first\u2028second\x85third\x0cfourth"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in files[PROPOSALS])
    files[PROPOSALS] = "\ufeff" + text
    release_import(directory=write(tmp_path, files))
    from arena.models import Proposal

    stored = Proposal.objects.get(participant__name="Alpha 1", context__external_id="ctx_001__v1")
    assert stored.content["hypothesis"] == "first\u2028second\x85third\x0cfourth"


def test_the_command_line_exits_1_with_the_problem_and_no_traceback(tmp_path: Path) -> None:
    """The real ``manage.py`` process, on its own SQLite database, for cases that used to crash."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL")}
    environment["LIT2TEST_VAR_DIR"] = str(tmp_path / "var")

    def manage(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
        )

    assert manage("migrate", "-v0").returncode == 0
    for case in (
        c for c in CASES if c.id in ("nul-in-proposal-field", "huge-attempt", "deeply-nested-line", "seed-not-an-integer")
    ):
        result = manage("import_lit2test", str(malformed_folder(tmp_path, case)))
        assert result.returncode == 1, case.id
        assert "Traceback" not in result.stderr and "CommandError: import failed, nothing was written" in result.stderr
        assert case.expected in result.stderr, case.id


def test_an_uploaded_zip_is_named_with_what_to_do(researcher_client: Client) -> None:
    """An import review of 2026-12-06: the dashboard's download is a zip, and uploading it said only "no release files
    found"."""
    files = [SimpleUploadedFile("lit2test-v1-export.zip", b"PK\x03\x04 not read")]
    response = researcher_client.post(reverse("arena:dashboard"), {"files": files, "benchmark": "b", "version": "1"})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200
    assert "lit2test-v1-export.zip: archives are not read; unzip them and upload the files inside" in page
    assert set(arena_counts().values()) == {0}
