"""Reconstruction runs on the shared engine against the scripted endpoint (tests/fake_llm): proposer runs (exactly five
hypotheses citing existing anonymous ids, at most two retries, then invalid), match-judge runs with recusal and
several judges, and a Swiss selection judged round by round as runs, with faults injected, then the report. Every
figure is checked against values worked out by hand from the scripted answers (or, for the champions, against the
pure tournament of arena.stats.swiss played with the same votes).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.models import Benchmark, JudgeRun
from arena.stats.swiss import swiss_tournament
from jobs.elicitation import elicit_resume
from jobs.services import JudgeRunRequest, RunError, judge_run_create, judge_run_launch, judge_run_resume
from reconstruction.importing import reconstruction_import
from reconstruction.judging import parse_match_answer, parse_swiss_answer, swiss_winner
from reconstruction.models import (
    Hypothesis,
    MatchJudgment,
    MatchLabel,
    ProposerTask,
    Reference,
    SeedPaper,
    SwissMatch,
    SwissSelection,
    SwissTournament,
    SwissVote,
)
from reconstruction.runs import KIND, answer_problems, proposer_run_create, proposer_run_launch
from reconstruction.swiss import selection_advance, selection_create, tournament_seed

from . import helpers as h

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]

PROPOSERS = {"Alpha": "alpha", "Beta": "beta", "Gamma": "gamma", "Epsilon": "epsilon"}
# The Swiss judges' preference (both judges alike): a higher number wins its match.
STRENGTH = {"Alpha": 3, "Gamma": 2, "Beta": 1}
# What a proposer's texts say instead of its name: a name inside a hypothesis is redacted before any judge sees it.
CODE = {"Alpha": "kiwi", "Beta": "plum", "Gamma": "pear", "Epsilon": "fig", "X": "yam", "Y": "oat", "M": "rye"}
FAULTS = [
    {"attempts": [1], "status": 500, "retry_after": 0.01},
    {"attempts": [2], "status": 429, "retry_after": 0.01},
]


def make_benchmark(tmp_path: Path) -> Benchmark:
    """helpers' leaky bibliography: s1 is frozen with its eligible references; s2 has too few and is not."""
    reconstruction_import(
        name="recon-runs",
        files={
            "seeds": h.write(tmp_path / "seeds.jsonl", h.seeds()),
            "references": h.write(tmp_path / "references.jsonl", h.references()),
        },
    )
    return Benchmark.objects.get(name="recon-runs")


def five(model: str, cites: list[str]) -> dict[str, Any]:
    return {
        "hypotheses": [
            {"title": f"{CODE[model]} idea {k}", "summary": f"{CODE[model]} mechanism number {k} for the films.", "cites": cites}
            for k in range(1, 6)
        ]
    }


def texts(log: list[dict[str, Any]]) -> list[str]:
    return ["\n".join(m["content"] for m in entry["messages"]) for entry in log if entry.get("messages")]


def swiss_rules(judge: str) -> list[dict[str, Any]]:
    """Per slot and ordered pair of proposers: the stronger one wins, whichever label it has."""
    rules = []
    for k in range(1, 6):
        for a in STRENGTH:
            for b in STRENGTH:
                if a != b:
                    winner = "A" if STRENGTH[a] > STRENGTH[b] else "B"
                    rules.append(
                        {
                            "model": judge,
                            "contains": [
                                f"=== HYPOTHESIS A ===\nTitle: {CODE[a]} idea {k}\n",
                                f"=== HYPOTHESIS B ===\nTitle: {CODE[b]} idea {k}\n",
                            ],
                            "answers": [{"winner": winner, "reason": f"{judge} prefers the stronger"}],
                        }
                    )
    return rules


def match_rules(judge: str, matches: set[tuple[str, int]]) -> list[dict[str, Any]]:
    return [
        {
            "model": judge,
            "contains": f"Title: {CODE[m]} idea {k}\n",
            "answers": [{"label": "match" if (m, k) in matches else "no_match", "reason": f"{judge} scripted"}],
        }
        for m in (*STRENGTH, "Epsilon")
        for k in range(1, 6)
    ]


