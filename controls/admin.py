from __future__ import annotations

from django.contrib import admin

from .models import ControlAttempt, ControlVariant


@admin.register(ControlVariant)
class ControlVariantAdmin(admin.ModelAdmin):
    list_display = ("control_id", "benchmark", "kind", "target", "status", "origin", "generator", "created_at")
    list_filter = ("benchmark", "kind", "target", "status", "origin")
    search_fields = ("control_id",)
    raw_id_fields = ("context", "source")


@admin.register(ControlAttempt)
class ControlAttemptAdmin(admin.ModelAdmin):
    list_display = ("control_id", "round", "step", "outcome", "model", "created_at")
    list_filter = ("benchmark", "step", "outcome")
    raw_id_fields = ("variant", "source")
