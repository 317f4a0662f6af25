from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from .forms import ReleaseUploadForm
from .models import Benchmark, Proposal
from .permissions import researcher_required, user_is_researcher
from .release import ReleaseImportError, release_export, release_files, release_import
from .selectors import benchmark_list, paper_provenance_audit


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    if user_is_researcher(request.user):
        return redirect("arena:dashboard")
    return render(request, "arena/welcome.html")


@require_http_methods(["GET", "POST"])
@researcher_required
def dashboard(request: HttpRequest) -> HttpResponse:
    form = ReleaseUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        with tempfile.TemporaryDirectory() as folder:
            for upload in form.cleaned_data["files"]:
                # Only the base name is kept: an upload cannot write outside the folder.
                (Path(folder) / Path(upload.name).name).write_bytes(upload.read())
            known = {p.name for paths in release_files(Path(folder)).values() for p in paths}
            ignored = sorted({Path(u.name).name for u in form.cleaned_data["files"]} - known)
            try:
                summary = release_import(
                    directory=Path(folder),
                    benchmark_name=form.cleaned_data["benchmark"],
                    version=form.cleaned_data["version"],
                )
            except ReleaseImportError as exc:
                form.add_error("files", [str(p) for p in exc.problems[:50]])
            else:
                messages.success(request, summary.line())
                if ignored:
                    messages.warning(request, f"ignored files that are not release files: {', '.join(ignored)}")
                return redirect("arena:dashboard")
    return render(request, "arena/dashboard.html", {"benchmarks": benchmark_list(), "form": form})


@require_GET
@researcher_required
def benchmark_detail(request: HttpRequest, benchmark_id: int) -> HttpResponse:
    benchmark = get_object_or_404(benchmark_list(), pk=benchmark_id)
    proposals = Proposal.objects.filter(context__benchmark=benchmark).select_related("context", "participant")
    return render(
        request,
        "arena/benchmark_detail.html",
        {
            "benchmark": benchmark,
            "runs": benchmark.runs.all(),
            "invalid_proposals": [p for p in proposals if p.validation_status != Proposal.Status.VALID],
            "n_proposals": len(proposals),
            "repeated_papers": paper_provenance_audit(benchmark=benchmark),
        },
    )


@require_GET
@researcher_required
def benchmark_export(request: HttpRequest, benchmark_id: int) -> FileResponse:
    benchmark = get_object_or_404(Benchmark, pk=benchmark_id)
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder:
        release_export(benchmark=benchmark, directory=Path(folder))
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(Path(folder).iterdir()):
                archive.write(path, arcname=path.name)
    buffer.seek(0)
    filename = f"{benchmark.name}-v{benchmark.version}-export.zip"
    return FileResponse(buffer, as_attachment=True, filename=filename, content_type="application/zip")
