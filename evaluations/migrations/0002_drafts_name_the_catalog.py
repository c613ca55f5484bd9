"""An evaluation's ``drafts`` name each applied draft's kind as ``<app label>.<model>``: the drafts of
configurations evaluated before the split name ``agents.configuration``, now ``catalog.configuration``,
so that a passing evaluation recorded before an upgrade still lets its draft be published
(docs/decisions/0031-apps-by-feature.md)."""

from django.db import migrations

RENAMED = {"agents.configuration": "catalog.configuration"}


def _rename(apps, schema_editor, renamed):
    Evaluation = apps.get_model("evaluations", "Evaluation")
    for evaluation in Evaluation.objects.using(schema_editor.connection.alias).exclude(drafts=[]):
        drafts = [
            {**item, "kind": renamed.get(item.get("kind"), item.get("kind"))} for item in evaluation.drafts
        ]
        if drafts != evaluation.drafts:
            Evaluation.objects.filter(pk=evaluation.pk).update(drafts=drafts)


def forwards(apps, schema_editor):
    _rename(apps, schema_editor, RENAMED)


def backwards(apps, schema_editor):
    _rename(apps, schema_editor, {new: old for old, new in RENAMED.items()})


class Migration(migrations.Migration):
    dependencies = [("evaluations", "0001_initial"), ("agents", "0025_models_move_to_their_apps")]

    operations = [migrations.RunPython(forwards, backwards)]