def match_run(benchmark: Benchmark, fake: Any, judge: str, family: str, select: str = "all") -> JudgeRun:  # noqa: ANN401
    run, _ = judge_run_create(
        request=JudgeRunRequest(
            benchmark=benchmark,
            judge_model=judge,
            base_url=fake.base_url,
            task_kind="reconstruction_match",
            run_type="match",
            select=select,
            options={"judge_family": family},
            concurrency=4,
            timeout=5,
        )
    )
    judge_run_launch(run=run)
    run.refresh_from_db()
    return run


def _s1_citations(benchmark: Benchmark) -> tuple[SeedPaper, list[str], str]:
    """s1, two of its eligible anonymous ids to cite, and an id of s1 that exists but is not eligible."""
    s1 = SeedPaper.objects.get(benchmark=benchmark, external_id="s1")
    known = set(Reference.objects.filter(seed=s1, eligible=True).values_list("anon_id", flat=True))
    assert len(known) >= 3
    cite = sorted(known)[:2]
    unknown = next(
        f"R{i}"
        for i in range(1, 50)
        if f"R{i}" not in known and f"R{i}" in {r.anon_id for r in Reference.objects.filter(seed=s1)}
    )
    return s1, cite, unknown


def _script_proposers(fake_llm: Any, cite: list[str], unknown: str) -> None:  # noqa: ANN401
    """Alpha cites an excluded id first; Gamma needs both retries; Epsilon gives four hypotheses every time."""
    fake_llm.script(
        failures=FAULTS,
        replies=[
            {"model": "Alpha", "contains": "=== BIBLIOGRAPHY ===", "answers": [five("Alpha", [unknown]), five("Alpha", cite)]},
            {"model": "Beta", "contains": "=== BIBLIOGRAPHY ===", "answers": [five("Beta", cite)]},
            {
                "model": "Gamma",
                "contains": "=== BIBLIOGRAPHY ===",
                "answers": [
                    {"hypotheses": five("Gamma", cite)["hypotheses"][:4]},
                    {"hypotheses": five("Gamma", cite)["hypotheses"][:4] + five("Gamma", cite)["hypotheses"][:1]},
                    five("Gamma", cite),
                ],
            },
            {
                "model": "Epsilon",
                "contains": "=== BIBLIOGRAPHY ===",
                "answers": [{"hypotheses": five("Epsilon", cite)["hypotheses"][:4]}],
            },
        ],
    )


def _run_proposers(benchmark: Benchmark, fake_llm: Any) -> Any:  # noqa: ANN401
    """The proposer run asks the four proposers about s1 only and completes."""
    run = proposer_run_create(
        benchmark=benchmark, base_url=fake_llm.base_url, proposers=list(PROPOSERS), families=PROPOSERS, timeout=5
    )
    assert run.parameters["unfrozen_skipped"] == 1  # s2: too few eligible references, never frozen, never asked
    assert run.tasks.count() == 4
    proposer_run_launch(run=run)
    run.refresh_from_db()
    assert run.status == "completed"
    return run


def _check_stored_hypotheses(s1: SeedPaper, cite: list[str]) -> None:
    """Alpha, Beta and Gamma each have their five hypotheses stored; Epsilon, never valid, has none."""
    for model in ("Alpha", "Beta", "Gamma"):
        rows = list(Hypothesis.objects.filter(seed=s1, participant__name=model).order_by("slot"))
        assert [(r.slot, r.title, r.cited, r.family) for r in rows] == [
            (k, f"{CODE[model]} idea {k}", sorted(cite, key=lambda c: (len(c), c)), PROPOSERS[model]) for k in range(1, 6)
        ]
    assert not Hypothesis.objects.filter(participant__name="Epsilon").exists()


