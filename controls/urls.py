from django.urls import path

from . import apis, views

app_name = "controls"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/controls/", views.control_list, name="list"),
    path("dashboard/controls/<int:pk>/", views.control_detail, name="variant"),
    path("dashboard/benchmarks/<int:benchmark_id>/controls/report/", views.controls_report_page, name="report"),
    path("api/benchmarks/<int:benchmark_id>/controls/", apis.ControlsReportApi.as_view(), name="api-report"),
]
