"""No image or PDF reaches a model that does not declare it reads that modality.

Checked when a send is planned, for every model it may call (the serving one and each fallback):
a fallback that cannot read the part would answer without it, so the whole send is refused with
:class:`~agents.errors.ModalityUnsupported`, naming the modality and the model, before anything is
sent. What a model reads is its catalogue capabilities (``LlmModel.capabilities.input_modalities``).
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.errors import ModalityUnsupported
from catalog.models import LlmModel
from context_assembly.assembly import AssemblyInputs


def modalities_check(inputs: AssemblyInputs, models: Sequence[LlmModel]) -> None:
    """Raise :class:`ModalityUnsupported` when a part of ``inputs`` needs a modality one of ``models``
    does not declare."""
    needed = {part.modality for part in inputs.task_input_parts if part.modality is not None}
    for message in inputs.transcript:
        needed |= message.modalities
    modalities_required(needed, models)


def modalities_required(needed: set[str], models: Sequence[LlmModel]) -> None:
    """Raise :class:`ModalityUnsupported` when one of ``models`` does not declare a modality of
    ``needed``."""
    for modality in sorted(needed):
        for model in models:
            if modality not in model.capabilities.input_modalities:
                raise ModalityUnsupported(
                    f"model {model.model_id!r} does not accept {modality} input; send text only, or "
                    "choose a configuration whose models declare it",
                    extra={"modality": modality, "model": model.model_id},
                )
