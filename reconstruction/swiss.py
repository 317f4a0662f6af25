"""Swiss selection (PROTOCOL.md §3; issue 13) as a sequence of small runs on the shared engine.

``selection_create`` makes a :class:`~reconstruction.models.SwissSelection`: per seed with a frozen bibliography and
per slot k, a tournament among the proposers' k-th hypotheses (a proposer takes part on a seed only with all five of
its hypotheses valid: a seed with fewer is excluded for it, as the protocol says). Each tournament runs
``max(1, n − 1)`` rounds (``arena.stats.swiss``: pairing by points with a seeded lot, no rematch where avoidable,
one bye for an odd one out, never twice where avoidable).

Round r of every tournament of the selection is judged by one run per judge (``JudgeRun.subjects =
reconstruction_swiss``): each judge takes the matches whose two candidates come from families other than its own, in
both orders. A vote is the winner of one (judge, order); a tie gives each side ½; points = votes / 2. A match no
judge may judge (every judge is of one of its two families) gets no votes.

``selection_advance`` is the only step that moves a selection on, and it is idempotent (it locks the selection row):
when every run of the current round has completed, it pairs the next round of every tournament that has one and
launches its runs; after the last round it computes the standings (``swiss_standings``: points, head-to-head,
Buchholz, seeded lot, the deciding rule recorded), stores each slot champion as the selection participant's
hypothesis of that slot (a copy with ``origin`` = the champion and the champion's family, for the match judges'
recusal) and completes. It runs after each round run completes (the task kind's ``after``), and from
``reconstruction_swiss --advance``; a failed round run leaves the selection *waiting* until it is resumed.

A champion drawn by lot is said so. With no vote cast in a tournament (every match's two candidates read the same once
redacted, or no judge was outside both families, or no answer was valid) every candidate ends on 0 points and the
seeded lot picks the champion. The finalising step records, beside the deciding rule, the tournament's accepted votes
and its matches that got none, by reason (``tie_break["votes"]``, ``tie_break["unjudged"]``); :func:`lot_note` turns
that into the sentence the bracket page, ``reconstruction_swiss --status`` and the report show.
"""

from __future__ import annotations

import zlib
from collections import defaultdict
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from arena.models import Benchmark, JudgeRun, Participant
from arena.protocols import protocol_phrase
from arena.stats.swiss import swiss_pairings, swiss_standings
from jobs.lifecycle import endpoint_url_required
from jobs.prompts import PROMPTS
from jobs.providers import PermanentError, api_key_from_env
from jobs.services import AlreadyLaunched, JudgeRunRequest, RunError, judge_run_create, judge_run_launch

from .judging import _swiss_matches, swiss_eligible, swiss_judgeable
from .models import (
    PROTOCOL,
    SLOTS,
    SWISS_KIND,
    BibliographyFreeze,
    Hypothesis,
    SwissMatch,
    SwissSelection,
    SwissTournament,
    SwissVote,
)
from .prompts import SWISS_V1

ENDED_BAD = (JudgeRun.Status.FAILED, JudgeRun.Status.CANCELLED)
#: Why a match got no vote (the keys of ``tie_break["unjudged"]``), as the pages say it after "N match(es)".
UNJUDGED = {
    "same_text": "whose two candidates read the same once model names are redacted, so no judge could tell them apart",
    "recused": "with no judge outside both candidates' model families",
    "no_valid_vote": "with no valid answer from any judge",
}


def tournament_seed(selection: SwissSelection, tournament: SwissTournament) -> int:
    """The lot's seed of one tournament: stable across databases (no primary keys)."""
    return zlib.crc32(f"{selection.seed}:{tournament.seed_paper.external_id}:{tournament.slot}".encode())


