"""What a run page calls the subject of a rubric answer (HypoArena) or of a match label (Reconstruction) reads in the
page's language: "Aster-L on bio-001" in English, "Aster-L（bio-001）" in Chinese (names and ids stay as they are)."""

from __future__ import annotations

from django.utils import translation

from arena.models import Participant
from hypoarena.models import Case, Submission
from reconstruction.models import Hypothesis, SeedPaper


def test_the_subject_labels_follow_the_active_language() -> None:
    submission = Submission(participant=Participant(name="Aster-L"), case=Case(external_id="bio-001"))
    hypothesis = Hypothesis(participant=Participant(name="Aster-L"), seed=SeedPaper(external_id="s1"), slot=2)
    assert (str(submission), str(hypothesis)) == ("Aster-L on bio-001", "Aster-L on s1, slot 2")
    with translation.override("zh-hans"):
        assert (str(submission), str(hypothesis)) == ("Aster-L（bio-001）", "Aster-L（s1，第 2 条）")
