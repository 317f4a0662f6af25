"""Redaction at import, on alias edits and through an export round trip (arena/blindness.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from django.core.management import call_command

from arena.aliases import AliasError
from arena.blindness import benchmark_redact, participant_aliases_update, proposal_blind_content
from arena.models import Benchmark, Participant, Proposal
from lit2test.release import release_export, release_import

from .selfnaming import INSERTS, SIX, write_self_naming_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def named(release_dir: Path, tmp_path: Path) -> Benchmark:
    return release_import(directory=write_self_naming_release(release_dir, tmp_path / "named")).benchmark


def _state() -> list[tuple]:
    return sorted(
        (p.context.external_id, p.participant.name, p.content, p.blind_content, p.redactions)
        for p in Proposal.objects.select_related("context", "participant")
    )


def test_self_identifications_are_redacted_at_import_and_recorded(named: Benchmark, release_dir: Path) -> None:
    proposals = list(Proposal.objects.filter(context__benchmark=named).select_related("participant"))
    assert len(proposals) == 52
    for p in proposals:
        inserts = INSERTS[p.participant.name]
        for field in SIX:
            if field in inserts:
                inserted, blind = inserts[field]
                assert p.content[field].startswith(inserted)  # the researcher keeps the text as received
                assert p.blind_content[field] == blind + p.content[field][len(inserted) :]
            else:
                assert p.blind_content[field] == p.content[field]
        assert proposal_blind_content(p) == p.blind_content
        assert {r["field"] for r in p.redactions} == set(inserts)
        for r in p.redactions:
            assert p.content[r["field"]][r["start"] : r["end"]] == r["text"]
    claude = next(p for p in proposals if p.participant.name == "Claude-Sonnet-4.6")
    assert [(r["field"], r["text"], r["owners"], r["self"]) for r in claude.redactions] == [
        ("hypothesis", "Claude", ["Claude-Sonnet-4.6"], True),
        ("hypothesis", "Anthropic", ["Claude-Sonnet-4.6"], True),
        ("hypothesis", "Sonnet", ["Claude-Sonnet-4.6"], True),
        ("falsifying_result", "claude sonnet 4 point 6", ["Claude-Sonnet-4.6"], True),
    ]
    gpt = next(p for p in proposals if p.participant.name == "GPT 5.2")
    assert [(r["text"], r["owners"], r["self"]) for r in gpt.redactions if r["field"] == "supporting_result"] == [
        ("Gemini 3.1 Pro", ["Gemini-3.1-Pro-Preview"], False)  # the judge, named by a participant
    ]
    deepseek = next(p for p in proposals if p.participant.name == "DeepSeek-V3.2")
    assert [(r["text"], r["owners"]) for r in deepseek.redactions if r["field"] == "decisive_metric"] == [
        ("GPT‑5", ["GPT 5.2"]),
        ("OpenAI", ["GPT 5.2"]),
        ("Deep-Seek", ["DeepSeek-V3.2"]),  # a competitor, then itself
    ]
    # Derived aliases are stored on the participants, marked as derived.
    glm = Participant.objects.get(benchmark=named, name="GLM-5")
    assert {"text": "zhipu", "mode": "word", "source": "derived"} in glm.aliases


def test_the_unmodified_sample_gets_no_redaction(imported: Benchmark) -> None:
    proposals = list(Proposal.objects.filter(context__benchmark=imported))
    assert [p.redactions for p in proposals] == [[]] * 52
    assert all(p.blind_content == p.content for p in proposals)


def test_importing_the_same_files_again_changes_nothing(named: Benchmark, release_dir: Path, tmp_path: Path) -> None:
    before = _state()
    summary = release_import(directory=tmp_path / "named")
    assert not any(summary.created.values())
    assert _state() == before


def test_export_then_import_into_an_empty_database_reproduces_text_and_redactions(named: Benchmark, tmp_path: Path) -> None:
    before = _state()
    release_export(benchmark=named, directory=tmp_path / "export")
    Benchmark.objects.all().delete()
    release_import(directory=tmp_path / "export")
    assert _state() == before
    assert sum(len(s[4]) for s in before) == 13 * 16  # every proposal kept its records (4 spans per model and context)


def test_a_researcher_alias_is_redacted_everywhere_at_once_and_removing_it_restores_the_text(imported: Benchmark) -> None:
    deepseek = Participant.objects.get(benchmark=imported, name="DeepSeek-V3.2")
    summary = participant_aliases_update(participant=deepseek, text="deep seek\nChatQA | proper")
    deepseek.refresh_from_db()
    assert deepseek.aliases == [
        {"text": "deep seek", "mode": "word", "source": "derived"},
        {"text": "ChatQA", "mode": "proper", "source": "researcher"},
    ]
    assert deepseek.aliases_reviewed_at is not None
    hit = list(Proposal.objects.filter(context__benchmark=imported).exclude(redactions=[]).select_related("participant"))
    found = Counter((p.participant.name, r["text"], tuple(r["owners"]), r["self"]) for p in hit for r in p.redactions)
    # Every "ChatQA" of the sample (counted by hand), with the version that follows it; a mention by another model is not "self".
    assert found == Counter(
        {
            ("DeepSeek-V3.2", "ChatQA 2", ("DeepSeek-V3.2",), True): 2,
            ("DeepSeek-V3.2", "ChatQA-2-70B", ("DeepSeek-V3.2",), True): 1,
            ("GLM-5", "ChatQA 2", ("DeepSeek-V3.2",), False): 2,
            ("GLM-5", "ChatQA-2-70B", ("DeepSeek-V3.2",), False): 1,
            ("GLM-5", "ChatQA-2", ("DeepSeek-V3.2",), False): 2,
            ("GPT 5.2", "ChatQA 2", ("DeepSeek-V3.2",), False): 1,
            ("GPT 5.2", "ChatQA-2", ("DeepSeek-V3.2",), False): 1,
        }
    )
    assert (summary.redacted, summary.spans) == (len(hit), 10)
    for p in hit:
        assert "ChatQA" not in str(p.blind_content) and "ChatQA" in str(p.content)

    participant_aliases_update(participant=deepseek, text="deep seek")
    assert not Proposal.objects.filter(context__benchmark=imported).exclude(redactions=[]).exists()
    assert all(p.blind_content == p.content for p in Proposal.objects.filter(context__benchmark=imported))


def test_bad_aliases_change_nothing(imported: Benchmark) -> None:
    glm = Participant.objects.get(benchmark=imported, name="GLM-5")
    before = (glm.aliases, glm.aliases_reviewed_at, _state())
    with pytest.raises(AliasError, match="line 2: 'x': an alias needs at least two letters"):
        participant_aliases_update(participant=glm, text="LooGLE\nx")
    glm.refresh_from_db()
    assert (glm.aliases, glm.aliases_reviewed_at, _state()) == before


def test_a_proposal_changed_after_its_scan_is_redacted_as_it_is_read(imported: Benchmark) -> None:
    proposal = Proposal.objects.filter(context__benchmark=imported).first()
    proposal.content = proposal.content | {"hypothesis": "I am Claude."}
    proposal.save()
    assert proposal_blind_content(proposal)["hypothesis"] == "I am [redacted]."
    assert proposal.blind_content["hypothesis"] != "I am [redacted]."  # stored before the change
    summary = benchmark_redact(benchmark=imported)
    assert summary.changed == 1 and summary.redacted == 1
    proposal.refresh_from_db()
    assert proposal.blind_content["hypothesis"] == "I am [redacted]."


def test_the_scan_command_reports_each_benchmark(imported: Benchmark, capsys: pytest.CaptureFixture[str]) -> None:
    call_command("blindness_scan")
    assert capsys.readouterr().out == "lit2test v1: scanned 52 proposals: 0 with redactions (0 spans); 0 updated\n"
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no benchmark named 'nope'"):
        call_command("blindness_scan", benchmark="nope")


def test_blind_text_made_by_an_older_reading_is_stale_until_scanned_again(imported: Benchmark) -> None:
    # A proposal scanned before look-alike letters were read as Latin: its stored blind text still shows "Сlaude" (a
    # Cyrillic Es), stored with the digest of that time (the content's JSON alone). Shown afresh, redacted; counted
    # stale; one scan stores the new reading.
    import hashlib
    import json

    from arena.blindness import benchmark_blindness

    proposal = Proposal.objects.filter(context__benchmark=imported).first()
    content = proposal.content | {"hypothesis": "I am \u0421laude."}
    old_digest = hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
    Proposal.objects.filter(pk=proposal.pk).update(content=content, blind_content=content, blind_digest=old_digest)
    proposal.refresh_from_db()
    assert proposal_blind_content(proposal)["hypothesis"] == "I am [redacted]."
    assert benchmark_blindness(benchmark=imported)["n_stale"] == 1
    assert benchmark_redact(benchmark=imported).changed == 1
    proposal.refresh_from_db()
    assert proposal.blind_content["hypothesis"] == "I am [redacted]."
    assert benchmark_blindness(benchmark=imported)["n_stale"] == 0
