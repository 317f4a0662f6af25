from __future__ import annotations

from pathlib import Path

from arena.protocol_reports import ProtocolImportCommand
from reconstruction.importing import FILES, ImportSummary, ReconstructionImportError, import_files, reconstruction_import
from reconstruction.services import ReconstructionError


class Command(ProtocolImportCommand):
    help = (
        f"Import a Reconstruction benchmark from a folder of JSONL files (reconstruction/FORMAT.md): {', '.join(f'{k}.jsonl' for k in FILES)}. "
        "Audits every reference and freezes each seed's bibliography. All or nothing; re-importing the same files changes nothing."
    )
    errors = (ReconstructionError, ReconstructionImportError)

    def import_folder(self, *, name: str, version: str, directory: Path, description: str) -> ImportSummary:
        return reconstruction_import(name=name, version=version, files=import_files(directory), description=description)