def selection_create(
    *,
    benchmark: Benchmark,
    name: str,
    proposers: list[str],
    judges: list[dict[str, str]],
    seed: int = 0,
    base_url: str = "",
    api_key_env: str | None = None,
    provider: str = JudgeRun.Provider.OPENAI_COMPATIBLE,
    concurrency: int = 8,
    timeout: float = 120.0,
    temperature: float | None = 0.0,
    max_tokens: int | None = 512,
    lease_seconds: float | None = None,
    launch: bool = True,
) -> SwissSelection:
    """Create a selection and (``launch``) start its first round. Raises :class:`RunError` saying what to fix."""
    if benchmark.protocol != PROTOCOL:
        raise RunError(f"{benchmark} is {protocol_phrase(benchmark.protocol)} benchmark, not a Reconstruction one")
    name = _selection_name(benchmark=benchmark, name=name)
    proposers = _selection_proposers(benchmark=benchmark, proposers=proposers)
    _judges_check(benchmark=benchmark, judges=judges, provider=provider, base_url=base_url, api_key_env=api_key_env)
    frozen = set(BibliographyFreeze.objects.filter(seed__benchmark=benchmark).values_list("seed_id", flat=True))
    by_seed: dict[int, dict[str, list[Hypothesis]]] = defaultdict(lambda: defaultdict(list))
    for h in Hypothesis.objects.filter(seed_id__in=frozen, participant__name__in=proposers).select_related("participant"):
        by_seed[h.seed_id][h.participant.name].append(h)
    try:
        with transaction.atomic():
            participant = Participant.objects.create(benchmark=benchmark, name=name)
            selection = SwissSelection.objects.create(
                benchmark=benchmark,
                participant=participant,
                proposers=proposers,
                judges=judges,
                seed=seed,
                parameters={
                    "base_url": base_url,
                    "api_key_env": api_key_env or "",
                    "provider": provider,
                    "concurrency": concurrency,
                    "timeout": timeout,
                    "temperature": temperature,
                    "max_tokens": max_tokens,
                    "lease_seconds": lease_seconds,
                },
            )
            tournaments = _tournaments(selection, by_seed)
            if not tournaments:
                raise RunError(
                    f"no seed of {benchmark} has five valid hypotheses from any of {', '.join(proposers)}; run the proposers first"
                )
            SwissTournament.objects.bulk_create(tournaments)
    except IntegrityError:
        # The same selection started twice at once (its form posted twice): the first made it.
        made = SwissSelection.objects.filter(benchmark=benchmark, participant__name=name).first()
        if made is None and Participant.objects.filter(benchmark=benchmark, name=name).exists():
            raise RunError(
                f"{name!r} became a participant of {benchmark} meanwhile; choose another name for the selection"
            ) from None
        if made is None:
            raise
        raise AlreadyLaunched(made, f"Swiss selection {name!r} was started already; nothing new was made") from None
    if launch:
        selection_advance(selection_id=selection.pk)
    selection.refresh_from_db()
    return selection


def _selection_name(*, benchmark: Benchmark, name: str) -> str:
    """The selection's name, stripped: its champions are stored as the hypotheses of a new participant of that name;
    raises :class:`RunError` when it is blank or already a participant's."""
    name = name.strip()
    if not name:
        raise RunError("a selection needs a name: its champions are stored as that system's hypotheses")
    if Participant.objects.filter(benchmark=benchmark, name=name).exists():
        raise RunError(f"{name!r} is already a participant of {benchmark}; choose another name for the selection")
    return name


def _selection_proposers(*, benchmark: Benchmark, proposers: list[str]) -> list[str]:
    """The proposers' names, stripped; raises :class:`RunError` unless they are distinct participants of the benchmark."""
    proposers = [p.strip() for p in proposers if p.strip()]
    known = set(Participant.objects.filter(benchmark=benchmark, name__in=proposers).values_list("name", flat=True))
    if len(proposers) < 1 or len(set(proposers)) != len(proposers) or known != set(proposers):
        missing = sorted(set(proposers) - known)
        raise RunError(
            f"--proposers must name distinct participants of {benchmark}"
            + (f"; unknown: {', '.join(missing)}" if missing else "")
        )
    return proposers


