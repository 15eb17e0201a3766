from django.db import migrations, models


def fill_search_documents(apps, schema_editor):
    from wiki.models import search_documents

    WikiPage = apps.get_model("wiki", "WikiPage")
    for page in WikiPage.objects.all().iterator():
        page.search_head, page.search_body = search_documents(page)
        page.save(update_fields=["search_head", "search_body"])


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="wikipage",
            name="search_head",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.AddField(
            model_name="wikipage",
            name="search_body",
            field=models.TextField(blank=True, default="", editable=False),
        ),
        migrations.RunPython(fill_search_documents, migrations.RunPython.noop),
    ]
