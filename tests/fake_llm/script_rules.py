"""The fake LLM's script: its schema (``DEFAULT_SCRIPT``, checked and merged by ``validate_script``) and how a
failure rule picks the requests it applies to (``rule_matches``). Standard library only; ``server.py`` imports it
whether run as a script or imported from the package.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

GENERATE_FIELDS = [
    "literature_gap",
    "hypothesis",
    "minimal_test",
    "decisive_metric",
    "supporting_result",
    "falsifying_result",
]
MODES = {"judge", "generate", "echo"}
POLICIES = {"always_a", "always_b", "always_tie", "prefer_field", "prefer_text", "random"}
LOGPROBS_MODES = {"raw_logprobs", "raw_logits", "processed_logprobs", "processed_logits"}
ENDPOINTS = {"chat", "completions", "tokenize"}

DEFAULT_SCRIPT: dict[str, Any] = {
    "latency": 0.0,
    "mode": "judge",
    "judge": {"policy": "prefer_field", "field": "hypothesis", "text": "", "seed": 0, "confidence": "high"},
    "failures": [],
    "generate": {"fields": list(GENERATE_FIELDS), "words": 30},
    "replies": [],
    "completions": {"logprobs_mode": "raw_logprobs", "tokenize": True, "max_model_len": 4096},
}


class ScriptError(ValueError):
    pass


def validate_script(raw: Any) -> dict[str, Any]:
    """Merge ``raw`` over the defaults and check it; raises ScriptError."""
    raw = _check_script_object(raw)
    script = _merge_sections(raw)
    _merge_latency_and_mode(raw, script)
    _check_mode_and_policy(script)
    _check_completions(script["completions"])
    script["failures"] = _checked_failures(raw.get("failures") or [])
    script["replies"] = _checked_replies(raw.get("replies") or [])
    return script


def _check_script_object(raw: Any) -> dict[str, Any]:
    """The script is a JSON object (None counts as empty) with only known top-level keys."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ScriptError("script must be a JSON object")
    unknown = set(raw) - set(DEFAULT_SCRIPT)
    if unknown:
        raise ScriptError(f"unknown script keys: {sorted(unknown)}")
    return raw


def _merge_sections(raw: dict[str, Any]) -> dict[str, Any]:
    """A copy of the defaults with the object sections (judge, generate, completions) of ``raw`` merged in."""
    script = copy.deepcopy(DEFAULT_SCRIPT)
    for key in ("judge", "generate", "completions"):
        if key in raw:
            if not isinstance(raw[key], dict):
                raise ScriptError(f"{key} must be an object")
            script[key].update(raw[key])
    return script


def _merge_latency_and_mode(raw: dict[str, Any], script: dict[str, Any]) -> None:
    """Copy the scalar settings ``latency`` (a float, falsy means 0) and ``mode`` into ``script``."""
    if "latency" in raw:
        script["latency"] = float(raw["latency"] or 0.0)
    if "mode" in raw:
        script["mode"] = raw["mode"]


def _check_mode_and_policy(script: dict[str, Any]) -> None:
    """The answer mode and the judge policy are known ones."""
    if script["mode"] not in MODES:
        raise ScriptError(f"mode must be one of {sorted(MODES)}")
    if script["judge"]["policy"] not in POLICIES:
        raise ScriptError(f"judge.policy must be one of {sorted(POLICIES)}")


def _check_completions(completions: dict[str, Any]) -> None:
    """The merged ``completions`` section has known keys, a known logprobs mode and a positive max_model_len."""
    unknown = set(completions) - set(DEFAULT_SCRIPT["completions"])
    if unknown:
        raise ScriptError(f"unknown completions keys: {sorted(unknown)}")
    if completions["logprobs_mode"] not in LOGPROBS_MODES:
        raise ScriptError(f"completions.logprobs_mode must be one of {sorted(LOGPROBS_MODES)}")
    if not isinstance(completions["max_model_len"], int) or completions["max_model_len"] < 1:
        raise ScriptError("completions.max_model_len must be a positive integer")


def _checked_failures(failures: Any) -> list[dict[str, Any]]:
    """``failures`` is a list of objects, each a valid failure rule; returns it."""
    if not isinstance(failures, list) or not all(isinstance(rule, dict) for rule in failures):
        raise ScriptError("failures must be a list of objects")
    for rule in failures:
        _check_failure_rule(rule)
    return failures


def _check_failure_rule(rule: dict[str, Any]) -> None:
    """One failure rule: its attempts, rate and model are well-formed, it says how to fail, and on which endpoints."""
    _check_failure_selectors(rule)
    if not {"status", "malformed", "missing_key", "sleep"} & set(rule):
        raise ScriptError("a failure needs one of status, malformed, missing_key, sleep")
    endpoints = rule.get("endpoints", ["chat", "completions"])
    if not isinstance(endpoints, list) or not set(endpoints) <= ENDPOINTS:
        raise ScriptError(f'failure "endpoints" must be a list of {sorted(ENDPOINTS)}')


def _check_failure_selectors(rule: dict[str, Any]) -> None:
    """A failure rule's request selectors: ``attempts`` ("all" or integers), ``rate`` (0..1), ``model`` (a name)."""
    attempts = rule.get("attempts", "all")
    if attempts != "all" and not (isinstance(attempts, list) and all(isinstance(a, int) for a in attempts)):
        raise ScriptError('failure "attempts" must be a list of integers or "all"')
    if "rate" in rule and not 0.0 <= float(rule["rate"]) <= 1.0:
        raise ScriptError('failure "rate" must be between 0 and 1')
    if "model" in rule and not isinstance(rule["model"], str):
        raise ScriptError('failure "model" must be a model name: the rule then applies to that model\'s requests only')


def _checked_replies(replies: Any) -> list[dict[str, Any]]:
    """``replies`` is a list of objects, each a valid canned-answer rule (normalised in place); returns it."""
    if not isinstance(replies, list) or not all(isinstance(rule, dict) for rule in replies):
        raise ScriptError("replies must be a list of objects")
    for index, rule in enumerate(replies):
        _check_reply_rule(index, rule)
    return replies


def _check_reply_rule(index: int, rule: dict[str, Any]) -> None:
    """One canned-answer rule: known keys, string ``contains`` (a lone string becomes a list) and non-empty ``answers``."""
    unknown_keys = set(rule) - {"contains", "model", "answers"}
    if unknown_keys:
        raise ScriptError(f"replies[{index}]: unknown keys {sorted(unknown_keys)}")
    contains = rule.get("contains", [])
    contains = [contains] if isinstance(contains, str) else contains
    if not isinstance(contains, list) or not all(isinstance(c, str) for c in contains):
        raise ScriptError(f'replies[{index}]: "contains" must be a string or a list of strings')
    answers = rule.get("answers")
    if not isinstance(answers, list) or not answers:
        raise ScriptError(f'replies[{index}]: "answers" must be a non-empty list')
    rule["contains"] = contains


def rule_matches(rule: dict[str, Any], task: str, attempt: int, endpoint: str = "chat", model: str | None = None) -> bool:
    if endpoint not in rule.get("endpoints", ["chat", "completions"]):
        return False
    if "model" in rule and rule["model"] != model:
        return False
    if "rate" in rule:
        digest = hashlib.sha1(f"{task}:{attempt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < float(rule["rate"])
    attempts = rule.get("attempts", "all")
    return attempts == "all" or attempt in attempts
