"""The checks of a HypoArena import across lines: each line against the others and against what the benchmark
already holds (:class:`Stored`), one file after the other, each referring to the ones before it.

Apart from the reading of single lines (:mod:`hypoarena.import_lines`) and the writes (:mod:`hypoarena.importing`)
because this is where the import's rules across lines live: a case once, a submission per model and case, one
orientation per match, one accepted verdict per run, match and order, rubric scores that fit their submission.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from arena.jsonl import Problem, Ref, names_listed, show
from arena.models import Benchmark, JudgeRun, Participant

from .import_lines import CaseLine, RubricLine, SubmissionLine, VerdictLine
from .models import RUBRIC_MAX, RUBRIC_MIN, ArenaVerdict, Case, Domain, Match, RubricScore, Submission
from .services import ARENA_RUN, RUBRIC_RUN

_names = names_listed


# --------------------------------------------------------------------------- what is stored


@dataclass
class Stored:
    """What the benchmark already holds, keyed as the files name things."""

    domains: dict[str, Domain] = field(default_factory=dict)
    cases: dict[str, Case] = field(default_factory=dict)
    participants: dict[str, Participant] = field(default_factory=dict)
    submissions: dict[tuple[str, str], Submission] = field(default_factory=dict)
    references: dict[str, bool] = field(default_factory=dict)  # model -> is the Reference
    matches: dict[tuple[str, frozenset[str]], tuple[str, str]] = field(default_factory=dict)  # -> (first, second)
    runs: dict[tuple[str, str], JudgeRun] = field(default_factory=dict)
    accepted: dict[tuple, str] = field(default_factory=dict)  # (judge, label, case, models, order) -> verdict
    invalid: Counter = field(default_factory=Counter)  # (judge, label, case, models, order, reasons, raw)
    rubric: dict[tuple[str, str, str, str], tuple] = field(default_factory=dict)

    @classmethod
    def load(cls, benchmark: Benchmark | None) -> Stored:
        """Read once, before any line is checked: the checks then ask a dictionary, not the database, per line."""
        stored = cls()
        if benchmark is None:
            return stored
        stored.domains = {d.name: d for d in Domain.objects.filter(benchmark=benchmark)}
        stored.cases = {c.external_id: c for c in Case.objects.filter(benchmark=benchmark).select_related("domain")}
        stored.participants = {p.name: p for p in benchmark.participants.all()}
        for s in Submission.objects.filter(case__benchmark=benchmark).select_related("case", "participant"):
            stored.submissions[(s.case.external_id, s.participant.name)] = s
            stored.references[s.participant.name] = s.is_reference
        names = dict(Submission.objects.filter(case__benchmark=benchmark).values_list("pk", "participant__name"))
        for case_id, first, second in Match.objects.filter(case__benchmark=benchmark).values_list(
            "case__external_id", "first_id", "second_id"
        ):
            stored.matches[(case_id, frozenset((names[first], names[second])))] = (names[first], names[second])
        stored.runs = {(r.judge_model, r.label): r for r in benchmark.runs.all()}
        rows = ArenaVerdict.objects.filter(run__benchmark=benchmark).values_list(
            "run__judge_model",
            "run__label",
            "match__case__external_id",
            "match__first_id",
            "match__second_id",
            "order",
            "status",
            "verdict",
            "reasons",
            "raw_response",
        )
        for judge, label, case_id, first, second, order, status, verdict, reasons, raw in rows.iterator():
            key = (judge, label, case_id, frozenset((names[first], names[second])), order)
            if status == ArenaVerdict.Status.ACCEPTED:
                stored.accepted[key] = verdict
            else:
                stored.invalid[(*key, reasons, raw)] += 1
        for r in RubricScore.objects.filter(run__benchmark=benchmark).select_related(
            "run", "submission__case", "submission__participant"
        ):
            key = (r.run.judge_model, r.run.label, r.submission.case.external_id, r.submission.participant.name)
            stored.rubric[key] = (r.grounding, r.insight, r.justification, r.breadth, r.distinctness, r.utility)
        return stored


# --------------------------------------------------------------------------- checks across lines


@dataclass
class ImportCheck:
    """The lines of one import checked against each other and against what is stored, one file after the other (each
    refers to the ones before it): every problem found, and what is new and is to be written.

    What a refused line names (a case id, a model's submission) is remembered in ``broken``, so that the lines
    referring to it are skipped quietly: the problem is reported once, where it is."""

    benchmark: Benchmark | None
    stored: Stored
    problems: list[Problem]
    broken: dict[str, set[Any]] = field(default_factory=lambda: {"cases": set(), "submissions": set()})
    new_cases: list[CaseLine] = field(default_factory=list)
    new_submissions: list[SubmissionLine] = field(default_factory=list)
    new_verdicts: list[VerdictLine] = field(default_factory=list)
    new_rubric: list[RubricLine] = field(default_factory=list)
    # Filled by the checks, each for the ones after it.
    domain_of: dict[str, str] = field(default_factory=dict)  # case id -> domain
    is_singleton: dict[str, bool] = field(default_factory=dict)  # domain -> singleton
    known_cases: list[str] = field(default_factory=list)
    submitted: dict[tuple[str, str], SubmissionLine | Submission] = field(default_factory=dict)
    models_of: dict[str, list[str]] = field(default_factory=dict)  # case id -> models with a submission
    reference: dict[str, tuple[bool, str]] = field(default_factory=dict)  # model -> (is the Reference, where said)
    run_types: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # (judge, label) -> (type, where)
    orientation: dict[tuple[str, frozenset[str]], tuple[str, str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.submitted = dict(self.stored.submissions)
        self.reference = {m: (r, "stored") for m, r in self.stored.references.items()}
        self.run_types = {k: (r.run_type, "stored") for k, r in self.stored.runs.items()}
        self.orientation = {k: (first, second, "as stored") for k, (first, second) in self.stored.matches.items()}

    def problem(self, ref: Ref, name: str | None, message: str) -> None:
        self.problems.append(Problem(ref.file, ref.line, name, message))

    # ---------------------------------------------------------------- cases and their domains

    def cases(self, lines: list[CaseLine]) -> None:
        """Each case once; the cases of a domain agree on whether it is a singleton domain; a stored case unchanged."""
        singleton: dict[str, tuple[bool, str]] = {d.name: (d.singleton, "stored") for d in self.stored.domains.values()}
        cases: dict[str, CaseLine] = {}
        for line in lines:
            if line.case_id in cases:
                self.problem(
                    line.ref,
                    "case_id",
                    f"{show(line.case_id)} repeats line {cases[line.case_id].ref.line}; each case appears once",
                )
                continue
            cases[line.case_id] = line
            if line.singleton is not None:
                self._singleton_agrees(line, singleton)
            self._case_against_stored(line)
        self.domain_of = {c.external_id: c.domain.name for c in self.stored.cases.values()} | {
            c: x.domain for c, x in cases.items()
        }
        self.is_singleton = {name: said[0] for name, said in singleton.items()}
        self.known_cases = sorted(set(self.domain_of) | {c for c in self.broken["cases"] if isinstance(c, str) and c})

    def _singleton_agrees(self, line: CaseLine, singleton: dict[str, tuple[bool, str]]) -> None:
        said = singleton.get(line.domain)
        if said is None:
            singleton[line.domain] = (line.singleton, f"line {line.ref.line}")  # type: ignore[assignment]
        elif said[0] != line.singleton:
            self.problem(
                line.ref,
                "singleton",
                f"is {json.dumps(line.singleton)}, but domain {show(line.domain)} is {'a singleton' if said[0] else 'a multi-pair'} "
                f"domain ({said[1]}); every case of a domain says the same, or leaves singleton out",
            )

    def _case_against_stored(self, line: CaseLine) -> None:
        old = self.stored.cases.get(line.case_id)
        if old is None:
            self.new_cases.append(line)
            return
        differing = [
            k
            for k, was, now in (
                ("domain", old.domain.name, line.domain),
                ("context", old.context, line.context),
                ("reference_conclusion", old.reference_conclusion, line.reference_conclusion),
            )
            if was != now
        ]
        if differing:
            self.problem(
                line.ref,
                ", ".join(differing),
                f"case {show(line.case_id)} is already in {self.benchmark} with a different {', '.join(differing)}; give the new case its own case_id",
            )

    def unknown_case(self, ref: Ref, case_id: str) -> bool:
        """True when the line names no case (reported, unless that case's own line was refused)."""
        if case_id in self.domain_of:
            return False
        if case_id in self.broken["cases"]:
            return True
        self.problem(ref, "case_id", f"unknown case {show(case_id)}; the cases are {_names(self.known_cases)}")
        return True

    # ---------------------------------------------------------------- submissions

    def submissions(self, lines: list[SubmissionLine]) -> None:
        """One submission per model and case, of a known case, one pair in a singleton domain, a model the Reference in
        all its submissions or in none; a stored submission unchanged."""
        seen: dict[tuple[str, str], int | None] = {}
        for line in lines:
            key = (line.case_id, line.model)
            if key in seen:
                self.problem(
                    line.ref,
                    "model",
                    f"{show(line.model)} already has a submission for case {show(line.case_id)} on line {seen[key]}; one per model and case",
                )
                continue
            seen[key] = line.ref.line
            if self.unknown_case(line.ref, line.case_id) or not self._submission_fits(line, key):
                continue
            old = self.stored.submissions.get(key)
            if old is None:
                self.new_submissions.append(line)
                self.submitted[key] = line
            elif old.pairs != line.pairs:
                self.problem(
                    line.ref,
                    "pairs",
                    f"{show(line.model)} already has a submission for case {show(line.case_id)} in {self.benchmark} with other pairs; it cannot be replaced by an import",
                )
        for case_id, model in self.submitted:
            self.models_of.setdefault(case_id, []).append(model)

    def _submission_fits(self, line: SubmissionLine, key: tuple[str, str]) -> bool:
        """False, the problem reported and the submission remembered as broken, when it has other than one pair in a
        singleton domain or disagrees with another line on whether its model is the Reference."""
        domain = self.domain_of[line.case_id]
        if self.is_singleton.get(domain) and len(line.pairs) != 1:
            self.problem(
                line.ref,
                "pairs",
                f"has {len(line.pairs)} pairs; case {show(line.case_id)} is in singleton domain {show(domain)}, where a submission has exactly 1",
            )
            self.broken["submissions"].add(key)
            return False
        said = self.reference.get(line.model)
        if said is None:
            self.reference[line.model] = (line.reference, f"line {line.ref.line}")
        elif said[0] != line.reference:
            self.problem(
                line.ref,
                "reference",
                f"is {json.dumps(line.reference)}, but {show(line.model)} is {'' if said[0] else 'not '}the Reference ({said[1]}); "
                "a model is the Reference in all its submissions or in none",
            )
            self.broken["submissions"].add(key)
            return False
        return True

    def unknown_submission(self, ref: Ref, name: str, case_id: str, model: str) -> bool:
        """True when the model has no submission for the case (reported, unless that submission's line was refused)."""
        if (case_id, model) in self.submitted:
            return False
        if (case_id, model) in self.broken["submissions"]:
            return True
        self.problem(
            ref,
            name,
            f"{show(model)} has no submission for case {show(case_id)}; the models with one are {_names(sorted(self.models_of.get(case_id, [])))}",
        )
        return True

    def wrong_run(self, ref: Ref, judge: str, label: str, run_type: str) -> bool:
        """True (reported) when the run already holds results of the other type: a run holds verdicts or scores."""
        said = self.run_types.setdefault((judge, label), (run_type, f"{ref.file}, line {ref.line}"))
        if said[0] == run_type:
            return False
        self.problem(
            ref,
            "run_label",
            f"run {show(label)} of judge {show(judge)} already holds {said[0]} results ({said[1]}); give the {run_type} run its own run_label",
        )
        return True

    # ---------------------------------------------------------------- verdicts

    def verdicts(self, lines: list[VerdictLine]) -> None:
        """The orientation of each match, and one accepted verdict per (run, match, order); a stored verdict unchanged.
        Invalid verdicts may repeat: each stored one accounts for one line."""
        seen: dict[tuple, int | None] = {}
        invalid_left = Counter(self.stored.invalid)
        for line in lines:
            if not self._verdict_names_known(line) or not self._verdict_oriented(line):
                continue
            key = (line.judge, line.run_label, line.case_id, line.models, line.order)
            if line.status == ArenaVerdict.Status.INVALID:
                if invalid_left[(*key, line.reasons, line.raw)] > 0:
                    invalid_left[(*key, line.reasons, line.raw)] -= 1
                else:
                    self.new_verdicts.append(line)
                continue
            if key in seen:
                self.problem(
                    line.ref,
                    "verdict",
                    f"a second accepted verdict for this match and order in run {show(line.run_label)} of {show(line.judge)} (the first is on line {seen[key]}); one per run, match and order",
                )
                continue
            seen[key] = line.ref.line
            old_verdict = self.stored.accepted.get(key)
            if old_verdict is None:
                self.new_verdicts.append(line)
            elif old_verdict != line.verdict:
                self.problem(
                    line.ref,
                    "verdict",
                    f"is {show(line.verdict)}, but run {show(line.run_label)} of {show(line.judge)} already has {show(old_verdict)} for this match and order; a run's verdict cannot be replaced by an import",
                )

    def _verdict_names_known(self, line: VerdictLine) -> bool:
        """The verdict's case, both models' submissions and an arena run; both models are checked, so both are named."""
        if self.unknown_case(line.ref, line.case_id):
            return False
        if self.unknown_submission(line.ref, "model_a", line.case_id, line.model_a) | self.unknown_submission(
            line.ref, "model_b", line.case_id, line.model_b
        ):
            return False
        return not self.wrong_run(line.ref, line.judge, line.run_label, ARENA_RUN)

    def _verdict_oriented(self, line: VerdictLine) -> bool:
        """The verdict shows the match as it is oriented (stored, or by the first verdict of it); else reported."""
        first, second = (line.model_a, line.model_b) if line.order == "original" else (line.model_b, line.model_a)
        known = self.orientation.setdefault((line.case_id, line.models), (first, second, f"line {line.ref.line}"))
        if known[0] == first:
            return True
        shown = known[0] if line.order == "original" else known[1]
        self.problem(
            line.ref,
            "model_a",
            f"is {show(line.model_a)}, but in the {line.order} order of case {show(line.case_id)} the match of {show(known[0])} and "
            f"{show(known[1])} shows {show(shown)} as A ({known[2]}: {show(known[0])} is A in the original order, {show(known[1])} "
            "in the reverse); swap model_a and model_b, or the order",
        )
        return False

    # ---------------------------------------------------------------- rubric scores

    def rubric(self, lines: list[RubricLine]) -> None:
        """One score per (run, case, model) of a known submission, K pair scores for its K pairs; a stored one unchanged."""
        seen: dict[tuple, int | None] = {}
        for line in lines:
            if self.unknown_case(line.ref, line.case_id) or self.unknown_submission(line.ref, "model", line.case_id, line.model):
                continue
            if self.wrong_run(line.ref, line.judge, line.run_label, RUBRIC_RUN) or not self._rubric_fits(line):
                continue
            key = (line.judge, line.run_label, line.case_id, line.model)
            if key in seen:
                self.problem(
                    line.ref,
                    "model",
                    f"a second rubric score of {show(line.model)} for case {show(line.case_id)} in run {show(line.run_label)} (the first is on line {seen[key]})",
                )
                continue
            seen[key] = line.ref.line
            old_scores = self.stored.rubric.get(key)
            if old_scores is None:
                self.new_rubric.append(line)
            elif old_scores != line.values():
                self.problem(
                    line.ref,
                    "pairs",
                    f"run {show(line.run_label)} of {show(line.judge)} already scored {show(line.model)} for case {show(line.case_id)} differently; scores cannot be replaced by an import",
                )

    def _rubric_fits(self, line: RubricLine) -> bool:
        """The scores fit the submission's K pairs: K per-pair scores, and a distinctness exactly when K > 1."""
        k = len(self.submitted[(line.case_id, line.model)].pairs)
        if len(line.g) != k:
            self.problem(
                line.ref,
                "pairs",
                f"scores {len(line.g)} pair(s); the submission of {show(line.model)} for case {show(line.case_id)} has K = {k}",
            )
            return False
        if k == 1 and line.d is not None:
            self.problem(
                line.ref,
                "d",
                f"must be null when K = 1 (directional distinctness does not apply to one pair); got {show(line.d)}",
            )
            return False
        if k > 1 and line.d is None:
            self.problem(
                line.ref, "d", f"missing; a whole number from {RUBRIC_MIN} to {RUBRIC_MAX} (the submission has K = {k} pairs)"
            )
            return False
        return True
