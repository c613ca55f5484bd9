"""Classified rows: the declared data class, trust-zone ceiling and enforcement, written once.

Every snippet, skill and configuration system prompt carries the same three fields, the same database
constraint (an enforced row declares a class and a ceiling) and the same validation. Snippets and
skills name the fields plainly (:class:`ClassifiedModel`); a configuration classifies its system
prompt, so its fields carry the prefix ``system_prompt_`` (:class:`ClassifiedPromptModel`). Both share
:class:`ClassifiedBase`, which reads the fields through ``classification_prefix``.

:class:`Classification` is the value the three fields hold together. It knows whether a change
loosens what may be sent (a lower class, a looser ceiling, enforce relaxed to observe): such changes
are privileged (``governance.services.reclassification_guard``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from django.db import models

from governance.classification import validate_classification
from governance.policy import Source
from governance.vocabulary import DataClass, Enforcement, SourceKind, TrustZone, stricter_ceiling

FIELDS = ("data_class", "ceiling", "enforcement")
UNDECLARED = "-"


def data_class_field() -> models.CharField:
    return models.CharField(max_length=32, choices=DataClass.choices, blank=True)


def ceiling_field() -> models.CharField:
    return models.CharField(max_length=32, choices=TrustZone.choices, blank=True)


def enforcement_field() -> models.CharField:
    """New rows enforce; rows that predate classification were migrated to observe."""
    return models.CharField(max_length=16, choices=Enforcement.choices, default=Enforcement.ENFORCE)


def classification_constraint(*, prefix: str, name: str) -> models.CheckConstraint:
    """The database side of the validation: an enforced row declares a class and a ceiling."""
    data_class, ceiling, enforcement = (f"{prefix}{field}" for field in FIELDS)
    return models.CheckConstraint(
        condition=models.Q(**{enforcement: Enforcement.OBSERVE})
        | (~models.Q(**{data_class: ""}) & ~models.Q(**{ceiling: ""})),
        name=name,
    )


@dataclass(frozen=True)
class Classification:
    """A row's declared classification, as stored (raw strings: a corrupt value stays visible)."""

    data_class: str
    ceiling: str
    enforcement: str

    def __str__(self) -> str:
        return "/".join(value or UNDECLARED for value in (self.data_class, self.ceiling, self.enforcement))

    def loosened_by(self, after: Classification) -> tuple[str, ...]:
        """The fields (of :data:`FIELDS`) whose change to ``after`` lets content go further.

        Read as :func:`governance.policy.decide` reads them: an unknown stored class counts as
        ``secret_adjacent`` and an unknown ceiling as ``local``. A class is lowered when it ranks lower
        or is cleared; a ceiling is loosened when its effective ceiling (the stricter of the declared one
        and the one its class implies) is less trusted or no longer known; enforcement is relaxed when
        an enforced row becomes ``observe``. Declaring what was undeclared loosens nothing: the row was
        observed, so it was sent whatever it held.
        """
        loosened = []
        before_rank, after_rank = _class_rank(self.data_class), _class_rank(after.data_class)
        if before_rank is not None and (after_rank is None or after_rank < before_rank):
            loosened.append("data_class")
        before_ceiling, after_ceiling = self._effective_ceiling(), after._effective_ceiling()
        if before_ceiling is not None and (after_ceiling is None or after_ceiling.rank > before_ceiling.rank):
            loosened.append("ceiling")
        if self.enforcement != Enforcement.OBSERVE and after.enforcement == Enforcement.OBSERVE:
            loosened.append("enforcement")
        return tuple(loosened)

    def _effective_ceiling(self) -> TrustZone | None:
        declared = _declared_ceiling(self.ceiling)
        data_class = _class_or_strictest(self.data_class)
        implied = data_class.ceiling if data_class is not None else None
        if declared is None:
            return implied
        if implied is None:
            return declared
        return stricter_ceiling(declared, implied)


def _class_or_strictest(value: str) -> DataClass | None:
    if not value:
        return None
    return DataClass.parse(value) or DataClass.SECRET_ADJACENT


def _class_rank(value: str) -> int | None:
    data_class = _class_or_strictest(value)
    return data_class.rank if data_class is not None else None


def _declared_ceiling(value: str) -> TrustZone | None:
    if not value:
        return None
    return TrustZone(value) if value in TrustZone.values else TrustZone.LOCAL


class ClassifiedBase(models.Model):
    """What every classified row does with its classification; the fields come from a subclass.

    Subclasses set ``source_kind`` (how the governance check names the row's kind) and have an
    ``identifier`` (how it names the row).
    """

    classification_prefix: ClassVar[str] = ""
    source_kind: ClassVar[SourceKind]
    # The texts of the row that a send carries, screened for personal data when an editor saves it.
    screened_fields: ClassVar[tuple[str, ...]] = ()

    if TYPE_CHECKING:

        @property
        def identifier(self) -> str: ...

    class Meta:
        abstract = True

    @classmethod
    def classification_field(cls, name: str) -> str:
        """The model field holding ``name`` (one of :data:`FIELDS`)."""
        return f"{cls.classification_prefix}{name}"

    @property
    def classification(self) -> Classification:
        data_class, ceiling, enforcement = (
            str(getattr(self, self.classification_field(name)) or "") for name in FIELDS
        )
        return Classification(data_class=data_class, ceiling=ceiling, enforcement=enforcement)

    def classify(self, classification: Classification) -> None:
        """Set the three fields (unsaved; the owning app's service validates and saves)."""
        for name in FIELDS:
            setattr(self, self.classification_field(name), getattr(classification, name))

    def clean(self) -> None:
        super().clean()
        current = self.classification
        validate_classification(
            data_class=current.data_class,
            ceiling=current.ceiling,
            enforcement=current.enforcement,
            field_prefix=self.classification_prefix,
        )

    def as_source(self) -> Source:
        """The row as the governance check sees it. The only place a stored row becomes a Source."""
        current = self.classification
        return Source(
            kind=self.source_kind,
            identifier=self.identifier,
            data_class=current.data_class,
            ceiling=current.ceiling,
            enforcement=current.enforcement,
            integrity=self.source_integrity,
        )

    @property
    def source_integrity(self) -> str:
        """The row's integrity level as a source; empty: the level its kind implies
        (:data:`governance.integrity.KIND_INTEGRITY`)."""
        return ""


class ClassifiedModel(ClassifiedBase):
    """A classified row: ``data_class``, ``ceiling``, ``enforcement`` (snippets, skills).

    A subclass's ``Meta`` inherits this one (``class Meta(ClassifiedModel.Meta)``) to keep the
    constraint, and lists it again when it adds constraints of its own.
    """

    data_class = data_class_field()
    ceiling = ceiling_field()
    enforcement = enforcement_field()

    class Meta:
        abstract = True
        constraints = [classification_constraint(prefix="", name="%(class)s_enforced_is_classified")]


class ClassifiedPromptModel(ClassifiedBase):
    """A row whose system prompt is classified: ``system_prompt_data_class``, ``system_prompt_ceiling``,
    ``system_prompt_enforcement`` (configurations)."""

    classification_prefix = "system_prompt_"

    system_prompt_data_class = data_class_field()
    system_prompt_ceiling = ceiling_field()
    system_prompt_enforcement = enforcement_field()

    class Meta:
        abstract = True
        constraints = [
            classification_constraint(prefix="system_prompt_", name="%(class)s_enforced_prompt_is_classified")
        ]
