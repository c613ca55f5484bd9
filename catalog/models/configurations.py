"""Configurations: what a send of an agent is made of (a model and its fallbacks, a system prompt,
snippets by tag, skills, tools, context strategy), and their skill and fallback links."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from simple_history.models import HistoricalRecords

from catalog.models.catalog import LlmModel
from governance.classified import ClassifiedPromptModel
from governance.policy import Source
from governance.vocabulary import PersonalDataOutcome, SourceKind, TrustZone, UntrustedActionPolicy
from skills.models import Skill, SkillTrustLevel
from skills.vocabulary import SkillMode
from snippets.models import normalise_tag


class ContextUsageNote(models.TextChoices):
    OFF = "off", "Off"
    TAIL = "tail", "At the tail of the conversation"


class ContextStrategy(models.TextChoices):
    """What a run does when its context fills (docs/decisions/0021-compaction-is-a-governed-send.md)."""

    DROP_OLDEST = "drop_oldest", "Drop the oldest turns"
    CLEAR_TOOL_RESULTS = "clear_tool_results", "Clear old tool results"
    SUMMARISE = "summarise", "Summarise older turns"


SKILL_MODES = [
    (SkillMode.FULL.value, "Full bodies in the skill block"),
    (SkillMode.PROGRESSIVE.value, "Names and descriptions; bodies loaded on demand by the load_skill tool"),
]


class Configuration(ClassifiedPromptModel):
    """What a consumer runs: a model with fallbacks, a classified system prompt, and limits."""

    source_kind = SourceKind.SYSTEM_PROMPT
    screened_fields = ("system_prompt",)

    identifier = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, related_name="configurations")
    fallbacks = models.ManyToManyField(
        LlmModel, through="ConfigurationFallback", related_name="fallback_for", blank=True
    )
    system_prompt = models.TextField(blank=True)
    snippet_tags = models.JSONField(
        default=list,
        blank=True,
        help_text="Ordered tags; snippets are selected in this tag order, then by sorting and name.",
    )
    allow_system_override = models.BooleanField(
        default=False,
        help_text="Whether a caller-supplied system message may replace the configured prompt.",
    )
    allow_remote_media = models.BooleanField(
        default=False,
        db_default=False,
        help_text=(
            "Whether an image or PDF given by an http(s) URL is fetched by the service (within the "
            "MEDIA_* limits, never from a private address). Off: such a part is refused; inline "
            "(base64) media is always accepted."
        ),
    )
    skills = models.ManyToManyField(
        Skill, through="ConfigurationSkill", related_name="configurations", blank=True
    )
    skill_mode = models.CharField(max_length=16, choices=SKILL_MODES, default=SkillMode.FULL.value)
    skill_trust_floor = models.CharField(
        max_length=16, choices=SkillTrustLevel.choices, default=SkillTrustLevel.UNTRUSTED
    )
    allowed_tool_groups = models.JSONField(default=list, blank=True)
    allowed_tools = models.JSONField(default=list, blank=True)
    # docs/decisions/0040-integrity-labels-and-consequential-tools.md
    untrusted_action = models.CharField(
        max_length=16,
        choices=UntrustedActionPolicy.choices,
        default=UntrustedActionPolicy.APPROVE,
        db_default=UntrustedActionPolicy.APPROVE,
        verbose_name="consequential calls from untrusted context",
        help_text="A tool call that acts on the world, asked for while tool results, untrusted skills "
        "or other untrusted content were in the step's context, is never run on the model's word: "
        "it waits for a person's approval, or is refused.",
    )
    quarantine_untrusted = models.BooleanField(
        default=False,
        db_default=False,
        verbose_name="hold untrusted results back",
        help_text="An untrusted tool result is held behind a reference instead of being shown to the "
        "model, which reads it with read_result: a separate call without tools whose answer must fit "
        "a declared type (an e-mail address, a number, one of given values, a short pattern).",
    )
    max_iterations = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    context_usage_note = models.CharField(
        max_length=8, choices=ContextUsageNote.choices, default=ContextUsageNote.OFF
    )
    # Compaction (agents/runtime/compaction.py).
    context_strategy = models.CharField(
        max_length=24,
        choices=ContextStrategy.choices,
        default=ContextStrategy.DROP_OLDEST,
        help_text="What a run does when its context fills. Drop the oldest turns: the fit drops them "
        "at every step. The other two compact the run's transcript in a step of their own.",
    )
    compaction_threshold = models.FloatField(
        default=0.8,
        validators=[MinValueValidator(0.05), MaxValueValidator(1.0)],
        help_text="Compact when the last step's prompt passes this share of its model's window (and, "
        "in any case, before a step would drop turns or overflow).",
    )
    compaction_keep = models.PositiveSmallIntegerField(
        default=2,
        validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="The most recent tool results (clear) or turns (summarise) kept as they are.",
    )
    summary_model = models.ForeignKey(
        LlmModel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Writes the summaries (its zone must admit what it summarises). Empty: the "
        "configuration's model.",
    )
    is_active = models.BooleanField(default=True)
    # Information flow (docs/decisions/0018-reply-labels-and-receivers.md). Declassifying answers is
    # privileged and recorded: only agents.services.configuration_flow_set writes these two fields.
    answers_deliverable_to = models.CharField(
        max_length=32,
        choices=TrustZone.choices,
        blank=True,
        editable=False,
        help_text="Answers may be delivered down to this zone, whatever they were derived from "
        "(a recorded declassification). Empty: an answer keeps the class of what it came from.",
    )
    trusted_model = models.ForeignKey(
        LlmModel,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Serves, alone, the sends whose sources exceed the model's zone. Empty: they are refused.",
    )

    personal_data_outcome = models.CharField(
        max_length=16,
        choices=PersonalDataOutcome.choices,
        default=PersonalDataOutcome.REFUSE,
        db_default=PersonalDataOutcome.REFUSE,
        help_text="What a send does with personal data found in a part that its zone, or its receiver, "
        "may not receive: refuse it, route it to the trusted model, or send placeholders and put the "
        "values back in the answer for a receiver that may see them (decision 0039).",
    )

    require_passing_evaluation = models.BooleanField(
        default=False,
        help_text="Publishing a draft that changes what this configuration sends needs an evaluation "
        "of that draft in which every case held its expectations.",
    )
    require_no_regression = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Publishing a draft that changes what this configuration sends needs an evaluation "
        "of that draft in which no case that held its expectations live fails with the drafts.",
    )

    # Versions a run pins its content to (agents/runtime/pins.py).
    history = HistoricalRecords(table_name="agents_historicalconfiguration")  # kept: decision 0031

    class Meta(ClassifiedPromptModel.Meta):
        db_table = "agents_configuration"  # kept from before the split (decision 0031)
        ordering = ["identifier"]
        # Saving in admin stores a draft (governance.drafts); publishing it changes the live row.
        permissions = [("publish_configuration", "Can publish a configuration's draft")]
        constraints = [
            *ClassifiedPromptModel.Meta.constraints,
            models.CheckConstraint(
                condition=models.Q(max_iterations__gte=1, max_iterations__lte=20),
                name="configuration_max_iterations_range",
            ),
        ]

    def __str__(self) -> str:
        return self.identifier

    def clean(self) -> None:
        for field in ("snippet_tags", "allowed_tool_groups", "allowed_tools"):
            value = getattr(self, field)
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ValidationError({field: "Must be a list of strings."})
        self.snippet_tags = list(
            dict.fromkeys(normalise_tag(t) for t in self.snippet_tags if normalise_tag(t))
        )
        if self.personal_data_outcome == PersonalDataOutcome.ROUTE and self.trusted_model_id is None:
            raise ValidationError({"personal_data_outcome": "Routing personal data needs a trusted model."})
        super().clean()

    def prompt_sources(self) -> list[Source]:
        """The system prompt as a classified source, or none when it is empty: nothing of it is sent."""
        return [self.as_source()] if self.system_prompt.strip() else []


class ConfigurationSkill(models.Model):
    """One of a configuration's skills, in order (the configuration's skills come first in the block)."""

    configuration = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="skill_links")
    skill = models.ForeignKey(Skill, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()

    class Meta:
        db_table = "agents_configurationskill"  # kept from before the split (decision 0031)
        ordering = ["configuration", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "position"], name="configuration_skill_position"
            ),
            models.UniqueConstraint(fields=["configuration", "skill"], name="configuration_skill_once"),
        ]

    def __str__(self) -> str:
        return f"{self.configuration.identifier}#{self.position}: {self.skill.name}"


class ConfigurationFallback(models.Model):
    """One ordered fallback model of a configuration (walked only on retryable failures)."""

    configuration = models.ForeignKey(Configuration, on_delete=models.CASCADE, related_name="fallback_links")
    model = models.ForeignKey(LlmModel, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()

    class Meta:
        db_table = "agents_configurationfallback"  # kept from before the split (decision 0031)
        ordering = ["configuration", "position"]
        constraints = [
            models.UniqueConstraint(fields=["configuration", "position"], name="fallback_unique_position"),
            models.UniqueConstraint(fields=["configuration", "model"], name="fallback_unique_model"),
        ]

    def __str__(self) -> str:
        return f"{self.configuration.identifier}#{self.position}: {self.model}"