def _check_proposer_attempts(run: Any) -> None:  # noqa: ANN401
    """Each task's attempts record the problems that caused its retries, and the injected faults were retried."""
    tasks = {t.participant.name: t for t in ProposerTask.objects.filter(run=run).select_related("participant")}
    assert [bool(a["problems"]) for a in tasks["Alpha"].attempts] == [True, False]
    assert tasks["Alpha"].attempts[0]["problems"][0]["code"] == "unknown_id"
    assert [a["problems"][0]["code"] if a["problems"] else None for a in tasks["Gamma"].attempts] == ["count", "duplicate", None]
    assert tasks["Epsilon"].status == "done" and tasks["Epsilon"].last_error.startswith("invalid: hypotheses: has 4 entries")
    assert len(tasks["Epsilon"].attempts) == 3
    assert sum(t.failed_calls for t in tasks.values()) >= 2  # the injected 500s and 429s were met, recorded and retried through


def _check_proposer_prompts(benchmark: Benchmark, fake_llm: Any, unknown: str) -> None:  # noqa: ANN401
    """One prompt per answer; no prompt gives away the seed, a DOI/URL, an original id or a proposer's name."""
    proposer_prompts = texts(fake_llm.log())
    asked = {(entry.get("model"), text) for entry in fake_llm.log() for text in texts([entry])}
    assert len(asked) == 2 + 1 + 3 + 3  # per proposer, one prompt per answer (the log also holds the failed calls)
    originals = set(Reference.objects.filter(seed__benchmark=benchmark).values_list("original_id", flat=True))
    for prompt in proposer_prompts:
        assert h.SEED_TITLE not in prompt and h.SEED_ABSTRACT[:60] not in prompt
        assert not re.search(r"10\.\d{4,}/|doi|https?://", prompt, re.IGNORECASE)
        assert not any(re.search(rf"\b{re.escape(o)}\b", prompt) for o in originals)
        if "could not be used" not in prompt:  # a retry repeats the proposer's own answer back to it, nothing more
            assert not any(name in prompt for name in PROPOSERS)
    retry = next(text for model, text in asked if model == "Alpha" and "could not be used" in text)
    assert unknown in retry and "not in this bibliography" in retry


def _run_match_judges(benchmark: Benchmark, fake_llm: Any, matched: set[tuple[str, int]]) -> JudgeRun:  # noqa: ANN401
    """J-alpha and J-delta match-judge every hypothesis (faults injected); returns J-alpha's run."""
    fake_llm.script(failures=FAULTS, replies=match_rules("J-alpha", matched) + match_rules("J-delta", matched | {("Beta", 3)}))
    ja = match_run(benchmark, fake_llm, "J-alpha", "alpha")
    jd = match_run(benchmark, fake_llm, "J-delta", "delta")
    assert ja.status == jd.status == "completed"
    return ja


def _check_recusal(ja: JudgeRun, fake_llm: Any) -> None:  # noqa: ANN401
    """J-alpha never saw Alpha's hypotheses (recorded as recused); match judges read the seed but no proposer name."""
    judged_by_alpha = {
        (j.hypothesis.participant.name, j.hypothesis.slot)
        for j in MatchJudgment.objects.filter(run=ja).select_related("hypothesis__participant")
    }
    assert judged_by_alpha == {(m, k) for m in ("Beta", "Gamma") for k in range(1, 6)}
    recused = MatchLabel.objects.filter(source=ja.label, recused=True)
    assert recused.count() == 5 and set(recused.values_list("label", flat=True)) == {None}
    assert all("Title: kiwi idea" not in p for entry in fake_llm.log() if entry.get("model") == "J-alpha" for p in texts([entry]))
    for prompt in texts(fake_llm.log()):
        assert h.SEED_TITLE in prompt  # a match judge reads the held-out seed ...
        assert not any(name in prompt for name in PROPOSERS)  # ... but never who proposed the hypothesis


