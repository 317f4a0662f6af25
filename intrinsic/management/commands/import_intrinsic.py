from __future__ import annotations

from pathlib import Path

from arena.protocol_reports import ProtocolImportCommand
from intrinsic.importing import FILES, ImportSummary, IntrinsicError, IntrinsicImportError, import_files, intrinsic_import


class Command(ProtocolImportCommand):
    help = (
        f"Import an Intrinsic-scoring benchmark from a folder of JSONL files (intrinsic/FORMAT.md): {', '.join(f'{k}.jsonl' for k in FILES)}. "
        "All or nothing; re-importing the same files changes nothing."
    )
    errors = (IntrinsicError, IntrinsicImportError)

    def import_folder(self, *, name: str, version: str, directory: Path, description: str) -> ImportSummary:
        return intrinsic_import(name=name, version=version, files=import_files(directory), description=description)
