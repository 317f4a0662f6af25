"""The lines of the Intrinsic files (``FORMAT.md``), read one at a time: what each may hold and how a problem is named.

Apart from :mod:`intrinsic.importing` (which checks the lines against each other and the stored rows, then writes)
because a line's own rules need no database: each reader method turns one JSON object into the values the import
writes, or records every problem of the line (file, line, field, the value refused and what to do) and gives None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.jsonl import Fields, Ref, json_type, names_listed, show

from .models import LISTWISE_TOP, Candidate, CandidateScore, ListwiseRanking, Paper, Scorer

PAPER_KEYS = ("paper_id", "discipline", "background", "question", "candidates")
CANDIDATE_KEYS = ("id", "text", "gold")
SCORE_KEYS = ("paper_id", "candidate_id", "scorer", "model", "criterion", "mean", "sum", "tokens", "endpoint")
LISTWISE_KEYS = ("paper_id", "scorer", "model", "top", "status", "reason", "endpoint")
SCORE_CRITERIA = (Scorer.Criterion.NLL.value, Scorer.Criterion.ENERGY.value)
STATUSES = tuple(ListwiseRanking.Status.values)
MIN_CANDIDATES = 2
MAX_CANDIDATES = 1_000
#: How far mean × tokens may be from sum (relative to max(1, |sum|)): rounding in the file, never a swapped column.
SUM_TOLERANCE = 1e-3
#: An NLL is −log of a probability: never below 0, but a server's float rounding may give −1e-7.
NLL_FLOOR = -1e-6

# The columns the values go to: a value longer than its column's max_length is a problem (arena.jsonl.Fields).
PAPER_ID = (Paper, "external_id")
DISCIPLINE = (Paper, "discipline")
BACKGROUND = (Paper, "background")
QUESTION = (Paper, "question")
CANDIDATE_ID = (Candidate, "external_id")
CANDIDATE_TEXT = (Candidate, "text")
SCORER_NAME = (Scorer, "name")
SCORER_MODEL = (Scorer, "model")
ENDPOINT = (Scorer, "endpoint")
TOKENS = (CandidateScore, "tokens")
REASON = (ListwiseRanking, "reason")

_names = names_listed


@dataclass(slots=True)
class Line:
    """One line's checked values, with where it came from (for the problems found when it is written)."""

    ref: Ref
    values: dict[str, Any]


