from django.urls import path

from . import apis, views

app_name = "intrinsic"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/intrinsic/", views.paper_list_page, name="benchmark"),
    path("dashboard/benchmarks/<int:benchmark_id>/intrinsic/report/", views.report_page, name="report"),
    path("dashboard/benchmarks/<int:benchmark_id>/intrinsic/launch/", views.launch_page, name="launch"),
    path("api/benchmarks/<int:benchmark_id>/intrinsic/", apis.IntrinsicReportApi.as_view(), name="api-report"),
]
