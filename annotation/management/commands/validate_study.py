from __future__ import annotations

from collections import defaultdict

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from annotation.selectors import ValidationEntry, study_validation


class Command(BaseCommand):
    help = (
        "Run the completeness validator over a whole study: a summary per annotator, and every stored label that fails "
        "validation (it never should). Items not yet submitted are pending, which is not an error: the command exits 1 "
        "only when a stored label fails, or, with --require-complete, while any item is pending."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", type=int, help="study id (shown on /dashboard/studies/)")
        parser.add_argument(
            "--pending", action="store_true", help="also list every pending item with what its draft still misses"
        )
        parser.add_argument(
            "--require-complete", action="store_true", help="exit 1 while any item is pending (e.g. before an export)"
        )
        parser.add_argument("--quiet", action="store_true", help="print only failing labels and the study's summary line")

    def handle(self, *args: object, **options: object) -> None:
        try:
            study = Study.objects.get(pk=options["study"])
        except Study.DoesNotExist as exc:
            raise CommandError(f"no study {options['study']}") from exc
        report = study_validation(study=study)
        per_annotator: dict[str, list[ValidationEntry]] = defaultdict(list)
        for e in report.entries:
            per_annotator[e.annotator].append(e)
        for annotator, entries in per_annotator.items():
            pending = [e for e in entries if e.status == "pending"]
            skipped = [e for e in entries if e.status == "skipped"]  # set aside by the annotator: missing, no verdict
            started = sum(e.started for e in pending)
            failing = [e for e in entries if e.status == "invalid"]
            if not options["quiet"]:
                self.stdout.write(
                    f"{annotator}: {sum(e.status == 'ok' for e in entries)} of {len(entries)} complete, {len(pending)} pending "
                    f"({started} started, {len(pending) - started} not started), "
                    + (f"{len(skipped)} skipped, " if skipped else "")
                    + f"{len(failing)} failing"
                )
            for e in failing:
                self.stdout.write(self._line(e, annotator if options["quiet"] else None))
            if options["pending"] and not options["quiet"]:
                for e in pending + skipped:
                    self.stdout.write(self._line(e, None))
        skips = f"{len(report.skipped)} skipped, " if report.skipped else ""
        self.stdout.write(
            f"study {study.pk}: {report.ok} complete, {len(report.pending)} pending, {skips}"
            f"{len(report.invalid)} stored labels failing validation"
        )
        # A skipped item is not complete either: an export waits for it to be answered.
        if report.invalid or (options["require_complete"] and (report.pending or report.skipped)):
            raise SystemExit(1)

    @staticmethod
    def _line(e: ValidationEntry, annotator: str | None) -> str:
        line = f"  {annotator + ' ' if annotator else ''}item {e.position:>3} (#{e.item}): {e.status}"
        if not e.started:
            return line + " — not started"
        if e.problems:
            line += " — " + "; ".join(f"{field}: {message}" for field, message in e.problems.items())
        return line
