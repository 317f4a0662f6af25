"""``manage.py sentinels BENCHMARK``: a benchmark's drift sentinels (``jobs.sentinels``), for every protocol.

--pin RUN --size N [--seed S]        freeze the verdicts of N subjects of a completed run
--check --model M --base-url URL     re-judge the sentinels with a judge configuration (a small judge run)
--status [--json]                    the configurations' checks, agreements and what is refused
--accept CONFIG                      accept a drifted configuration (its key, or its judge model)
--tolerance T, --refuse-drifted / --allow-drifted, --every MINUTES (with --model, --base-url) / --unschedule
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.models import JudgeRun
from arena.selectors import benchmark_resolve
from jobs.forms import JudgeRunForm, argument_type
from jobs.lifecycle import RunError
from jobs.sentinels import (
    CHECK_EVERY_MAX,
    CHECK_EVERY_MIN,
    CheckConfig,
    sentinel_check_launch,
    sentinels_accept,
    sentinels_of,
    sentinels_pin,
    sentinels_settings_update,
    sentinels_status,
)


def _every(minutes: float | None) -> timedelta | None:
    """``--every`` as a timedelta, refused (naming the option and its range) unless it is a finite number of minutes
    the schedule accepts: NaN, an infinity or 1e12 minutes would not make a timedelta, or not one a database stores."""
    if minutes is None:
        return None
    low, high = CHECK_EVERY_MIN.total_seconds() / 60, CHECK_EVERY_MAX.total_seconds() / 60
    if not math.isfinite(minutes) or not low <= minutes <= high:
        raise CommandError(f"--every is the minutes between scheduled checks, from {low:g} to {high:g} (a year); got {minutes}")
    return timedelta(minutes=minutes)


class Command(BaseCommand):
    help = "Pin, check, show and accept a benchmark's drift sentinels (frozen verdicts of a reference judge)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("benchmark", help="benchmark id, name or name@version")
        actions = parser.add_mutually_exclusive_group()
        actions.add_argument("--pin", type=int, metavar="RUN", help="pin sentinels from this completed judge run")
        actions.add_argument("--check", action="store_true", help="re-judge the sentinels with --model at --base-url")
        actions.add_argument("--status", action="store_true", help="show the checks per judge configuration")
        actions.add_argument("--accept", metavar="CONFIG", help="accept a drifted configuration (its key or judge model)")
        parser.add_argument("--size", type=int, default=20, help="sentinel subjects to pin (default 20)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the draw of the pinned subjects (default 0)")
        parser.add_argument("--model", help="the judge model a check (or the schedule) asks")
        parser.add_argument("--base-url", default="", help="its OpenAI-compatible endpoint")
        parser.add_argument("--api-key-env", default=None, help="the variable holding its API key")
        parser.add_argument("--prompt-version", default=None, help="prompt template (default: the reference's)")
        # Checked by the run form's own fields, as run_judge does: a check is a judge run.
        field = JudgeRunForm.base_fields
        parser.add_argument("--temperature", type=argument_type(field["temperature"]), default=0.0)
        parser.add_argument("--max-tokens", type=argument_type(field["max_tokens"]), default=1024)
        parser.add_argument("--json", action="store_true", help="--status as JSON")
        parser.add_argument("--tolerance", type=float, default=None, help="the share of frozen verdicts a check must give")
        refuse = parser.add_mutually_exclusive_group()
        refuse.add_argument("--refuse-drifted", action="store_true", help="refuse runs of drifted configurations")
        refuse.add_argument("--allow-drifted", action="store_true", help="stop refusing them")
        schedule = parser.add_mutually_exclusive_group()
        schedule.add_argument("--every", type=float, default=None, metavar="MINUTES", help="check on a schedule (beat)")
        schedule.add_argument("--unschedule", action="store_true", help="stop the scheduled checks")
        parser.add_argument("--by", default=None, help="the researcher's username (recorded with --pin and --accept)")

    def handle(self, *args: object, **o: Any) -> None:  # noqa: ANN401
        _every(o["every"])  # refused before anything is pinned or changed
        try:
            benchmark = benchmark_resolve(reference=str(o["benchmark"]))
        except ObjectDoesNotExist as exc:
            raise CommandError(str(exc)) from None
        by = self._user(o["by"])
        try:
            if o["pin"] is not None:
                self._pin(benchmark, o, by)
            sentinel_set = sentinels_of(benchmark)
            self._settings(sentinel_set, o)
            if o["check"]:
                run = sentinel_check_launch(sentinel_set=sentinel_set, config=self._config(o, "--check"), launched_by=by)
                self.stdout.write(f"check run: {run.pk} ({run.judge_model}); its agreement is recorded when it ends")
            elif o["accept"]:
                check = sentinels_accept(sentinel_set=sentinel_set, config=o["accept"], by=by)
                self.stdout.write(
                    f"configuration {check.config_key} accepted after check {check.pk} ({check.accepted_at:%Y-%m-%d %H:%M} UTC)"
                )
            elif o["status"]:
                self._status(sentinels_status(sentinel_set), o["json"])
        except RunError as exc:
            raise CommandError(str(exc)) from None

    def _user(self, username: str | None) -> Any:  # noqa: ANN401
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r} (--by)")
        return user

    def _pin(self, benchmark: Any, o: dict[str, Any], by: Any) -> None:  # noqa: ANN401
        run = JudgeRun.objects.filter(pk=o["pin"], benchmark=benchmark).first()
        if run is None:
            raise CommandError(f"{benchmark} has no run {o['pin']} (--pin)")
        pinned = sentinels_pin(benchmark=benchmark, run=run, size=o["size"], seed=o["seed"], by=by)
        n = pinned.items.count()
        self.stdout.write(f"pinned {n} frozen verdicts of run {run.pk} (configuration {pinned.reference['key']})")

    def _config(self, o: dict[str, Any], flag: str) -> CheckConfig:
        if not o["model"] or not o["base_url"]:
            raise CommandError(f"{flag} needs --model and --base-url (the judge configuration to check)")
        return CheckConfig(  # refuses a URL holding a key (RunError, which handle reports) before anything is stored
            judge_model=o["model"],
            base_url=o["base_url"],
            api_key_env=o["api_key_env"],
            prompt_version=o["prompt_version"],
            temperature=o["temperature"],
            max_tokens=o["max_tokens"],
        )

    def _settings(self, sentinel_set: Any, o: dict[str, Any]) -> None:  # noqa: ANN401
        refuse = True if o["refuse_drifted"] else (False if o["allow_drifted"] else None)
        every = _every(o["every"])
        scheduled = self._config(o, "--every") if every is not None else None
        if o["tolerance"] is None and refuse is None and every is None and not o["unschedule"]:
            return
        sentinels_settings_update(
            sentinel_set=sentinel_set,
            tolerance=o["tolerance"],
            refuse_drifted=refuse,
            check_every=every,
            scheduled=scheduled,
            unschedule=o["unschedule"],
        )
        self.stdout.write(
            f"settings: tolerance {sentinel_set.tolerance}, refuse drifted {'on' if sentinel_set.refuse_drifted else 'off'}, "
            f"schedule {sentinel_set.check_every or 'none'}"
        )

    def _status(self, status: dict[str, Any], as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(status, indent=2, sort_keys=True))
            return
        self.stdout.write(
            f"{status['subject_count']} sentinel subjects of run {status['reference_run']}; tolerance {status['tolerance']}; "
            f"refuse drifted: {'on' if status['refuse_drifted'] else 'off'}"
        )
        for config in status["configurations"]:
            last = config["last"]
            if last is None:
                self.stdout.write(f"  {config['key']}  {config['label']}: no check done yet")
                continue
            state = "DRIFTED" if config["alert"] else ("drifted, accepted" if last["drifted"] else "ok")
            previous = "—" if last["previous_agreement"] is None else f"{last['previous_agreement']:.2f}"
            self.stdout.write(
                f"  {config['key']}  {config['label']}: agreement {last['agreement']:.2f} "
                f"({last['agreed']}/{last['compared']}), with the previous check {previous}; {state}"
                + (" (refused)" if config["refused"] else "")
            )
