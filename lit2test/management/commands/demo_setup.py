from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from arena.models import Benchmark
from arena.permissions import ANNOTATORS_GROUP
from lit2test.release import ReleaseImportError, release_import

DEMO_USERS = [("researcher", True), ("annotator1", False), ("annotator2", False), ("annotator3", False)]
DEMO_PASSWORD = "lit2test-demo"


class Command(BaseCommand):
    help = "Create the demo accounts and import the release sample when it is present (demo only)."

    def handle(self, *args: object, **options: object) -> None:
        users = get_user_model()
        annotators, _ = Group.objects.get_or_create(name=ANNOTATORS_GROUP)
        for username, staff in DEMO_USERS:
            user, created = users.objects.get_or_create(username=username, defaults={"is_staff": staff})
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            if not staff:
                user.groups.add(annotators)
        data = Path(settings.LIT2TEST_DATA)
        if not data.is_dir():
            self.stdout.write(
                f"No release sample at {data}. Import one with:\n"
                "  .venv/bin/python manage.py import_lit2test /path/to/release\n"
                "or set LIT2TEST_DATA before `make demo`, or use the upload form on the dashboard."
            )
        elif not Benchmark.objects.filter(name="lit2test").exists():
            try:
                self.stdout.write(release_import(directory=data).line())
            except ReleaseImportError as exc:
                self.stderr.write(str(exc))
        self.stdout.write("Logins (password for all: {}): {}".format(DEMO_PASSWORD, ", ".join(u for u, _ in DEMO_USERS)))
