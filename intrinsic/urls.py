from django.urls import path

from . import views

app_name = "intrinsic"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/intrinsic/", views.paper_list_page, name="benchmark"),
]
