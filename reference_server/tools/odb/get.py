"""odb.get: Ontario Drug Benefit coverage, interchangeable generics, lowest cost and Limited Use.

One request model takes the simple form (`drug`, `check_alternatives`, `include_lu`, `top_k`) and
the enhanced form (`q`, `din`, `ingredient`, `strength`, `drug_class`, `check`, ...). Drugs are
resolved by rules: DIN, brand, salt-stripped ingredient key, drug class (ATC prefixes), FTS5.
SQL answers from `odb_drugs`/groups/LU codes; the vector path searches `odb_documents` (group,
LU-code and policy chunks) for context and corroboration. SQL takes precedence for the formulary.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from reference_server.retrieval import odb_formulary as formulary
from reference_server.retrieval.drug_form import Word as FormWordName
from reference_server.retrieval.dual_path import DualResult
from reference_server.retrieval.odb_formulary import DrugQuery, SqlData
from reference_server.retrieval.vector import VectorHit
from reference_server.runtime import Runtime
from reference_server.scoring.citations import Citation
from reference_server.scoring.confidence import OFF, Counts
from reference_server.scoring.features import Signals
from reference_server.tools.common import Evidence
from reference_server.tools.odb.intents import INTENTS, Check
from reference_server.tools.odb.merge import (
    Alternative,
    Answer,
    Brand,
    Coverage,
    Interchangeable,
    LowestCost,
    NotListed,
    PriceComparison,
    Query,
    answer,
    brand_of,
)
from reference_server.tools.odb.score import (
    citations_for,
    corroborates,
    group_conflicts,
)
from reference_server.tools.pipeline import DualPathTool
from reference_server.tools.request_model import NON_BLANK, StrictModel
from reference_server.tools.score_step import EvidenceFields, Score

NAME = "odb.get"
DEFAULT_CHECKS: list[Check] = ["coverage", "interchangeable", "lowest_cost"]


class Request(StrictModel):
    required_any_of = (("drug",), ("din",), ("ingredient",), ("drug_class",), ("q",))

    drug: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Brand, generic or ingredient name.",
    )
    q: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        pattern=NON_BLANK,
        description="Question text, e.g. 'Is Ozempic covered for diabetes?'.",
    )
    din: str | None = Field(
        default=None, pattern=r"^\d{1,8}$", description="Drug Identification Number (8 digits)."
    )
    ingredient: str | None = Field(default=None, min_length=1, max_length=200, pattern=NON_BLANK)
    strength: str | None = Field(
        default=None,
        min_length=1,
        max_length=50,
        pattern=NON_BLANK,
        description=(
            "As prescribed: '10mg', '160 mg', '5%', '50 units', '100 units/mL', '5/160 mg', "
            "'50mg & 850mg'. Only products at this strength are answered."
        ),
    )
    form: FormWordName | None = Field(
        default=None,
        description="Dosage form in words; only products in this form are answered.",
    )
    drug_class: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        pattern=NON_BLANK,
        description="e.g. 'statin', 'glp-1 agonist', 'sglt2 inhibitor', 'ace inhibitor', 'ppi'.",
    )
    check: list[Check] = Field(
        default_factory=lambda: list(DEFAULT_CHECKS),
        max_length=9,
        description=(
            "What to check (default coverage, interchangeable, lowest_cost). coverage: the "
            "coverage object; lu_criteria: it too, plus every LU code and product note in full "
            "in context; all_strengths: every product of the ingredient in any group (brands)."
        ),
    )
    check_alternatives: bool = Field(
        default=True, description="Return interchangeables and alternatives."
    )
    include_lu: bool = Field(default=True, description="Include Limited Use criteria.")
    condition: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        pattern=NON_BLANK,
        description="Medical condition, matched to LU indications.",
    )
    include_brand: bool = Field(default=True, description="Include brand-name products in lists.")
    exclude_lu: bool = Field(default=False, description="Leave Limited Use products out of lists.")
    top_k: int = Field(default=5, ge=1, le=10, description="Results per list (default 5, max 10).")


class Response(Evidence):
    coverage: Coverage | None
    interchangeable: list[Interchangeable]
    lowest_cost: LowestCost | None
    context: list[str] = Field(description="Text snippets from the formulary passages.")
    alternatives: list[Alternative] = Field(description="Covered alternatives by drug/ATC class.")
    price_comparison: PriceComparison | None
    brands: list[Brand] = Field(
        default_factory=list,
        description=(
            "all_strengths: every product of the ingredient in any interchangeable group "
            "(brands, generics and biosimilars), covered first."
        ),
    )
    needs_more_info: bool
    other_strengths: list[Brand] = Field(
        default_factory=list,
        description=(
            "When no strength or form was asked: the brand's other listed products (coverage "
            "answers one of them; each can differ in coverage and Limited Use)."
        ),
    )
    not_listed: NotListed | None = Field(
        default=None,
        description=(
            "Set when the drug is listed, but not at the strength or in the form asked: no "
            "product is answered (coverage is null) and needs_more_info is true."
        ),
    )


Found = DualResult[SqlData, list[VectorHit]]


class OdbGet(DualPathTool[Request, Query, SqlData, list[VectorHit], Answer, Response]):
    name = NAME
    confidence_family = "odb"
    title = "Ontario Drug Benefit formulary"
    description = (
        "Ontario Drug Benefit (ODB) formulary look-up of a drug product by brand or generic "
        "name, DIN, ingredient or drug class: is it a listed ODB benefit at that strength and "
        "dosage form, does it need a Limited Use (LU) code, which interchangeable generics "
        "exist, which product is lowest cost and how much is saved, and covered alternatives in "
        "the same drug class. Look up by `drug` (brand/generic), `din`, `ingredient`, "
        "`drug_class` (e.g. statin, glp-1 agonist) or a question `q`. A strength or dosage form "
        "(`strength`, `form`, or written in `drug` or `q`) selects the product; when the drug "
        "is not listed at it, no product is answered: needs_more_info is true and not_listed "
        "says what is listed."
    )
    request = Request
    response = Response

    def warm_up(self) -> Request:
        return Request(q="is atorvastatin covered")

    def parse(self, rt: Runtime, req: Request) -> Query:
        checks = set(req.check)
        if req.q:
            checks |= {c for c, pattern in INTENTS.items() if re.search(pattern, req.q, re.I)}
        drug = DrugQuery(
            drug=req.drug,
            q=req.q,
            din=req.din,
            ingredient=req.ingredient,
            strength=req.strength,
            drug_class=req.drug_class,
            condition=req.condition,
            exclude_lu=req.exclude_lu,
            form=req.form,
        )
        return Query(
            drug=drug,
            checks=frozenset(checks),
            check_alternatives=req.check_alternatives,
            include_lu=req.include_lu,
            include_brand=req.include_brand,
            exclude_lu=req.exclude_lu,
            condition=req.condition,
            top_k=req.top_k,
        )

    def sql(self, rt: Runtime, q: Query) -> SqlData:
        return formulary.keyword_search(rt.ohip_sql, q.drug)

    def vector(self, rt: Runtime, q: Query) -> list[VectorHit]:
        return formulary.vector_search(rt.vectors, q.drug)

    async def merge(self, rt: Runtime, q: Query, found: Found) -> Answer:
        """SQL takes precedence for the formulary; without it, a group passage stands in."""
        hits = found.vector.value or []
        sql = found.sql.value
        data = sql if sql is not None else formulary.from_passages(q.drug, hits)
        return answer(q, data, hits, from_sql=sql is not None)

    def score(self, q: Query, merged: Answer, found: Found) -> Score[Citation]:
        data, hits = merged.data, merged.hits
        corroborating = [h for h in hits if corroborates(h, data)] if data.primary else []
        citations = citations_for(
            data,
            merged.answered,
            notes=bool(merged.coverage and merged.coverage.notes),
            brand_groups=[b.group_id for b in merged.brands],
            hits=hits,
        )
        return Score(
            citations=citations,
            conflicts=group_conflicts(data, hits) if merged.from_sql else [],
            counts=Counts(
                sql_records=data.records if merged.from_sql else 0,
                vector_passages=len(corroborating),
                profile=OFF,
            ),
            signals=Signals(no_answer=data.primary is None),
        )

    def respond(self, q: Query, merged: Answer, evidence: EvidenceFields[Any]) -> Response:
        return Response(
            **evidence,
            coverage=merged.coverage,
            interchangeable=merged.interchangeable,
            lowest_cost=merged.lowest_cost,
            context=merged.context,
            alternatives=merged.alternatives,
            price_comparison=merged.price_comparison,
            brands=merged.brands,
            needs_more_info=merged.data.primary is None,
            other_strengths=[brand_of(r) for r in merged.others],
            not_listed=merged.not_listed,
        )


TOOL = OdbGet()
