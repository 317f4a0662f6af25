"""``python manage.py intrinsic_demo_endpoint [--port P]``: serve the demo's scripted scorer endpoint
(``intrinsic/demo_endpoint.py``: a deterministic toy, not a language model) on 127.0.0.1 until stopped."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from intrinsic.demo_endpoint import MODEL, serve


class Command(BaseCommand):
    help = "Serve the demo's toy completions + /tokenize endpoint (raw_logprobs mode; NLL only) on 127.0.0.1."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8011)

    def handle(self, *args: object, port: int, **options: object) -> None:
        try:
            server = serve("127.0.0.1", port)
        except OSError as exc:
            raise CommandError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); choose another --port") from None
        self.stdout.write(f"demo scorer endpoint ({MODEL}, not a language model) at http://127.0.0.1:{port}/v1", ending="\n")
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
