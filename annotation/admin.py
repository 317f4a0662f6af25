from django.contrib import admin

from .models import Assignment, Flag, Item, Label, NaiveProposal, Study


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "benchmark", "round", "cap_minutes", "annotators_per_item", "created_at")
    list_filter = ("round", "benchmark")
    filter_horizontal = ("annotators",)


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "position", "context", "is_control")
    list_filter = ("study", "is_control")
    raw_id_fields = ("pair", "first_proposal", "second_proposal", "naive", "context")


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "annotator", "position", "a_is_first", "opened_at", "draft_saved_at", "skipped_at")
    list_filter = ("study", "annotator")
    raw_id_fields = ("item",)


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
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
