from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from arena.models import Benchmark
from arena.permissions import ANNOTATORS_GROUP
from arena.protocols import benchmark_protocols

from .models import Study
from .services import MAX_CAP_MINUTES, study_protocols, study_protocols_text

#: The largest seed a study records (``Study.seed``, a 64-bit integer column): a larger one was an error page.
SEED_MAX = 2**63 - 1


class StudyCreateForm(forms.Form):
    """The dashboard's study form; ``annotation.services.study_create`` does the work. It offers only the benchmarks of
    the protocols studies support (``annotation.services.study_protocols``), the newest first chosen."""

    benchmark = forms.ModelChoiceField(label=_("Benchmark"), queryset=Benchmark.objects.none(), empty_label=None)
    name = forms.CharField(
        label=_("Name"), max_length=200, required=False, help_text=_("Shown to the annotators; leave blank for a default.")
    )
    n_contexts = forms.IntegerField(
        label=_("Contexts"), min_value=1, initial=13, help_text=_("Drawn stratified by batch and judge stability.")
    )
    annotators = forms.ModelMultipleChoiceField(
        label=_("Annotators"),
        queryset=get_user_model().objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Active members of the annotators group (add, invite and deactivate them on the Annotators page)."),
    )
    round = forms.ChoiceField(
        label=_("Round"),
        choices=[(Study.Round.FORMAL, _("formal")), (Study.Round.PRACTICE, _("practice"))],
        initial=Study.Round.FORMAL,
    )
    n_naive_controls = forms.IntegerField(label=_("Naive controls"), min_value=0, initial=2)
    pairs_per_context = forms.IntegerField(
        label=_("Pairs per context"),
        min_value=1,
        initial=5,
        required=False,
        help_text=_(
            "Items shown per context: K real pairs, or K−1 and the hidden control in a control context, chosen so that "
            "the control's proposal is not the odd one out by appearance count (at most 5 with controls for four models; "
            "the release showed 90 of 120 real pairs). Blank: every real pair, and a control adds one more item, which "
            "lets annotators spot it by counting."
        ),
    )
    cap_minutes = forms.IntegerField(label=_("Cap (minutes per item)"), min_value=1, max_value=MAX_CAP_MINUTES, initial=10)
    annotators_per_item = forms.IntegerField(
        label=_("Annotators per item"), min_value=1, required=False, help_text=_("Blank: every chosen annotator sees every item.")
    )
    seed = forms.IntegerField(
        label=_("Seed"),
        min_value=0,
        max_value=SEED_MAX,
        required=False,
        help_text=_("Blank: a random seed (recorded on the study)."),
    )
    # A key drawn when the form is shown: posted twice (at once, or from a stale page) it makes one study.
    launch_key = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        supported = study_protocols()
        self.supported = study_protocols_text()
        # The installed protocols whose benchmarks a study cannot use, named on the page so that a missing one is explained.
        unsupported = [p.label for p in benchmark_protocols() if p not in supported]
        self.unsupported = " and ".join(filter(None, [", ".join(unsupported[:-1]), *unsupported[-1:]]))
        field = self.fields["benchmark"]
        field.queryset = Benchmark.objects.filter(protocol__in=[p.name for p in supported])
        field.initial = field.queryset.order_by("-created_at", "-id").first()
        field.help_text = gettext("%(protocols)s benchmarks only: studies label their canonical pairs.") % {
            "protocols": self.supported
        }
        field.error_messages["invalid_choice"] = gettext(
            "That benchmark cannot hold a study: studies label canonical pairs, which only %(protocols)s benchmarks "
            "hold. Choose one of those."
        ) % {"protocols": self.supported}
        self.fields["annotators"].queryset = (
            get_user_model().objects.filter(groups__name=ANNOTATORS_GROUP, is_active=True).order_by("username")
        )


class AnnotatorCreateForm(forms.Form):
    """The annotators page's form; ``annotation.services.annotator_create`` does the work."""

    username = forms.CharField(
        label=_("Username"), max_length=150, help_text=_("Letters, digits and @ . + - _ only; the annotator logs in with it.")
    )
    email = forms.EmailField(label=_("Email"), required=False, help_text=_("Optional, for your records: no email is sent."))
