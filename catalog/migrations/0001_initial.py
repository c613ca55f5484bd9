"""The catalogue's models, until now the agents app's: providers, models, configurations and API clients.

The models kept their tables (``db_table``), so this migration changes no table: the models join this
app's state (``SeparateDatabaseAndState``, no database operation), and their content types move to
this app in place, keeping their ids, so permissions, groups, drafts and the admin log that point at
them are untouched (docs/decisions/0031-apps-by-feature.md).
"""

import django.core.validators
import django.db.models.deletion
import simple_history.models
from django.conf import settings
from django.db import migrations, models

import catalog.models.catalog
from governance.migration_operations import content_types_moved


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("agents", "0024_mcp_server_names_end_in_no_underscore"),
        ("governance", "0014_governance_anchor_head"),
        ("snippets", "0003_publish_permission"),
        ("skills", "0003_skill_audit_append_only_trigger"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="CatalogVersion",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("token", models.CharField(max_length=64)),
                    ],
                    options={
                        "db_table": "agents_catalogversion",
                    },
                ),
                migrations.CreateModel(
                    name="Configuration",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "system_prompt_data_class",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("public_content", "Public content"),
                                    ("editor_content", "Editor content"),
                                    ("source_code", "Source code"),
                                    ("internal_configuration", "Internal configuration"),
                                    ("system_diagnostics", "System diagnostics"),
                                    ("secret_adjacent", "Secret-adjacent"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "system_prompt_ceiling",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("local", "Local"),
                                    ("private_hosted", "Private hosted"),
                                    ("external_eu", "External (EU)"),
                                    ("external_global", "External (global)"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "system_prompt_enforcement",
                            models.CharField(
                                choices=[("enforce", "Enforce"), ("observe", "Observe")],
                                default="enforce",
                                max_length=16,
                            ),
                        ),
                        ("identifier", models.SlugField(max_length=100, unique=True)),
                        ("name", models.CharField(max_length=200)),
                        ("system_prompt", models.TextField(blank=True)),
                        (
                            "snippet_tags",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text="Ordered tags; snippets are selected in this tag order, then by sorting and name.",
                            ),
                        ),
                        (
                            "allow_system_override",
                            models.BooleanField(
                                default=False,
                                help_text="Whether a caller-supplied system message may replace the configured prompt.",
                            ),
                        ),
                        (
                            "skill_mode",
                            models.CharField(
                                choices=[
                                    ("full", "Full bodies in the skill block"),
                                    (
                                        "progressive",
                                        "Names and descriptions; bodies loaded on demand by the load_skill tool",
                                    ),
                                ],
                                default="full",
                                max_length=16,
                            ),
                        ),
                        (
                            "skill_trust_floor",
                            models.CharField(
                                choices=[
                                    ("untrusted", "Untrusted"),
                                    ("community", "Community"),
                                    ("verified", "Verified"),
                                    ("first_party", "First party"),
                                ],
                                default="untrusted",
                                max_length=16,
                            ),
                        ),
                        ("allowed_tool_groups", models.JSONField(blank=True, default=list)),
                        ("allowed_tools", models.JSONField(blank=True, default=list)),
                        (
                            "max_iterations",
                            models.PositiveSmallIntegerField(
                                default=5,
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(20),
                                ],
                            ),
                        ),
                        (
                            "context_usage_note",
                            models.CharField(
                                choices=[("off", "Off"), ("tail", "At the tail of the conversation")],
                                default="off",
                                max_length=8,
                            ),
                        ),
                        (
                            "context_strategy",
                            models.CharField(
                                choices=[
                                    ("drop_oldest", "Drop the oldest turns"),
                                    ("clear_tool_results", "Clear old tool results"),
                                    ("summarise", "Summarise older turns"),
                                ],
                                default="drop_oldest",
                                help_text="What a run does when its context fills. Drop the oldest turns: the fit drops them at every step. The other two compact the run's transcript in a step of their own.",
                                max_length=24,
                            ),
                        ),
                        (
                            "compaction_threshold",
                            models.FloatField(
                                default=0.8,
                                help_text="Compact when the last step's prompt passes this share of its model's window (and, in any case, before a step would drop turns or overflow).",
                                validators=[
                                    django.core.validators.MinValueValidator(0.05),
                                    django.core.validators.MaxValueValidator(1.0),
                                ],
                            ),
                        ),
                        (
                            "compaction_keep",
                            models.PositiveSmallIntegerField(
                                default=2,
                                help_text="The most recent tool results (clear) or turns (summarise) kept as they are.",
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(50),
                                ],
                            ),
                        ),
                        ("is_active", models.BooleanField(default=True)),
                        (
                            "answers_deliverable_to",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("local", "Local"),
                                    ("private_hosted", "Private hosted"),
                                    ("external_eu", "External (EU)"),
                                    ("external_global", "External (global)"),
                                ],
                                editable=False,
                                help_text="Answers may be delivered down to this zone, whatever they were derived from (a recorded declassification). Empty: an answer keeps the class of what it came from.",
                                max_length=32,
                            ),
                        ),
                        (
                            "require_passing_evaluation",
                            models.BooleanField(
                                default=False,
                                help_text="Publishing a draft that changes what this configuration sends needs an evaluation of that draft in which every case held its expectations.",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_configuration",
                        "ordering": ["identifier"],
                        "permissions": [("publish_configuration", "Can publish a configuration's draft")],
                        "abstract": False,
                    },
                ),
                migrations.CreateModel(
                    name="LlmModel",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "model_id",
                            models.CharField(help_text="The provider's name for the model.", max_length=200),
                        ),
                        (
                            "context_window",
                            models.PositiveIntegerField(
                                validators=[django.core.validators.MinValueValidator(256)]
                            ),
                        ),
                        (
                            "max_output_tokens",
                            models.PositiveIntegerField(
                                validators=[django.core.validators.MinValueValidator(1)]
                            ),
                        ),
                        (
                            "tokenizer",
                            models.CharField(
                                choices=[
                                    ("o200k_base", "o200k_base (tiktoken)"),
                                    ("cl100k_base", "cl100k_base (tiktoken)"),
                                    ("approximate", "Calibrated approximation"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "input_price_per_million",
                            models.DecimalField(decimal_places=4, default=0, max_digits=10),
                        ),
                        (
                            "output_price_per_million",
                            models.DecimalField(decimal_places=4, default=0, max_digits=10),
                        ),
                        (
                            "cached_input_price_per_million",
                            models.DecimalField(
                                blank=True,
                                decimal_places=4,
                                help_text="Per million prompt tokens read from the provider's cache. Empty: the input price.",
                                max_digits=10,
                                null=True,
                                validators=[django.core.validators.MinValueValidator(0)],
                            ),
                        ),
                        (
                            "cache_write_price_per_million",
                            models.DecimalField(
                                blank=True,
                                decimal_places=4,
                                help_text="Per million prompt tokens written to the provider's cache (Anthropic charges 1.25 times the input price). Empty: the input price.",
                                max_digits=10,
                                null=True,
                                validators=[django.core.validators.MinValueValidator(0)],
                            ),
                        ),
                        ("calibration_factor", models.FloatField(default=1.0, editable=False)),
                        ("calibration_samples", models.PositiveIntegerField(default=0, editable=False)),
                        (
                            "calibration_updated_at",
                            models.DateTimeField(blank=True, editable=False, null=True),
                        ),
                        (
                            "token_parameter",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("max_tokens", "max_tokens"),
                                    (
                                        "max_completion_tokens",
                                        "max_completion_tokens (OpenAI reasoning models)",
                                    ),
                                ],
                                help_text="The request parameter for the reply limit. Empty: the catalogue's, else max_tokens.",
                                max_length=32,
                            ),
                        ),
                        (
                            "accepts_sampling",
                            models.BooleanField(
                                blank=True,
                                help_text="Whether temperature, top_p etc. are accepted. Empty: the catalogue's, else yes.",
                                null=True,
                            ),
                        ),
                        (
                            "system_role",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("system", "system"),
                                    ("developer", "developer (OpenAI reasoning models)"),
                                ],
                                help_text="The role of the system message. Empty: the catalogue's, else system.",
                                max_length=16,
                            ),
                        ),
                        (
                            "prompt_cache_min_tokens",
                            models.PositiveIntegerField(
                                blank=True,
                                help_text="Shortest prompt prefix the provider caches (Anthropic). Empty: the catalogue's.",
                                null=True,
                                validators=[django.core.validators.MinValueValidator(1)],
                            ),
                        ),
                        ("is_active", models.BooleanField(default=True)),
                    ],
                    options={
                        "verbose_name": "LLM model",
                        "verbose_name_plural": "LLM models",
                        "db_table": "agents_llmmodel",
                        "ordering": ["provider__identifier", "model_id"],
                    },
                ),
                migrations.CreateModel(
                    name="Provider",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("identifier", models.SlugField(max_length=100, unique=True)),
                        ("name", models.CharField(max_length=200)),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("openai_compatible", "OpenAI-compatible"),
                                    ("anthropic", "Anthropic"),
                                    ("local", "Local (offline, deterministic)"),
                                ],
                                max_length=32,
                            ),
                        ),
                        ("base_url", models.URLField(blank=True)),
                        (
                            "api_key_env",
                            models.CharField(
                                blank=True,
                                help_text="Name of the environment variable holding the API key.",
                                max_length=100,
                            ),
                        ),
                        (
                            "trust_zone",
                            models.CharField(
                                choices=[
                                    ("local", "Local"),
                                    ("private_hosted", "Private hosted"),
                                    ("external_eu", "External (EU)"),
                                    ("external_global", "External (global)"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "timeout_seconds",
                            models.FloatField(
                                default=30.0,
                                validators=[
                                    django.core.validators.MinValueValidator(0.1),
                                    django.core.validators.MaxValueValidator(600),
                                ],
                            ),
                        ),
                        (
                            "max_retries",
                            models.PositiveSmallIntegerField(
                                default=2, validators=[django.core.validators.MaxValueValidator(5)]
                            ),
                        ),
                        (
                            "options",
                            models.JSONField(
                                blank=True,
                                default=dict,
                                help_text="Adapter options (for the local provider: a reply script).",
                            ),
                        ),
                        ("is_active", models.BooleanField(default=True)),
                    ],
                    options={
                        "db_table": "agents_provider",
                        "ordering": ["identifier"],
                    },
                    bases=(catalog.models.catalog.InTrustZone, models.Model),
                ),
                migrations.CreateModel(
                    name="ApiClient",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=100, unique=True)),
                        (
                            "token_prefix",
                            models.CharField(
                                help_text="The first characters, to recognise a token.", max_length=16
                            ),
                        ),
                        ("token_digest", models.CharField(max_length=64, unique=True)),
                        ("scopes", models.JSONField(default=list)),
                        (
                            "default_input_data_class",
                            models.CharField(
                                choices=[
                                    ("public_content", "Public content"),
                                    ("editor_content", "Editor content"),
                                    ("source_code", "Source code"),
                                    ("internal_configuration", "Internal configuration"),
                                    ("system_diagnostics", "System diagnostics"),
                                    ("secret_adjacent", "Secret-adjacent"),
                                ],
                                default="editor_content",
                                max_length=32,
                            ),
                        ),
                        (
                            "trust_zone",
                            models.CharField(
                                choices=[
                                    ("local", "Local"),
                                    ("private_hosted", "Private hosted"),
                                    ("external_eu", "External (EU)"),
                                    ("external_global", "External (global)"),
                                ],
                                default="external_global",
                                help_text="Where this client runs: API answers show it nothing classified above this zone.",
                                max_length=32,
                            ),
                        ),
                        (
                            "daily_token_limit",
                            models.PositiveBigIntegerField(
                                blank=True,
                                help_text="Most tokens (prompt + completion) this client may spend per UTC day. Empty: no limit.",
                                null=True,
                            ),
                        ),
                        (
                            "daily_cost_limit",
                            models.DecimalField(
                                blank=True,
                                decimal_places=10,
                                help_text="Most this client may spend per UTC day, in the currency of the models' prices. Empty: no limit.",
                                max_digits=20,
                                null=True,
                                validators=[django.core.validators.MinValueValidator(0)],
                            ),
                        ),
                        ("is_active", models.BooleanField(default=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "configurations",
                            models.ManyToManyField(
                                blank=True, related_name="api_clients", to="catalog.configuration"
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "API client",
                        "verbose_name_plural": "API clients",
                        "db_table": "agents_apiclient",
                        "ordering": ["name"],
                    },
                    bases=(catalog.models.catalog.InTrustZone, models.Model),
                ),
                migrations.CreateModel(
                    name="ConfigurationSkill",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField()),
                        (
                            "configuration",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="skill_links",
                                to="catalog.configuration",
                            ),
                        ),
                        (
                            "skill",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="skills.skill",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_configurationskill",
                        "ordering": ["configuration", "position"],
                    },
                ),
                migrations.AddField(
                    model_name="configuration",
                    name="skills",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="configurations",
                        through="catalog.ConfigurationSkill",
                        to="skills.skill",
                    ),
                ),
                migrations.CreateModel(
                    name="HistoricalConfiguration",
                    fields=[
                        (
                            "id",
                            models.BigIntegerField(
                                auto_created=True, blank=True, db_index=True, verbose_name="ID"
                            ),
                        ),
                        (
                            "system_prompt_data_class",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("public_content", "Public content"),
                                    ("editor_content", "Editor content"),
                                    ("source_code", "Source code"),
                                    ("internal_configuration", "Internal configuration"),
                                    ("system_diagnostics", "System diagnostics"),
                                    ("secret_adjacent", "Secret-adjacent"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "system_prompt_ceiling",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("local", "Local"),
                                    ("private_hosted", "Private hosted"),
                                    ("external_eu", "External (EU)"),
                                    ("external_global", "External (global)"),
                                ],
                                max_length=32,
                            ),
                        ),
                        (
                            "system_prompt_enforcement",
                            models.CharField(
                                choices=[("enforce", "Enforce"), ("observe", "Observe")],
                                default="enforce",
                                max_length=16,
                            ),
                        ),
                        ("identifier", models.SlugField(max_length=100)),
                        ("name", models.CharField(max_length=200)),
                        ("system_prompt", models.TextField(blank=True)),
                        (
                            "snippet_tags",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text="Ordered tags; snippets are selected in this tag order, then by sorting and name.",
                            ),
                        ),
                        (
                            "allow_system_override",
                            models.BooleanField(
                                default=False,
                                help_text="Whether a caller-supplied system message may replace the configured prompt.",
                            ),
                        ),
                        (
                            "skill_mode",
                            models.CharField(
                                choices=[
                                    ("full", "Full bodies in the skill block"),
                                    (
                                        "progressive",
                                        "Names and descriptions; bodies loaded on demand by the load_skill tool",
                                    ),
                                ],
                                default="full",
                                max_length=16,
                            ),
                        ),
                        (
                            "skill_trust_floor",
                            models.CharField(
                                choices=[
                                    ("untrusted", "Untrusted"),
                                    ("community", "Community"),
                                    ("verified", "Verified"),
                                    ("first_party", "First party"),
                                ],
                                default="untrusted",
                                max_length=16,
                            ),
                        ),
                        ("allowed_tool_groups", models.JSONField(blank=True, default=list)),
                        ("allowed_tools", models.JSONField(blank=True, default=list)),
                        (
                            "max_iterations",
                            models.PositiveSmallIntegerField(
                                default=5,
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(20),
                                ],
                            ),
                        ),
                        (
                            "context_usage_note",
                            models.CharField(
                                choices=[("off", "Off"), ("tail", "At the tail of the conversation")],
                                default="off",
                                max_length=8,
                            ),
                        ),
                        (
                            "context_strategy",
                            models.CharField(
                                choices=[
                                    ("drop_oldest", "Drop the oldest turns"),
                                    ("clear_tool_results", "Clear old tool results"),
                                    ("summarise", "Summarise older turns"),
                                ],
                                default="drop_oldest",
                                help_text="What a run does when its context fills. Drop the oldest turns: the fit drops them at every step. The other two compact the run's transcript in a step of their own.",
                                max_length=24,
                            ),
                        ),
                        (
                            "compaction_threshold",
                            models.FloatField(
                                default=0.8,
                                help_text="Compact when the last step's prompt passes this share of its model's window (and, in any case, before a step would drop turns or overflow).",
                                validators=[
                                    django.core.validators.MinValueValidator(0.05),
                                    django.core.validators.MaxValueValidator(1.0),
                                ],
                            ),
                        ),
                        (
                            "compaction_keep",
                            models.PositiveSmallIntegerField(
                                default=2,
                                help_text="The most recent tool results (clear) or turns (summarise) kept as they are.",
                                validators=[
                                    django.core.validators.MinValueValidator(1),
                                    django.core.validators.MaxValueValidator(50),
                                ],
                            ),
                        ),
                        ("is_active", models.BooleanField(default=True)),
                        (
                            "answers_deliverable_to",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("local", "Local"),
                                    ("private_hosted", "Private hosted"),
                                    ("external_eu", "External (EU)"),
                                    ("external_global", "External (global)"),
                                ],
                                editable=False,
                                help_text="Answers may be delivered down to this zone, whatever they were derived from (a recorded declassification). Empty: an answer keeps the class of what it came from.",
                                max_length=32,
                            ),
                        ),
                        (
                            "require_passing_evaluation",
                            models.BooleanField(
                                default=False,
                                help_text="Publishing a draft that changes what this configuration sends needs an evaluation of that draft in which every case held its expectations.",
                            ),
                        ),
                        ("history_id", models.AutoField(primary_key=True, serialize=False)),
                        ("history_date", models.DateTimeField(db_index=True)),
                        ("history_change_reason", models.CharField(max_length=100, null=True)),
                        (
                            "history_type",
                            models.CharField(
                                choices=[("+", "Created"), ("~", "Changed"), ("-", "Deleted")], max_length=1
                            ),
                        ),
                        (
                            "history_user",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "model",
                            models.ForeignKey(
                                blank=True,
                                db_constraint=False,
                                null=True,
                                on_delete=django.db.models.deletion.DO_NOTHING,
                                related_name="+",
                                to="catalog.llmmodel",
                            ),
                        ),
                        (
                            "summary_model",
                            models.ForeignKey(
                                blank=True,
                                db_constraint=False,
                                help_text="Writes the summaries (its zone must admit what it summarises). Empty: the configuration's model.",
                                null=True,
                                on_delete=django.db.models.deletion.DO_NOTHING,
                                related_name="+",
                                to="catalog.llmmodel",
                            ),
                        ),
                        (
                            "trusted_model",
                            models.ForeignKey(
                                blank=True,
                                db_constraint=False,
                                help_text="Serves, alone, the sends whose sources exceed the model's zone. Empty: they are refused.",
                                null=True,
                                on_delete=django.db.models.deletion.DO_NOTHING,
                                related_name="+",
                                to="catalog.llmmodel",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "historical configuration",
                        "verbose_name_plural": "historical configurations",
                        "db_table": "agents_historicalconfiguration",
                        "ordering": ("-history_date", "-history_id"),
                        "get_latest_by": ("history_date", "history_id"),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name="ConfigurationFallback",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("position", models.PositiveSmallIntegerField()),
                        (
                            "configuration",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="fallback_links",
                                to="catalog.configuration",
                            ),
                        ),
                        (
                            "model",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="+",
                                to="catalog.llmmodel",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "agents_configurationfallback",
                        "ordering": ["configuration", "position"],
                    },
                ),
                migrations.AddField(
                    model_name="configuration",
                    name="fallbacks",
                    field=models.ManyToManyField(
                        blank=True,
                        related_name="fallback_for",
                        through="catalog.ConfigurationFallback",
                        to="catalog.llmmodel",
                    ),
                ),
                migrations.AddField(
                    model_name="configuration",
                    name="model",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="configurations",
                        to="catalog.llmmodel",
                    ),
                ),
                migrations.AddField(
                    model_name="configuration",
                    name="summary_model",
                    field=models.ForeignKey(
                        blank=True,
                        help_text="Writes the summaries (its zone must admit what it summarises). Empty: the configuration's model.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="catalog.llmmodel",
                    ),
                ),
                migrations.AddField(
                    model_name="configuration",
                    name="trusted_model",
                    field=models.ForeignKey(
                        blank=True,
                        help_text="Serves, alone, the sends whose sources exceed the model's zone. Empty: they are refused.",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="catalog.llmmodel",
                    ),
                ),
                migrations.AddField(
                    model_name="llmmodel",
                    name="provider",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="models",
                        to="catalog.provider",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="configurationskill",
                    constraint=models.UniqueConstraint(
                        fields=("configuration", "position"), name="configuration_skill_position"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="configurationskill",
                    constraint=models.UniqueConstraint(
                        fields=("configuration", "skill"), name="configuration_skill_once"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="configurationfallback",
                    constraint=models.UniqueConstraint(
                        fields=("configuration", "position"), name="fallback_unique_position"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="configurationfallback",
                    constraint=models.UniqueConstraint(
                        fields=("configuration", "model"), name="fallback_unique_model"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="configuration",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("system_prompt_enforcement", "observe"),
                            models.Q(
                                models.Q(("system_prompt_data_class", ""), _negated=True),
                                models.Q(("system_prompt_ceiling", ""), _negated=True),
                            ),
                            _connector="OR",
                        ),
                        name="configuration_enforced_prompt_is_classified",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="configuration",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("max_iterations__gte", 1), ("max_iterations__lte", 20)),
                        name="configuration_max_iterations_range",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="llmmodel",
                    constraint=models.UniqueConstraint(
                        fields=("provider", "model_id"), name="llmmodel_unique_per_provider"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="llmmodel",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("max_output_tokens__lt", models.F("context_window"))),
                        name="llmmodel_output_below_window",
                    ),
                ),
            ],
            database_operations=[],
        ),
        content_types_moved(
            from_app="agents",
            to_app="catalog",
            models=[
                "catalogversion",
                "provider",
                "llmmodel",
                "configuration",
                "configurationskill",
                "configurationfallback",
                "apiclient",
                "historicalconfiguration",
            ],
        ),
    ]