def _judges_check(
    *, benchmark: Benchmark, judges: list[dict[str, str]], provider: str, base_url: str, api_key_env: str | None
) -> None:
    """Raises :class:`RunError` unless every judge has a model and a family (for recusal), none is named twice or is a
    participant (a judge never judges its own hypotheses), and a live provider has a base URL and its API key."""
    if not judges or any(not j.get("model") or not j.get("family") for j in judges):
        raise RunError("name the judges as MODEL=FAMILY,...: every judge needs its model family for recusal")
    if len({j["model"] for j in judges}) != len(judges):
        raise RunError("a judge is named twice")
    if provider != JudgeRun.Provider.RECORDED or base_url:
        # A recorded run calls nothing, but a URL it is given is stored with the selection: checked all the same (a key
        # in user:key@ or ?api_key= must never reach the database).
        endpoint_url_required(base_url, what="the judges' base URL (--base-url)")
    if provider != JudgeRun.Provider.RECORDED:
        try:
            api_key_from_env(api_key_env)
        except PermanentError as exc:
            raise RunError(str(exc)) from None
    clash = sorted(
        {j["model"] for j in judges} & set(Participant.objects.filter(benchmark=benchmark).values_list("name", flat=True))
    )
    if clash:
        raise RunError(f"{', '.join(clash)} is a participant of {benchmark}; a judge may never judge its own hypotheses")


def _tournaments(selection: SwissSelection, by_seed: dict[int, dict[str, list[Hypothesis]]]) -> list[SwissTournament]:
    """A tournament per seed and slot among the proposers with all five hypotheses of the seed valid (a proposer with
    fewer is excluded on that seed, as the protocol says); a seed with no such proposer has none."""
    tournaments = []
    for seed_id, per in sorted(by_seed.items()):
        complete = {
            p: sorted(hs, key=lambda h: h.slot) for p, hs in per.items() if len(hs) == len(SLOTS) and all(h.valid for h in hs)
        }
        if not complete:
            continue
        for slot in SLOTS:
            cands = [hs[slot - 1].pk for _, hs in sorted(complete.items())]
            tournaments.append(
                SwissTournament(
                    selection=selection, seed_paper_id=seed_id, slot=slot, candidates=cands, rounds=max(1, len(cands) - 1)
                )
            )
    return tournaments


def _results(
    tournament: SwissTournament, matches: list[SwissMatch], votes: dict[int, list[SwissVote]]
) -> tuple[list[tuple[int, int, float, float]], list[int]]:
    results, byes = [], []
    for m in matches:
        if m.b_id is None:
            byes.append(m.a_id)
            continue
        va = vb = 0.0
        for v in votes.get(m.pk, []):
            va += 1.0 if v.winner == "a" else 0.5 if v.winner == "tie" else 0.0
            vb += 1.0 if v.winner == "b" else 0.5 if v.winner == "tie" else 0.0
        results.append((m.a_id, m.b_id, va, vb))
    return results, byes


def _round_runs(selection: SwissSelection, round_no: int) -> list[JudgeRun]:
    return list(
        JudgeRun.objects.filter(
            subjects=SWISS_KIND, parameters__options__selection=selection.pk, parameters__options__round=round_no
        )
    )


def selection_state(selection: SwissSelection) -> dict[int, dict[str, Any]]:
    """Per tournament id: its matches so far, their votes, points, results and byes."""
    tournaments = {t.pk: t for t in selection.tournaments.select_related("seed_paper")}
    matches: dict[int, list[SwissMatch]] = defaultdict(list)
    for m in SwissMatch.objects.filter(tournament__selection=selection).order_by("round", "id"):
        matches[m.tournament_id].append(m)
    votes: dict[int, list[SwissVote]] = defaultdict(list)
    for v in SwissVote.objects.filter(match__tournament__selection=selection, status="accepted"):
        votes[v.match_id].append(v)
    state = {}
    for tid, t in tournaments.items():
        results, byes = _results(t, matches[tid], votes)
        points = {c: 0.0 for c in t.candidates}
        for a, b, va, vb in results:
            points[a] += va / 2.0
            points[b] += vb / 2.0
        state[tid] = {
            "tournament": t,
            "matches": matches[tid],
            "votes": votes,
            "results": results,
            "byes": byes,
            "points": points,
        }
    return state


