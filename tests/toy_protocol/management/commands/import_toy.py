from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.jsonl import ReleaseImportError
from arena.protocol_reports import ProtocolImportCommand

from ...importing import toy_import


class Command(ProtocolImportCommand):
    help = "Import a toy benchmark's items from DIR/items.jsonl."
    errors = (ReleaseImportError,)

    def import_folder(self, *, name: str, version: str, directory: Path, description: str) -> Any:  # noqa: ANN401
        return toy_import(name=name, version=version, directory=directory, description=description)
