"""One tool object: every declaration on the tool class, evidence filled by the pipeline, and
sub-tool requests checked as strictly as the wire checks a client's."""

from __future__ import annotations

import pytest

from reference_server.config import RAISE_STEPS
from reference_server.errors import ToolInputError
from reference_server.tools import ALL_TOOLS
from reference_server.tools.common import Evidence
from reference_server.tools.pipeline import SubCall
from reference_server.tools.schedule import get as schedule_get
from reference_server.tools.score_step import Judged, with_evidence


def test_every_tool_declares_its_surface_once() -> None:
    names = [tool.name for tool in ALL_TOOLS]
    assert len(set(names)) == len(names) == 12
    for tool in ALL_TOOLS:
        assert tool.title and tool.description, tool.name
        assert set(tool.steps) <= set(RAISE_STEPS), tool.name
    assert [t.name for t in ALL_TOOLS if t.annotations().open_world_hint] == ["opa.freshness_probe"]


def test_the_pipeline_fills_the_evidence_fields_the_response_declares() -> None:
    class Answer(Evidence):
        total: int

    judged: Judged[None] = Judged(provenance=["sql"], confidence=0.9, citations=[], conflicts=[])
    answer = with_evidence(Answer, judged, {"total": 3})
    assert (answer.provenance, answer.confidence, answer.total) == (["sql"], 0.9, 3)


def test_a_sub_request_its_model_refuses_is_the_calls_error() -> None:
    call = SubCall.planned(schedule_get.TOOL, lambda: schedule_get.Request(q=""))
    assert call.request is None and call.error and call.error.startswith("invalid arguments")


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_a_typed_sub_request_is_checked_as_strictly_as_the_wire() -> None:
    # built without validation: a string where the schema wants an integer, which lax
    # validation would coerce and the wire refuses
    loose = schedule_get.Request.model_construct(q="consultation", top_k="5")
    with pytest.raises(ToolInputError, match="top_k"):
        schedule_get.TOOL.validate(loose)
    assert schedule_get.TOOL.validate(schedule_get.Request(q="consultation", top_k=5)).top_k == 5