def selection_advance(*, selection_id: int) -> str:
    """Move the selection on as far as it can go now (module doc); returns its status."""
    launches: list[JudgeRun] = []
    with transaction.atomic():
        selection = SwissSelection.objects.select_for_update().select_related("benchmark", "participant").get(pk=selection_id)
        while selection.status != SwissSelection.Status.COMPLETED:
            if selection.round:
                runs = _round_runs(selection, selection.round)
                if any(r.status in ENDED_BAD for r in runs):
                    selection.status = SwissSelection.Status.WAITING
                    selection.save(update_fields=["status"])
                    break
                if any(r.status != JudgeRun.Status.COMPLETED for r in runs):
                    if selection.status != SwissSelection.Status.RUNNING:
                        selection.status = SwissSelection.Status.RUNNING
                        selection.save(update_fields=["status"])
                    break
            try:
                with transaction.atomic():  # a round is paired and given its runs together, or not at all
                    if not round_pair(selection):
                        break
                    launches = _round_runs_create(selection, selection.round)
            except RunError as exc:
                # The round's runs cannot be made (an endpoint setting, a judge that became a participant ...): the
                # selection waits, saying why, instead of sitting "running" with nothing to run.
                selection.refresh_from_db()
                selection.status = SwissSelection.Status.WAITING
                selection.parameters = {
                    **selection.parameters,
                    "problem": f"round {selection.round + 1} could not be launched: {exc}",
                }
                selection.save(update_fields=["status", "parameters"])
                break
            if selection.parameters.get("problem"):
                selection.parameters = {k: v for k, v in selection.parameters.items() if k != "problem"}
                selection.save(update_fields=["parameters"])
            if launches:
                break
            # Nothing to judge this round (byes only, or every match recused for every judge): pair the next one.
        status = selection.status
    for run in launches:
        judge_run_launch(run=run)
    return status


def round_pair(selection: SwissSelection) -> bool:
    """Pair the next round of every tournament that has one (and move the selection to it), or, when none has,
    finalise the selection. Returns whether a round was paired. Call it with the selection row locked."""
    state = selection_state(selection)
    next_round = selection.round + 1
    new: list[SwissMatch] = []
    for s in state.values():
        t: SwissTournament = s["tournament"]
        if next_round > t.rounds:
            continue
        pairs, bye = swiss_pairings(
            t.candidates,
            s["points"],
            [frozenset((a, b)) for a, b, _, _ in s["results"]],
            round_no=next_round,
            seed=tournament_seed(selection, t),
            byes=s["byes"],
            rounds_left=t.rounds - next_round,
        )
        new += [SwissMatch(tournament=t, round=next_round, a_id=a, b_id=b) for a, b in pairs]
        if bye is not None:
            new.append(SwissMatch(tournament=t, round=next_round, a_id=bye, b=None))
    if not new:
        _finalise(selection, state)
        return False
    SwissMatch.objects.bulk_create(new)
    selection.round, selection.status = next_round, SwissSelection.Status.RUNNING
    selection.save(update_fields=["round", "status"])
    return True


def _round_runs_create(selection: SwissSelection, round_no: int) -> list[JudgeRun]:
    p = selection.parameters
    matches = _swiss_matches(selection=selection.pk, round_no=round_no)
    template = PROMPTS[SWISS_V1]
    runs = []
    for judge in selection.judges:
        if not swiss_judgeable(matches, judge["family"], selection.benchmark, template):
            continue
        replay_of = JudgeRun.objects.get(pk=judge["replay_of"]) if judge.get("replay_of") else None
        request = JudgeRunRequest(
            benchmark=selection.benchmark,
            judge_model=judge["model"],
            base_url=p.get("base_url") or "",
            provider=p.get("provider") or JudgeRun.Provider.OPENAI_COMPATIBLE,
            replay_of=replay_of,
            api_key_env=p.get("api_key_env") or None,
            run_type="swiss",
            task_kind=SWISS_KIND,
            concurrency=int(p.get("concurrency") or 8),
            timeout=float(p.get("timeout") or 120.0),
            temperature=p.get("temperature"),
            max_tokens=p.get("max_tokens"),
            lease_seconds=p.get("lease_seconds"),
            label=f"swiss-{selection.pk}-round-{round_no}-{judge['model']}",
            options={"selection": selection.pk, "round": round_no, "judge_family": judge["family"]},
        )
        run, _ = judge_run_create(request=request)
        runs.append(run)
    return runs