def _create_swiss_selection(benchmark: Benchmark, fake_llm: Any) -> SwissSelection:  # noqa: ANN401
    """The selection is created with J-delta failing throughout, so it waits in round 1."""
    fake_llm.script(
        failures=[{"model": "J-delta", "status": 500, "retry_after": 0.01}],
        replies=swiss_rules("J-alpha") + swiss_rules("J-delta"),
    )
    selection = selection_create(
        benchmark=benchmark,
        name="Swiss-ABG",
        proposers=["Alpha", "Beta", "Gamma"],
        seed=3,
        base_url=fake_llm.base_url,
        timeout=5,
        judges=[{"model": "J-alpha", "family": "alpha"}, {"model": "J-delta", "family": "delta"}],
    )
    assert selection.status == SwissSelection.Status.WAITING and selection.round == 1
    return selection


def _check_first_round_waits(benchmark: Benchmark, selection: SwissSelection) -> dict[str, JudgeRun]:
    """Round 1's J-delta run failed: no round 2 yet, and the status command says why; returns round 1's runs."""
    round_1 = {r.judge_model: r for r in JudgeRun.objects.filter(subjects="reconstruction_swiss", parameters__options__round=1)}
    assert {m: r.status for m, r in round_1.items()} == {"J-alpha": "completed", "J-delta": "failed"}
    assert not SwissMatch.objects.filter(round=2).exists()  # the next round waits for every run of this one
    with pytest.raises(CommandError, match=f"waits: round run.s. {round_1['J-delta'].pk} ended"):
        call_command("reconstruction_swiss", str(benchmark.pk), "--status", str(selection.pk), stdout=io.StringIO())
    return round_1


def _resume_first_round(fake_llm: Any, selection: SwissSelection, round_1: dict[str, JudgeRun]) -> None:  # noqa: ANN401
    """Resuming the failed run (endpoint healthy again) lets the selection complete; advancing again does nothing."""
    fake_llm.script(failures=FAULTS, replies=swiss_rules("J-alpha") + swiss_rules("J-delta"))
    judge_run_resume(run=round_1["J-delta"])
    selection.refresh_from_db()
    assert selection.status == SwissSelection.Status.COMPLETED
    assert selection_advance(selection_id=selection.pk) == "completed"  # idempotent: nothing more happens


def _check_swiss_pairings(matches: list[SwissMatch]) -> None:
    """Two rounds, one bye per round to two different candidates, and no rematch."""
    assert sum(m.b_id is None for m in matches) == 2  # one bye per round, to two different candidates
    assert len({m.a_id for m in matches if m.b_id is None}) == 2
    pairs = [frozenset((m.a_id, m.b_id)) for m in matches if m.b_id]
    assert len(pairs) == len(set(pairs)) == 2  # no rematch


def _check_swiss_votes(matches: list[SwissMatch], name_of: dict[int, str], family_of: dict[int, str]) -> None:
    """Every played match has both orders from each non-recused judge, all for the stronger proposer."""
    for m in matches:
        if m.b_id is None:
            continue
        votes = list(SwissVote.objects.filter(match=m, status="accepted"))
        judges = {"J-alpha", "J-delta"} - ({"J-alpha"} if "alpha" in (family_of[m.a_id], family_of[m.b_id]) else set())
        assert {(v.judge, v.order) for v in votes} == {(j, o) for j in judges for o in ("original", "reverse")}
        stronger = max((m.a_id, m.b_id), key=lambda c: STRENGTH[name_of[c]])
        assert {("a" if stronger == m.a_id else "b")} == {v.winner for v in votes}


def _check_against_pure_tournament(
    selection: SwissSelection, t: SwissTournament, name_of: dict[int, str], family_of: dict[int, str]
) -> None:
    """The pure tournament, played with the same judges' votes, crowns the same champion with the same standings."""

    def judge_match(a: int, b: int) -> tuple[float, float]:
        n = 2 * (1 if "alpha" in (family_of[a], family_of[b]) else 2)
        return (float(n), 0.0) if STRENGTH[name_of[a]] > STRENGTH[name_of[b]] else (0.0, float(n))

    pure = swiss_tournament(t.candidates, judge_match, seed=tournament_seed(selection, t))
    assert t.champion_id == pure["champion"]
    assert [(r["candidate"], r["points"]) for r in t.standings] == [(r["candidate"], r["points"]) for r in pure["standings"]]
    champion = Hypothesis.objects.get(participant__name="Swiss-ABG", seed=t.seed_paper, slot=t.slot)
    assert champion.origin_id == t.champion_id and champion.family == family_of[t.champion_id]


