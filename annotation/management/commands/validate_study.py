from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from annotation.selectors import study_validation


class Command(BaseCommand):
    help = "Run the completeness validator over a whole study; exits 1 when any item is pending or any stored label fails."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", type=int)
        parser.add_argument("--quiet", action="store_true", help="print only the problems and the summary")

    def handle(self, *args: object, **options: object) -> None:
        try:
            study = Study.objects.get(pk=options["study"])
        except Study.DoesNotExist as exc:
            raise CommandError(f"no study {options['study']}") from exc
        report = study_validation(study=study)
        current = None
        for e in report.entries:
            if options["quiet"] and e.status == "ok":
                continue
            if e.annotator != current:
                current = e.annotator
                self.stdout.write(f"{current}:")
            line = f"  item {e.position:>3} (#{e.item}): {e.status}"
            if not e.started:
                line += " — not started"
            elif e.problems:
                line += " — " + "; ".join(f"{field}: {message}" for field, message in e.problems.items())
            self.stdout.write(line)
        self.stdout.write(
            f"study {study.pk}: {report.ok} complete, {len(report.pending)} pending, {len(report.invalid)} stored labels failing validation"
        )
        if report.has_problems:
            raise SystemExit(1)