def _unjudged(selection: SwissSelection, state: dict[int, dict[str, Any]]) -> dict[int, dict[str, list[int]]]:
    """Per tournament id: its matches (not byes) that got no accepted vote, by reason (:data:`UNJUDGED`)."""
    silent = {m.pk for s in state.values() for m in s["matches"] if m.b_id is not None and not s["votes"].get(m.pk)}
    if not silent:
        return {}
    template = PROMPTS[SWISS_V1]
    families = [j["family"] for j in selection.judges]
    out: dict[int, dict[str, list[int]]] = defaultdict(lambda: {reason: [] for reason in UNJUDGED})
    for m in _swiss_matches(silent):
        eligible = [f for f in families if swiss_eligible([m], f)]
        if not eligible:
            reason = "recused"
        elif not swiss_judgeable([m], eligible[0], selection.benchmark, template):
            reason = "same_text"
        else:
            reason = "no_valid_vote"
        out[m.tournament_id][reason].append(m.pk)
    return dict(out)


def _finalise(selection: SwissSelection, state: dict[int, dict[str, Any]]) -> None:
    """Standings and champions of every tournament; the champions become the selection's hypotheses. Beside the
    deciding rule, each tournament's ``tie_break`` records its accepted votes and its matches that got none, by reason:
    what :func:`lot_note` says of a champion drawn by lot."""
    champions: list[Hypothesis] = []
    originals = {
        h.pk: h for h in Hypothesis.objects.filter(pk__in={c for s in state.values() for c in s["tournament"].candidates})
    }
    unjudged = _unjudged(selection, state)
    for s in state.values():
        t: SwissTournament = s["tournament"]
        table = swiss_standings(t.candidates, s["results"], seed=tournament_seed(selection, t), byes=s["byes"])
        t.standings = [{k: v for k, v in row.items()} for row in table["standings"]]
        votes = sum(len(s["votes"].get(m.pk, [])) for m in s["matches"])
        t.tie_break = (table["tie_break"] or {}) | {"votes": votes, "unjudged": unjudged.get(t.pk, {})}
        t.champion_id = table["champion"]
        t.save(update_fields=["standings", "tie_break", "champion"])
        origin = originals[table["champion"]]
        champions.append(
            Hypothesis(
                seed_id=t.seed_paper_id,
                participant=selection.participant,
                family=origin.family,
                slot=t.slot,
                title=origin.title,
                summary=origin.summary,
                cited=origin.cited,
                origin=origin,
            )
        )
    Hypothesis.objects.bulk_create(champions)
    selection.status, selection.finished_at = SwissSelection.Status.COMPLETED, timezone.now()
    selection.save(update_fields=["status", "finished_at"])


def _matches_text(n: int, what: str) -> str:
    return f"{n} match{'' if n == 1 else 'es'} {what}"


def lot_note(tournament: SwissTournament) -> str:
    """Why a finished tournament's champion was drawn by lot, in plain words; "" when the lot did not decide (the
    deciding rule recorded by ``swiss_standings``). With no vote cast it says which matches got none and why."""
    tie_break = tournament.tie_break or {}
    if tie_break.get("decided_by") != "lot":
        return ""
    if tie_break.get("votes") == 0:
        reasons = [_matches_text(len(ids), UNJUDGED[reason]) for reason, ids in (tie_break.get("unjudged") or {}).items() if ids]
        return "champion drawn by lot: no vote was cast" + (f" ({'; '.join(reasons)})" if reasons else "")
    tied = len(tie_break.get("tied_on_points") or [])
    return f"champion drawn by lot among {tied} candidates tied on points, head-to-head and Buchholz"


def selection_lots(selection: SwissSelection) -> list[dict[str, Any]]:
    """The selection's tournaments whose champion was drawn by lot: seed (external id), slot, accepted votes (None when
    the selection finished before they were recorded) and :func:`lot_note`, in seed and slot order."""
    found = selection.tournaments.filter(tie_break__decided_by="lot").select_related("seed_paper")
    return [
        {
            "seed": t.seed_paper.external_id,
            "seed_id": t.seed_paper_id,
            "slot": t.slot,
            "votes": (t.tie_break or {}).get("votes"),
            "why": lot_note(t),
        }
        for t in sorted(found, key=lambda t: (t.seed_paper.external_id, t.slot))
    ]
