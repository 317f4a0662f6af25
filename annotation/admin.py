from django.contrib import admin

from .models import Assignment, Flag, Item, Label, NaiveProposal, Study


class Recorded(admin.ModelAdmin):
    """What annotators did, and what they were shown, is a record: shown, never changed or added here. The human win
    rate is cached and stored under a fingerprint of the labels' number and newest id (``annotation.caching``), which
    an edit in place would not move; a label or item is removed (with its study) or not at all."""

    def has_add_permission(self, request, obj=None) -> bool:  # noqa: ANN001
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # noqa: ANN001
        return False


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "benchmark", "round", "cap_minutes", "annotators_per_item", "created_at")
    list_filter = ("round", "benchmark")
    filter_horizontal = ("annotators",)


@admin.register(Item)
class ItemAdmin(Recorded):
    list_display = ("id", "study", "position", "context", "is_control")
    list_filter = ("study", "is_control")
    raw_id_fields = ("pair", "first_proposal", "second_proposal", "naive", "context")


@admin.register(Assignment)
class AssignmentAdmin(Recorded):
    list_display = ("id", "study", "annotator", "position", "a_is_first", "opened_at", "draft_saved_at", "skipped_at")
    list_filter = ("study", "annotator")
    raw_id_fields = ("item",)


@admin.register(Label)
class LabelAdmin(Recorded):
    list_display = ("id", "assignment", "choice", "winner_side", "reason", "confidence", "over_time", "submitted_at")
    list_filter = ("over_time", "choice", "assignment__study")
    raw_id_fields = ("assignment",)


@admin.register(NaiveProposal)
class NaiveProposalAdmin(admin.ModelAdmin):
    list_display = ("id", "context", "generator_version", "created_at")


@admin.register(Flag)
class FlagAdmin(admin.ModelAdmin):
    list_display = ("id", "assignment", "created_at", "comment")
    list_filter = ("assignment__study",)
    raw_id_fields = ("assignment",)
