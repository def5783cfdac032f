"""Token prices: what a model's tokens cost, for the agents' cost budget and the judge's accounting.

A bottom-layer module (pydantic only), so the matrix, the agents and the judge can all use it without
importing one another.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Prices(BaseModel):
    """USD per million tokens, for cost accounting and the cost budget."""

    model_config = ConfigDict(extra="forbid")
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6