def _check_tournaments(selection: SwissSelection) -> None:
    """One tournament per slot, each with sound pairings, votes and a champion stored as the selection's hypothesis."""
    tournaments = list(SwissTournament.objects.filter(selection=selection).select_related("seed_paper"))
    assert len(tournaments) == 5
    name_of = {h_.pk: h_.participant.name for h_ in Hypothesis.objects.select_related("participant")}
    family_of = {h_.pk: h_.family for h_ in Hypothesis.objects.all()}
    for t in tournaments:
        matches = list(SwissMatch.objects.filter(tournament=t))
        assert t.rounds == 2 and {m.round for m in matches} == {1, 2}
        _check_swiss_pairings(matches)
        _check_swiss_votes(matches, name_of, family_of)
        _check_against_pure_tournament(selection, t, name_of, family_of)


def _check_swiss_prompts(fake_llm: Any) -> None:  # noqa: ANN401
    """Swiss judges never read the seed or a proposer's name."""
    swiss_prompts = texts(fake_llm.log())
    assert swiss_prompts and not any(h.SEED_TITLE in p or h.SEED_ABSTRACT[:60] in p for p in swiss_prompts)
    assert not any(name in p for p in swiss_prompts for name in PROPOSERS)


def _match_judge_champions(benchmark: Benchmark, fake_llm: Any, matched: set[tuple[str, int]]) -> None:  # noqa: ANN401
    """J-delta match-judges the selection's champions like any proposer's five."""
    fake_llm.script(replies=match_rules("J-delta", matched))
    champs = match_run(benchmark, fake_llm, "J-delta", "delta", select="system:Swiss-ABG")
    assert champs.status == "completed"


def _check_report(benchmark: Benchmark) -> None:
    """The report carries the selection system, counts Epsilon's excluded case, and Alpha's match rate is J-delta's."""
    out = io.StringIO()
    call_command("reconstruction_report", str(benchmark.pk), "--json", "--replicates", "200", stdout=out)
    report = json.loads(out.getvalue())
    assert "Swiss-ABG" in report["systems"]
    assert report["labels"]["excluded_cases"] == {"Epsilon": 1}  # its answer stayed invalid: the case is out, and counted
    # With J-alpha recused on Alpha's hypotheses, Alpha's labels are J-delta's alone: slots 1 and 2 match of 5.
    alpha = next(r for r in report["rates"] if r["system"] == "Alpha" and r["domain"] == "all")
    assert alpha["match_rate"] == pytest.approx(2 / 5)


