from django.urls import path

from . import views

app_name = "controls"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/controls/", views.control_list, name="list"),
    path("dashboard/controls/<int:pk>/", views.control_detail, name="variant"),
]