@dataclass
class LineReader:
    """Parses lines; remembers the papers whose line was refused, so lines naming them are not reported twice."""

    refused_papers: set[str] = field(default_factory=set)
    paper_lines: dict[str, int | None] = field(default_factory=dict)  # paper id -> its first line, refused or not

    def unknown_keys(self, f: Fields, record: Mapping[str, Any], keys: Sequence[str], what: str) -> None:
        for key in sorted(set(record) - set(keys)):
            f.problem(key, f"is not a field of {what}; the fields are {', '.join(keys)} (remove it, or check its spelling)")

    def paper(self, record: dict[str, Any], f: Fields) -> Line | None:
        before = len(f.problems)
        self.unknown_keys(f, record, PAPER_KEYS, "a papers.jsonl line")
        values: dict[str, Any] = {
            "paper_id": f.text("paper_id", PAPER_ID, numbers=True, identifier=True),
            "discipline": f.text("discipline", DISCIPLINE),
            "background": f.text("background", BACKGROUND),
            "question": f.text("question", QUESTION),
        }
        values["candidates"] = self.candidates(record.get("candidates"), f)
        first = self.paper_lines.setdefault(values["paper_id"], f.ref.line) if values["paper_id"] else f.ref.line
        if first != f.ref.line:
            f.problem("paper_id", f"{show(values['paper_id'])} repeats line {first}; each paper appears once")
            return None
        if len(f.problems) != before:
            if values["paper_id"]:
                self.refused_papers.add(values["paper_id"])
            return None
        return Line(f.ref, values)

    def candidates(self, raw: Any, f: Fields) -> list[tuple[str, str, bool]]:  # noqa: ANN401
        """(id, text, gold) per candidate, in the file's order; problems named ``candidates[i].field``."""
        shape = '[{"id": ..., "text": ..., "gold": true|false}, ...]'
        if raw is None:
            f.problem("candidates", f"missing; a list of the paper's candidate hypotheses {shape}")
            return []
        if not isinstance(raw, list):
            f.problem("candidates", f"must be a list of candidates {shape}, got {json_type(raw)}")
            return []
        if not MIN_CANDIDATES <= len(raw) <= MAX_CANDIDATES:
            f.problem(
                "candidates",
                f"has {len(raw)} candidate(s); a paper has {MIN_CANDIDATES} to {MAX_CANDIDATES} (its gold hypothesis and at least one distractor)",
            )
            return []
        out: list[tuple[str, str, bool]] = []
        ids: dict[str, int] = {}
        texts: dict[str, int] = {}
        golds: list[str] = []
        for i, item in enumerate(raw):
            prefix = f"candidates[{i}]."
            if not isinstance(item, dict):
                f.problem(f"candidates[{i}]", f'must be an object {{"id", "text", "gold"}}, got {json_type(item)}')
                continue
            c = Fields(item, f.ref, f.problems, prefix=prefix)
            self.unknown_keys(c, item, CANDIDATE_KEYS, "a candidate")
            cid = c.text("id", CANDIDATE_ID, numbers=True, identifier=True)
            text = item.get("text")
            if isinstance(text, str) and not text.strip():
                c.problem(
                    "text",
                    f"empty; give candidate {show(cid)} its hypothesis text (an empty candidate cannot be scored), or remove it",
                )
                text = ""
            else:
                text = c.text("text", CANDIDATE_TEXT)
            gold = c.flag("gold", False)
            if cid:
                if cid in ids:
                    c.problem("id", f"{show(cid)} repeats candidates[{ids[cid]}]; candidate ids are unique within a paper")
                ids.setdefault(cid, i)
            if text:
                key = " ".join(text.split()).lower()
                if key in texts:
                    c.problem(
                        "text", f"repeats the text of candidates[{texts[key]}]; the candidates of a paper are distinct hypotheses"
                    )
                texts.setdefault(key, i)
            if gold:
                golds.append(cid or f"candidates[{i}]")
            out.append((cid, text, gold))
        if len(out) == len(raw) and len(golds) != 1:
            if not golds:
                f.problem(
                    "candidates",
                    'no candidate has "gold": true; mark the paper\'s own hypothesis "gold": true (exactly one per paper)',
                )
            else:
                f.problem(
                    "candidates",
                    f'{len(golds)} candidates are gold ({_names(golds)}); exactly one, the paper\'s own hypothesis, has "gold": true: set the others to false',
                )
        return out

    def _finite_number(self, f: Fields, key: str, what: str) -> float | None:
        value = f.record.get(key)
        if value is None:
            f.problem(key, f"missing; {what}")
            return None
        return f.number(key, minimum=-math.inf)

    def score(self, record: dict[str, Any], f: Fields) -> Line | None:
        before = len(f.problems)
        self.unknown_keys(f, record, SCORE_KEYS, "a scores.jsonl line")
        values: dict[str, Any] = {
            "paper_id": f.text("paper_id", PAPER_ID, numbers=True, identifier=True),
            "candidate_id": f.text("candidate_id", CANDIDATE_ID, numbers=True),
            "scorer": f.text("scorer", SCORER_NAME),
            "model": f.text("model", SCORER_MODEL, identifier=True),
            "endpoint": self._endpoint(f),
        }
        criterion = record.get("criterion")
        if criterion not in SCORE_CRITERIA:
            hint = "; a listwise scorer's rankings go in listwise.jsonl" if criterion == Scorer.Criterion.LISTWISE else ""
            f.problem(
                "criterion",
                f"{'missing' if criterion is None else 'must be one of ' + _names(SCORE_CRITERIA) + ', got ' + show(criterion)}{hint}; "
                '"nll" for the mean/sum of −log softmax at each target token, "energy" for the negated raw target logit',
            )
        values["criterion"] = criterion
        mean = self._finite_number(f, "mean", "the mean score over the hypothesis tokens (lower is better)")
        total = self._finite_number(f, "sum", "the summed score over the hypothesis tokens")
        tokens = f.integer("tokens", TOKENS, minimum=1)
        if tokens is None and record.get("tokens") is None:
            f.problem("tokens", "missing; the number of hypothesis tokens scored (1 or more)")
        if criterion == Scorer.Criterion.NLL:
            for key, value in (("mean", mean), ("sum", total)):
                if value is not None and value < NLL_FLOOR:
                    f.problem(
                        key,
                        f'is {show(value)}; an NLL is −log of a probability, never negative (is this an "energy" scorer, or a log-probability not negated?)',
                    )
        if (
            mean is not None
            and total is not None
            and tokens is not None
            and abs(mean * tokens - total) > SUM_TOLERANCE * max(1.0, abs(total))
        ):
            f.problem(
                "sum",
                f"is {show(total)}, but mean × tokens = {mean * tokens:.6g}; the mean is the sum over the hypothesis tokens divided by their number",
            )
        values |= {"mean": mean, "total": total, "tokens": tokens}
        if len(f.problems) != before:
            return None
        return Line(f.ref, values)

    def _endpoint(self, f: Fields) -> str | None:
        """None when the line says nothing of the endpoint (a stored scorer keeps its own)."""
        if f.record.get("endpoint") is None:
            return None
        return f.text("endpoint", ENDPOINT, required=False)

    def listwise(self, record: dict[str, Any], f: Fields) -> Line | None:
        before = len(f.problems)
        self.unknown_keys(f, record, LISTWISE_KEYS, "a listwise.jsonl line")
        values: dict[str, Any] = {
            "paper_id": f.text("paper_id", PAPER_ID, numbers=True, identifier=True),
            "scorer": f.text("scorer", SCORER_NAME),
            "model": f.text("model", SCORER_MODEL, identifier=True),
            "endpoint": self._endpoint(f),
            "status": f.choice("status", STATUSES, ListwiseRanking.Status.ACCEPTED),
        }
        invalid = values["status"] == ListwiseRanking.Status.INVALID
        values["reason"] = f.text("reason", REASON, required=invalid)
        if not invalid and values["reason"]:
            f.problem("reason", 'is given for an accepted ranking; leave it out, or set "status": "invalid"')
        top = record.get("top")
        ids: list[str] = []
        if invalid:
            if top not in (None, []):
                f.problem(
                    "top",
                    'must be empty or left out in an invalid ranking (the judge\'s answer was refused; say why in "reason")',
                )
        elif not isinstance(top, list) or not top:
            f.problem(
                "top",
                f"{'missing' if top is None else 'must be a non-empty list of candidate ids, got ' + json_type(top)}; the judge's best {LISTWISE_TOP} candidate ids, best first",
            )
        else:
            for i, item in enumerate(top):
                if isinstance(item, bool) or not isinstance(item, (str, int)) or (isinstance(item, str) and not item.strip()):
                    f.problem(f"top[{i}]", f"must be a candidate id, got {show(item)}")
                    continue
                cid = str(item)
                if cid in ids:
                    f.problem(
                        f"top[{i}]",
                        f"{show(cid)} is already listed at top[{ids.index(cid)}]; a ranking lists each candidate once",
                    )
                    continue
                ids.append(cid)
        values["top"] = ids
        if len(f.problems) != before:
            return None
        return Line(f.ref, values)