def test_a_full_reconstruction_cycle_against_the_scripted_endpoint(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    s1, cite, unknown = _s1_citations(benchmark)

    # 1. Proposers. Alpha first cites a reference that exists but was excluded (the same-day one, say): asked again
    #    with the problem; Gamma first gives four hypotheses, then a duplicate, then five good ones (the last retry);
    #    Epsilon gives four every time: invalid after three answers, nothing stored. Faults before every first call.
    _script_proposers(fake_llm, cite, unknown)
    run = _run_proposers(benchmark, fake_llm)
    _check_stored_hypotheses(s1, cite)
    _check_proposer_attempts(run)
    _check_proposer_prompts(benchmark, fake_llm, unknown)

    # 2. Match judging with recusal: J-alpha (family alpha) never gets Alpha's hypotheses; they are recorded recused.
    matched = {("Alpha", 1), ("Alpha", 2), ("Gamma", 1)}
    ja = _run_match_judges(benchmark, fake_llm, matched)
    _check_recusal(ja, fake_llm)

    # 3. Swiss selection among Alpha, Beta, Gamma (n = 3: two rounds, a bye each round) by J-alpha and J-delta. The first
    #    round's J-delta run fails (the endpoint errors throughout for it): the selection waits; resumed, it goes on.
    selection = _create_swiss_selection(benchmark, fake_llm)
    round_1 = _check_first_round_waits(benchmark, selection)
    _resume_first_round(fake_llm, selection, round_1)
    _check_tournaments(selection)
    _check_swiss_prompts(fake_llm)

    # 4. The champions are match-judged like any proposer's five (J-delta), and the report carries the selection system.
    _match_judge_champions(benchmark, fake_llm, matched)
    _check_report(benchmark)


def test_proposer_answers_are_checked_strictly() -> None:
    known = {"R1", "R2", "R3"}
    good = five("M", ["R1"])
    assert answer_problems(json.dumps(good), known_ids=known)[1] == []
    assert [p["code"] for p in answer_problems("five ideas", known_ids=known)[1]] == ["not_json"]
    bad = json.loads(json.dumps(good))
    bad["hypotheses"][2]["cites"] = []
    bad["hypotheses"][3]["title"] = " "
    bad["hypotheses"][4]["cites"] = ["R9"]
    codes = [(p["field"], p["code"]) for p in answer_problems(json.dumps(bad), known_ids=known)[1]]
    assert codes == [("hypotheses[3].cites", "empty"), ("hypotheses[4].title", "empty"), ("hypotheses[5].cites", "unknown_id")]
    six = {"hypotheses": good["hypotheses"] + good["hypotheses"][:1]}
    assert answer_problems(json.dumps(six), known_ids=known)[1][0]["code"] == "count"


def test_judge_answers_are_parsed_strictly_and_swiss_winners_follow_the_order() -> None:
    assert parse_match_answer('{"label": "No-match", "reason": "other idea"}') == ("no_match", "other idea")
    assert parse_match_answer('{"label": "match", "reason": "same"}') == ("match", "same")
    for bad in ('{"label": "maybe", "reason": "x"}', '{"label": "match"}', "Match."):
        with pytest.raises(Exception):  # noqa: B017, PT011 - ParseError or its JSON error, both refused
            parse_match_answer(bad)
    assert parse_swiss_answer('{"winner": "b", "reason": "x"}') == ("B", "x")
    with pytest.raises(Exception):  # noqa: B017, PT011
        parse_swiss_answer('{"winner": "C", "reason": "x"}')
    assert [
        swiss_winner(v, o)
        for v, o in (("A", "original"), ("B", "original"), ("A", "reverse"), ("B", "reverse"), ("TIE", "reverse"))
    ] == ["a", "b", "b", "a", "tie"]


def test_runs_refuse_what_they_cannot_do(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    with pytest.raises(RunError, match="judge-family"):
        judge_run_create(
            request=JudgeRunRequest(
                benchmark=benchmark,
                judge_model="J",
                base_url=fake_llm.base_url,
                task_kind="reconstruction_match",
                run_type="match",
            )
        )
    with pytest.raises(RunError, match="no valid hypotheses"):
        judge_run_create(
            request=JudgeRunRequest(
                benchmark=benchmark,
                judge_model="J",
                base_url=fake_llm.base_url,
                task_kind="reconstruction_match",
                run_type="match",
                options={"judge_family": "j"},
            )
        )
    with pytest.raises(RunError, match="at least one proposer"):
        proposer_run_create(benchmark=benchmark, base_url=fake_llm.base_url, proposers=[" "])
    with pytest.raises(RunError, match="five valid hypotheses"):
        proposer_run_create(benchmark=benchmark, base_url=fake_llm.base_url, proposers=["Solo"])  # creates the participant
        selection_create(
            benchmark=benchmark, name="S", proposers=["Solo"], judges=[{"model": "J", "family": "j"}], base_url=fake_llm.base_url
        )
    with pytest.raises(CommandError, match="MODEL=FAMILY|NAME=VALUE"):
        call_command(
            "reconstruction_swiss",
            str(benchmark.pk),
            "--name",
            "S2",
            "--proposers",
            "Solo",
            "--judges",
            "J",
            "--base-url",
            fake_llm.base_url,
        )


def test_a_failed_proposer_run_resumes_and_stores_each_set_once(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    s1 = SeedPaper.objects.get(benchmark=benchmark, external_id="s1")
    cite = sorted(Reference.objects.filter(seed=s1, eligible=True).values_list("anon_id", flat=True))[:1]
    fake_llm.script(failures=[{"status": 500, "retry_after": 0.01}])
    run = proposer_run_create(benchmark=benchmark, base_url=fake_llm.base_url, proposers=["Alpha", "Beta"], timeout=5)
    proposer_run_launch(run=run)
    run.refresh_from_db()
    assert run.status == "failed"  # the endpoint gave up: the run says so, stores nothing, and can be resumed
    assert not Hypothesis.objects.exists()
    assert set(run.tasks.values_list("status", flat=True)) == {"failed"}
    fake_llm.script(replies=[{"contains": "=== BIBLIOGRAPHY ===", "answers": [five("X", cite)]}])
    assert elicit_resume(kind=KIND, run=run) == 2
    run.refresh_from_db()
    assert run.status == "completed"
    assert len(fake_llm.log()) == 2  # one answer per proposer (the log restarts with each script)
    for name in ("Alpha", "Beta"):
        assert list(Hypothesis.objects.filter(participant__name=name).values_list("slot", flat=True).order_by("slot")) == [
            1,
            2,
            3,
            4,
            5,
        ]
    with pytest.raises(RunError, match="only a paused, failed or cancelled run resumes"):
        elicit_resume(kind=KIND, run=run)
    with pytest.raises(RunError, match="nothing to ask"):  # nobody is asked twice for a seed they have hypotheses for
        proposer_run_create(benchmark=benchmark, base_url=fake_llm.base_url, proposers=["Alpha", "Beta"])


def three_proposers(tmp_path: Path, *, same_slot_1: bool = False) -> Benchmark:
    """helpers' seeds and references, and five valid hypotheses each for Alpha, Beta and Gamma on s1 (imported)."""
    s1_refs = [r for r in h.references() if r["seed_id"] == "s1"]
    reconstruction_import(
        name="recon-swiss",
        files={
            "seeds": h.write(tmp_path / "seeds.jsonl", h.seeds()),
            "references": h.write(tmp_path / "references.jsonl", s1_refs + [r for r in h.references() if r["seed_id"] != "s1"]),
        },
    )
    benchmark = Benchmark.objects.get(name="recon-swiss")
    cite = sorted(
        Reference.objects.filter(seed__benchmark=benchmark, seed__external_id="s1", eligible=True).values_list(
            "anon_id", flat=True
        )
    )[:1]
    rows = []
    for model in ("Alpha", "Beta", "Gamma"):
        for k, item in enumerate(five(model, cite)["hypotheses"], start=1):
            if same_slot_1 and k == 1 and model == "Gamma":
                item = five("Alpha", cite)["hypotheses"][0]  # Gamma's slot 1 reads exactly as Alpha's
            rows.append(
                {
                    "seed_id": "s1",
                    "model": model,
                    "family": model.lower(),
                    "slot": k,
                    "title": item["title"],
                    "summary": item["summary"],
                    "cited": item["cites"],
                }
            )
    reconstruction_import(name="recon-swiss", files={"hypotheses": h.write(tmp_path / "hypotheses.jsonl", rows)})
    return benchmark


def test_a_round_that_cannot_be_launched_leaves_the_selection_waiting_with_the_reason(
    tmp_path: Path, fake_llm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN401
    benchmark = three_proposers(tmp_path)
    monkeypatch.delenv("SWISS_TEST_API_KEY", raising=False)
    fake_llm.script(replies=swiss_rules("J-delta"))
    sel = {
        "benchmark": benchmark,
        "proposers": ["Alpha", "Beta", "Gamma"],
        "base_url": fake_llm.base_url,
        "api_key_env": "SWISS_TEST_API_KEY",
    }
    with pytest.raises(RunError, match="SWISS_TEST_API_KEY"):  # refused at once when the key is missing here
        selection_create(name="Sel", judges=[{"model": "J-delta", "family": "delta"}], **sel)
    with pytest.raises(RunError, match="Alpha is a participant"):
        selection_create(name="Sel", judges=[{"model": "Alpha", "family": "alpha"}], **sel | {"api_key_env": None})
    monkeypatch.setenv("SWISS_TEST_API_KEY", "secret")
    selection = selection_create(name="Sel", judges=[{"model": "J-delta", "family": "delta"}], launch=False, **sel)
    monkeypatch.delenv("SWISS_TEST_API_KEY")  # gone by the time the first round is launched
    selection_advance(selection_id=selection.pk)
    selection.refresh_from_db()
    assert selection.status == SwissSelection.Status.WAITING and selection.round == 0
    assert (
        "round 1 could not be launched" in selection.parameters["problem"]
        and "SWISS_TEST_API_KEY" in selection.parameters["problem"]
    )
    assert not SwissMatch.objects.exists() and not JudgeRun.objects.exists()  # nothing half made
    with pytest.raises(CommandError, match="--advance"):
        call_command("reconstruction_swiss", str(benchmark.pk), "--status", str(selection.pk), stdout=io.StringIO())
    monkeypatch.setenv("SWISS_TEST_API_KEY", "secret")
    call_command("reconstruction_swiss", str(benchmark.pk), "--advance", str(selection.pk), stdout=io.StringIO())
    selection.refresh_from_db()
    assert selection.status == SwissSelection.Status.COMPLETED and "problem" not in selection.parameters
    assert Hypothesis.objects.filter(participant__name="Sel").count() == 5


def test_two_candidates_that_read_the_same_are_not_judged_and_get_no_vote(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = three_proposers(tmp_path, same_slot_1=True)
    fake_llm.script(replies=swiss_rules("J-delta"))
    selection = selection_create(
        benchmark=benchmark,
        name="Sel",
        proposers=["Alpha", "Beta", "Gamma"],
        base_url=fake_llm.base_url,
        judges=[{"model": "J-delta", "family": "delta"}],
    )
    assert selection.status == SwissSelection.Status.COMPLETED
    slot_1 = SwissTournament.objects.get(selection=selection, slot=1)
    name = {x.pk: x.participant.name for x in Hypothesis.objects.select_related("participant")}
    twin = [
        m
        for m in SwissMatch.objects.filter(tournament=slot_1, b__isnull=False)
        if {name[m.a_id], name[m.b_id]} == {"Alpha", "Gamma"}
    ]
    assert all(not SwissVote.objects.filter(match=m).exists() for m in twin)  # never sent to the judge
    other = SwissMatch.objects.filter(tournament__selection=selection, b__isnull=False).exclude(pk__in=[m.pk for m in twin])
    assert all(SwissVote.objects.filter(match=m).count() == 2 for m in other)  # one judge, both orders


def test_the_commands_refuse_bad_numbers_and_other_protocols(tmp_path: Path, fake_llm: Any) -> None:  # noqa: ANN401
    benchmark = make_benchmark(tmp_path)
    base = ["--name", "S", "--proposers", "Alpha", "--judges", "J=j", "--base-url", fake_llm.base_url]
    for flag, value, message in (
        ("--concurrency", "0", "greater than or equal to 1"),
        ("--seed", "-2", "greater than or equal to 0"),
    ):
        with pytest.raises(CommandError, match=message):
            call_command("reconstruction_swiss", str(benchmark.pk), *base, flag, value, stdout=io.StringIO())
    other = Benchmark.objects.create(name="lit")
    with pytest.raises(CommandError, match="is a Lit2Test benchmark, not a Reconstruction one"):
        call_command("reconstruction_swiss", str(other.pk), "--status", "1", stdout=io.StringIO())
    with pytest.raises(CommandError, match="is a Lit2Test benchmark, not a Reconstruction one"):
        call_command("reconstruction_propose", str(other.pk), "--resume", "1", stdout=io.StringIO())
    assert not SwissSelection.objects.exists()
