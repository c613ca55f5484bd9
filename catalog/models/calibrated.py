"""The query set of the catalogue's models: their calibration, written in one statement."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db import connections, models

from catalog.models.sql import Float, FloatFunctions, Table
from context_assembly.calibration import CalibrationState, blended_factor, sample_ratio

# The catalogue's model (``LlmModel``), which imports this module: named by the manager it builds.
_Model = TypeVar("_Model", bound=models.Model)


class LlmModelQuerySet(models.QuerySet[_Model], Generic[_Model]):
    def calibrate(
        self, *, model_id: int, reported: int, estimated: int, at: datetime
    ) -> CalibrationState | None:
        """Blend one sample (``reported`` prompt tokens of a call we estimated at ``estimated``) into
        the model's stored calibration, in one ``UPDATE … RETURNING`` statement.

        The database applies :func:`~context_assembly.calibration.blended_factor` (rendered as SQL
        from that one definition) to the stored state, so concurrent steps on the same model neither
        lose a sample nor wait on a read lock. Returns the state after the sample; None when the
        figures are no sample (nothing is written) or the model is gone.
        """
        ratio = sample_ratio(reported=reported, estimated=estimated)
        if ratio is None:
            return None
        connection = connections[self.db]
        table = Table(self.model, connection)
        factor, samples = table.column("calibration_factor"), table.column("calibration_samples")
        functions = FloatFunctions(connection)
        blended = blended_factor(
            Float.column(factor),
            Float.column(samples),
            Float.of(ratio),
            greatest=functions.greatest,
            least=functions.least,
        )
        sql = (
            f"UPDATE {table.name} SET {factor} = {blended.sql}, {samples} = {samples} + 1, "
            f"{table.column('calibration_updated_at')} = %s WHERE {table.column('pk')} = %s "
            f"RETURNING {factor}, {samples}"
        )
        params: list[Any] = [*blended.params, table.value("calibration_updated_at", at), model_id]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        return None if row is None else CalibrationState(factor=float(row[0]), samples=int(row[1]))
