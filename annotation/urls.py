from django.urls import path

from . import apis, people, views

app_name = "annotation"
urlpatterns = [
    path("annotate/", views.annotate_home, name="home"),
    path("annotate/item/<slug:token>/", views.item_detail, name="item"),
    path("annotate/item/<slug:token>/start", views.item_start, name="item-start"),
    path("annotate/item/<slug:token>/draft", views.item_draft, name="item-draft"),
    path("annotate/item/<slug:token>/submit", views.item_submit, name="item-submit"),
    path("annotate/item/<slug:token>/skip", views.item_skip, name="item-skip"),
    path("annotate/item/<slug:token>/flag", views.item_flag, name="item-flag"),
    path("guide/", views.guide, name="guide"),
    path("dashboard/studies/", views.study_list, name="studies"),
    path("dashboard/studies/<int:study_id>/", views.study_detail, name="study"),
    path("dashboard/studies/<int:study_id>/min-answer", views.study_min_answer, name="study-min-answer"),
    path("dashboard/studies/<int:study_id>/labels.csv", views.study_labels_csv, name="study-labels"),
    path("dashboard/studies/<int:study_id>/skips-flags.csv", views.study_skips_flags_csv, name="study-skips-flags"),
    path("dashboard/annotators/", people.annotator_list, name="annotators"),
    path("dashboard/annotators/<int:user_id>/", people.annotator_detail, name="annotator"),
    path("dashboard/annotators/<int:user_id>/link", people.annotator_link, name="annotator-link"),
    path("dashboard/annotators/<int:user_id>/active", people.annotator_active, name="annotator-active"),
    path("accounts/set-password/<uidb64>/<token>/", people.set_password, name="set-password"),
    path("api/studies/<int:study_id>/agreement/", apis.StudyAgreementApi.as_view(), name="api-study-agreement"),
]
