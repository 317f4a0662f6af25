"""The hypotheses of a Reconstruction import: each checked against its seed's frozen bibliography, its model's
family and the stored hypotheses, then written (in the import's transaction, rolled back on any problem).

Apart from the rest of the import (:mod:`reconstruction.importing`) because these are the rules a hypothesis is held
to wherever it comes from: it cites only its seed's frozen bibliography, a model has one family (the match judges'
recusal depends on it), a model's five hypotheses of a seed are distinct, and a selection's champion is a copy of a
proposer's valid hypothesis of the same slot and family (as ``reconstruction.swiss`` makes them: same title, summary
and citations).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.jsonl import Problem, names_listed, show
from arena.models import Benchmark, Participant

from .import_lines import Line
from .models import Hypothesis, Reference, SeedPaper

if TYPE_CHECKING:
    from .importing import ImportSummary

_names = names_listed


class HypothesisWriter:
    """Writes one import's hypotheses; afterwards ``hypotheses`` holds every hypothesis of the benchmark by (seed pk,
    model, slot) for the labels, and ``refused`` the (seed id, model, slot) of each hypothesis line reported, so that
    the labels naming it are skipped quietly (the problem is reported once, where it is)."""

    def __init__(
        self,
        benchmark: Benchmark,
        *,
        seeds: dict[str, SeedPaper],
        frozen: set[int],
        problems: list[Problem],
        summary: ImportSummary,
    ) -> None:
        self.benchmark = benchmark
        self.seeds = seeds
        self.frozen = frozen
        self.problems = problems
        self.summary = summary
        self.created, self.unchanged = summary.created, summary.unchanged
        self.hypotheses: dict[tuple[int, str, Any], Hypothesis] = {}
        self.refused: set[tuple[str, str, Any]] = set()
        self._cite_ids: dict[int, list[str]] = {}  # seed pk -> anonymous ids of its eligible references
        self._participants: dict[str, Participant] = {}
        self._families: dict[str, str] = {}  # model -> family
        self._family_line: dict[str, str] = {}  # model -> where its family was first said
        self._where: dict[tuple[int, str, Any], str] = {}  # (seed pk, model, slot) -> "line N" or "already stored"

    def problem(self, line: Line, name: str | None, message: str) -> None:
        self.problems.append(Problem(line.ref.file, line.ref.line, name, message))

    def write(self, lines: list[Line]) -> None:
        """Each hypothesis checked against its seed's frozen bibliography, its model's family and the stored ones, and
        written. A selection's champion names the proposer's hypothesis it was chosen from: those are written after
        the others, so that their origin is there to be found."""
        for seed_pk, anon in Reference.objects.filter(seed__benchmark=self.benchmark, eligible=True).values_list(
            "seed_id", "anon_id"
        ):
            self._cite_ids.setdefault(seed_pk, []).append(anon)
        self._participants = {p.name: p for p in self.benchmark.participants.all()}
        self.hypotheses = {
            (h.seed_id, h.participant.name, h.slot): h
            for h in Hypothesis.objects.filter(seed__benchmark=self.benchmark).select_related("participant")
        }
        self._families = {name: fam for (_s, name, _slot), h in self.hypotheses.items() for fam in [h.family]}
        self._where = dict.fromkeys(self.hypotheses, "already stored")
        self._family_line = {m: "stored" for m in self._families}
        seen: dict[tuple, int | None] = {}
        texts: dict[tuple[int, str], dict[tuple[str, str], int]] = {}
        for line in sorted(lines, key=lambda line: line.values.get("selected_from") is not None):
            v = line.values
            before = len(self.problems)
            try:
                self._write_hypothesis(line, seen, texts)
            finally:
                if len(self.problems) != before:
                    self.refused.add((v["seed_id"], v["model"], v["slot"]))

    def _write_hypothesis(
        self, line: Line, seen: dict[tuple, int | None], texts: dict[tuple[int, str], dict[tuple[str, str], int]]
    ) -> None:
        """One hypothesis line: checked in the order its problems are reported, then written or found unchanged."""
        v = line.values
        seed = self._hypothesis_seed(line)
        if seed is None:
            return
        key = (seed.pk, v["model"], v["slot"])
        if key in seen:
            self.problem(
                line,
                "slot",
                f"{show(v['model'])} already has slot {v['slot']} for seed {show(v['seed_id'])} on line {seen[key]}; one hypothesis per slot",
            )
            return
        seen[key] = line.ref.line
        found, origin = self._origin(line, seed)
        if not found or not self._family_agrees(line, origin):
            return
        if v["valid"] and not self._cites_known_and_distinct(line, seed, texts):
            return
        self._store_hypothesis(line, seed, key, origin)

    def _hypothesis_seed(self, line: Line) -> SeedPaper | None:
        """The hypothesis's seed, which must have a frozen bibliography; None, reported, otherwise."""
        seed = self.seeds.get(line.values["seed_id"])
        if seed is None:
            self.problem(
                line, "seed_id", f"unknown seed {show(line.values['seed_id'])}; the seeds are {_names(sorted(self.seeds))}"
            )
            return None
        if seed.pk not in self.frozen:
            self.problem(
                line,
                "seed_id",
                f"seed {show(line.values['seed_id'])} has no frozen bibliography ({self.summary.not_frozen.get(seed.external_id, 'not frozen')}); it takes no hypotheses",
            )
            return None
        return seed

    def _origin(self, line: Line, seed: SeedPaper) -> tuple[bool, Hypothesis | None]:
        """(True, the proposer's hypothesis a champion was selected from, or None for a proposer's own hypothesis);
        (False, None), reported, when the origin named is no proposer's hypothesis, or the champion is not a copy of
        it (:meth:`_champion_problem`)."""
        v = line.values
        if v["selected_from"] is None:
            return True, None
        origin_key = (seed.pk, v["selected_from"]["model"], v["selected_from"]["slot"])
        origin = self.hypotheses.get(origin_key)
        if origin is None or origin.origin_id is not None:
            self.problem(
                line,
                "selected_from",
                f"no proposer hypothesis of {show(v['selected_from']['model'])} in slot {v['selected_from']['slot']} for seed {show(v['seed_id'])}; a champion is chosen from an imported proposer's hypothesis",
            )
            return False, None
        found = self._champion_problem(v, origin, self._where.get(origin_key, "already stored"))
        if found is not None:
            self.problem(line, *found)
            return False, None
        return True, origin

    def _champion_problem(self, v: dict[str, Any], origin: Hypothesis, where: str) -> tuple[str, str] | None:
        """(field, message) when a champion (line values ``v``) is not what a selection makes of ``origin``: a copy of
        a valid hypothesis of its own slot and family, with the same title, summary and citations. Each message names
        both hypotheses; ``where`` says where the origin is (its line, or stored)."""
        origin_named = f"slot {origin.slot} of {show(v['selected_from']['model'])} for seed {show(v['seed_id'])}, {where}"
        named = f"the hypothesis it was selected from ({origin_named})"
        if not origin.valid:
            return (
                "selected_from",
                f"{named} is invalid ({origin.invalid_reason}); a champion is chosen among valid hypotheses only",
            )
        if origin.slot != v["slot"]:
            return (
                "selected_from.slot",
                f"names {named}, but this champion of {show(v['model'])} is in slot {v['slot']}; a Swiss tournament runs per slot, so a champion keeps its origin's slot",
            )
        if origin.family != v["family"]:
            return (
                "family",
                f"is {show(v['family'])}, but the hypothesis it was selected from is of family {show(origin.family)} ({origin_named}); a champion keeps its origin's family (for recusal)",
            )
        differing = [
            key
            for key, mine, theirs in (
                ("valid", v["valid"], True),
                ("title", v["title"], origin.title),
                ("summary", v["summary"], origin.summary),
                ("cited", sorted(v["cited"]), sorted(origin.cited)),
            )
            if mine != theirs
        ]
        if differing:
            return (
                ", ".join(differing),
                f"differs from {named}; a champion is a copy of its origin: give the origin's {', '.join(differing)} as they are",
            )
        return None

    def _family_agrees(self, line: Line, origin: Hypothesis | None) -> bool:
        """A model has one family (a champion's is its origin's); False, reported, when the line says another."""
        v = line.values
        said = self._families.setdefault(v["model"], v["family"]) if origin is None else v["family"]
        self._family_line.setdefault(v["model"], f"line {line.ref.line}")
        if said != v["family"]:
            self.problem(
                line,
                "family",
                f"is {show(v['family'])}, but {show(v['model'])} is of family {show(said)} ({self._family_line[v['model']]}); a model has one family",
            )
            return False
        return True

    def _cites_known_and_distinct(
        self, line: Line, seed: SeedPaper, texts: dict[tuple[int, str], dict[tuple[str, str], int]]
    ) -> bool:
        """A valid hypothesis cites only its seed's frozen bibliography and repeats none of its model's others for the
        seed; False, reported, otherwise."""
        v = line.values
        unknown = [c for c in v["cited"] if c not in self._cite_ids.get(seed.pk, [])]
        if unknown:
            known = sorted(self._cite_ids.get(seed.pk, []), key=lambda a: int(a[1:]))
            self.problem(
                line,
                "cited",
                f'cites {_names(unknown)}, not in the frozen bibliography of seed {show(v["seed_id"])}; its ids are {_names(known)} (or mark the hypothesis "valid": false with the reason)',
            )
            return False
        same = texts.setdefault((seed.pk, v["model"]), {})
        text_key = (v["title"].strip().lower(), v["summary"].strip().lower())
        if text_key in same:
            self.problem(
                line,
                "title, summary",
                f"repeats slot {same[text_key]} of {show(v['model'])} for seed {show(v['seed_id'])}; the five hypotheses are distinct",
            )
            return False
        same[text_key] = v["slot"]
        return True

    def _store_hypothesis(self, line: Line, seed: SeedPaper, key: tuple[int, str, Any], origin: Hypothesis | None) -> None:
        """Write a new hypothesis (and its model as a participant when new); a stored one must be the same."""
        v = line.values
        old = self.hypotheses.get(key)
        if old is None:
            if v["model"] not in self._participants:
                self._participants[v["model"]] = Participant.objects.create(benchmark=self.benchmark, name=v["model"])
                self.created["participants"] += 1
            self.hypotheses[key] = Hypothesis.objects.create(
                seed=seed,
                participant=self._participants[v["model"]],
                family=v["family"],
                slot=v["slot"],
                title=v["title"],
                summary=v["summary"],
                cited=v["cited"],
                valid=v["valid"],
                invalid_reason=v["invalid_reason"],
                origin=origin,
            )
            self._where[key] = f"line {line.ref.line}"
            self.created["hypotheses"] += 1
        elif (old.title, old.summary, old.cited, old.valid, old.invalid_reason, old.origin_id) != (
            v["title"],
            v["summary"],
            v["cited"],
            v["valid"],
            v["invalid_reason"],
            origin.pk if origin else None,
        ):
            self.problem(
                line,
                "title",
                f"{show(v['model'])} already has another slot-{v['slot']} hypothesis for seed {show(v['seed_id'])}; it cannot be replaced by an import",
            )
        else:
            self.unchanged["hypotheses"] += 1
