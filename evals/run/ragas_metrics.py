"""ragas metrics: offline ones by default, LLM-judged ones only when ``OPENAI_API_KEY`` is set.

Offline (no network): ID-based context precision and recall (retrieved ids vs judged ids),
Levenshtein string similarity of the answer to the scenario's ``reference`` answer, and
string-based context recall against ``reference_contexts``. With a key: faithfulness,
LLM context precision and recall, and embedding similarity to the reference, through an
OpenAI-compatible endpoint (``OPENAI_BASE_URL``; model from ``EVALS_LLM_MODEL`` and
``EVALS_EMBEDDING_MODEL``). ROUGE/BLEU are not offered: ragas needs ``rouge_score`` /
``sacrebleu`` for them and those are not dependencies of this project.

Each metric is registered with the inputs it needs and whether it needs a judge; a metric
whose inputs a scenario lacks is simply not computed for it (stored as absent, not as 0).
"""

from __future__ import annotations

import asyncio
import math
import os
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

os.environ["RAGAS_DO_NOT_TRACK"] = "true"

from evals import registry
from evals.run.extract import answer_text, contexts
from evals.run.public_keys import public_judgments, public_ranking
from evals.run.runlog import DEFAULT_MODE, ScenarioRecord
from evals.run.scenario import Scenario
from evals.run.tool_descriptors import ToolDescriptors
from ocm_common.registry import Registry

if TYPE_CHECKING:
    from evals.run.metrics import PerTool

DEFAULT_LLM_MODEL = "gpt-4o-mini"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"


@dataclass(frozen=True)
class RagasInput:
    """What a ragas metric may look at for one scenario."""

    question: str
    answer: str
    contexts: tuple[str, ...]
    retrieved_ids: tuple[str, ...]
    relevant_ids: tuple[str, ...]
    reference: str | None = None
    reference_contexts: tuple[str, ...] = ()

    def has(self, need: str) -> bool:
        value = {
            "question": self.question,
            "answer": self.answer,
            "contexts": self.contexts,
            "relevant": self.relevant_ids,
            "retrieved_ids": self.retrieved_ids,
            "reference": self.reference,
            "reference_contexts": self.reference_contexts,
        }[need]
        return bool(value)


@dataclass(frozen=True)
class Judges:
    """The LLM and embeddings used by judged metrics (built from the environment)."""

    llm: Any
    embeddings: Any
    model: str
    embedding_model: str
    base_url: str | None


MetricFn = Callable[[RagasInput, Judges | None], Awaitable[float | None]]


@dataclass(frozen=True)
class RagasMetricDef:
    name: str
    fn: MetricFn
    needs: frozenset[str] = field(default_factory=frozenset)
    llm: bool = False


RAGAS_METRICS: Registry[RagasMetricDef] = Registry("ragas metric")


def ragas_metric(
    name: str, *, needs: tuple[str, ...], llm: bool = False
) -> Callable[[MetricFn], MetricFn]:
    """Register a ragas metric with the inputs it needs and whether it needs a judge."""

    if registry.get(name).family != "ragas":  # its label and direction are stated there, once
        raise ValueError(f"{name} is not a ragas metric in evals.registry")
    return RAGAS_METRICS.decorator(name, lambda fn: RagasMetricDef(name, fn, frozenset(needs), llm))


def _clean(value: Any) -> float | None:
    """ragas returns NaN for "undefined"; the log stores that as absent."""
    if value is None:
        return None
    number = float(getattr(value, "value", value))
    return None if math.isnan(number) else number


def _legacy(name: str) -> Any:
    """A metric class from ``ragas.metrics`` (its deprecation notice is not ours to act on)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import ragas.metrics as legacy

        return getattr(legacy, name)


def _sample(data: RagasInput, **extra: Any) -> Any:
    from ragas.dataset_schema import SingleTurnSample

    return SingleTurnSample(**extra)


# ----------------------------------------------------------------------------- offline


async def _id_based(metric_class: str, data: RagasInput) -> float | None:
    """An ID-based ragas metric: retrieved ids scored against the judged ids."""
    metric = _legacy(metric_class)()
    sample = _sample(
        data,
        retrieved_context_ids=list(data.retrieved_ids),
        reference_context_ids=list(data.relevant_ids),
    )
    return _clean(await metric.single_turn_ascore(sample))


@ragas_metric("id_context_precision", needs=("retrieved_ids", "relevant"))
async def id_context_precision(data: RagasInput, judges: Judges | None) -> float | None:
    return await _id_based("IDBasedContextPrecision", data)


@ragas_metric("id_context_recall", needs=("relevant",))
async def id_context_recall(data: RagasInput, judges: Judges | None) -> float | None:
    return await _id_based("IDBasedContextRecall", data)


@ragas_metric("string_similarity", needs=("reference", "answer"))
async def string_similarity(data: RagasInput, judges: Judges | None) -> float | None:
    from ragas.metrics.collections import DistanceMeasure, NonLLMStringSimilarity

    metric = NonLLMStringSimilarity(distance_measure=DistanceMeasure.LEVENSHTEIN)
    return _clean(await metric.ascore(reference=data.reference or "", response=data.answer))


@ragas_metric("nonllm_context_recall", needs=("reference_contexts",))
async def nonllm_context_recall(data: RagasInput, judges: Judges | None) -> float | None:
    if not data.contexts:
        return 0.0
    metric = _legacy("NonLLMContextRecall")()
    sample = _sample(
        data,
        retrieved_contexts=list(data.contexts),
        reference_contexts=list(data.reference_contexts),
    )
    return _clean(await metric.single_turn_ascore(sample))


# ----------------------------------------------------------------------------- LLM-judged


def _need(judges: Judges | None) -> Judges:
    if judges is None:
        raise RuntimeError("LLM-judged metric called without judges")
    return judges


@ragas_metric("faithfulness", needs=("question", "answer", "contexts"), llm=True)
async def faithfulness(data: RagasInput, judges: Judges | None) -> float | None:
    from ragas.metrics.collections import Faithfulness

    metric = Faithfulness(llm=_need(judges).llm)
    result = await metric.ascore(
        user_input=data.question, response=data.answer, retrieved_contexts=list(data.contexts)
    )
    return _clean(result)


async def _judged_contexts(metric: Any, data: RagasInput) -> float | None:
    """An LLM-judged context metric: the contexts scored against the question and reference."""
    result = await metric.ascore(
        user_input=data.question,
        reference=data.reference or "",
        retrieved_contexts=list(data.contexts),
    )
    return _clean(result)


@ragas_metric("llm_context_precision", needs=("question", "reference", "contexts"), llm=True)
async def llm_context_precision(data: RagasInput, judges: Judges | None) -> float | None:
    from ragas.metrics.collections import ContextPrecision

    return await _judged_contexts(ContextPrecision(llm=_need(judges).llm), data)


@ragas_metric("llm_context_recall", needs=("question", "reference", "contexts"), llm=True)
async def llm_context_recall(data: RagasInput, judges: Judges | None) -> float | None:
    from ragas.metrics.collections import ContextRecall

    return await _judged_contexts(ContextRecall(llm=_need(judges).llm), data)


@ragas_metric("semantic_similarity", needs=("reference", "answer"), llm=True)
async def semantic_similarity(data: RagasInput, judges: Judges | None) -> float | None:
    from ragas.metrics.collections import SemanticSimilarity

    metric = SemanticSimilarity(embeddings=_need(judges).embeddings)
    return _clean(await metric.ascore(reference=data.reference or "", response=data.answer))


# ----------------------------------------------------------------------------- wiring


def llm_enabled(env: Mapping[str, str] | None = None) -> bool:
    """LLM-judged metrics run only when a key is configured."""
    return bool((env if env is not None else os.environ).get("OPENAI_API_KEY"))


def build_judges(env: Mapping[str, str] | None = None) -> Judges | None:
    """Judges from ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL`` (None without a key)."""
    env = env if env is not None else os.environ
    if not llm_enabled(env):
        return None
    from openai import AsyncOpenAI
    from ragas.embeddings import OpenAIEmbeddings
    from ragas.llms import llm_factory

    base_url = env.get("OPENAI_BASE_URL") or None
    model = env.get("EVALS_LLM_MODEL") or DEFAULT_LLM_MODEL
    embedding_model = env.get("EVALS_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODEL
    client = AsyncOpenAI(api_key=env["OPENAI_API_KEY"], base_url=base_url, max_retries=1)
    llm = llm_factory(model, client=client, temperature=0.0)
    embeddings = OpenAIEmbeddings(client=client, model=embedding_model)
    return Judges(llm, embeddings, model, embedding_model, base_url)


def ragas_input(
    scenario: Scenario, record: ScenarioRecord, descriptors: ToolDescriptors | None = None
) -> RagasInput:
    """The ragas view of one scenario's result (``descriptors``: where the tool's result holds
    its answer and passages; the built-in tools' when not given)."""
    return RagasInput(
        question=scenario.question(),
        answer=answer_text(record.tool, record.result, descriptors=descriptors)
        if record.result
        else "",
        contexts=tuple(contexts(record.tool, record.result, descriptors)),
        retrieved_ids=tuple(public_ranking(record.retrieved_ids)),
        relevant_ids=tuple(public_judgments(scenario.relevant)),
        reference=scenario.reference,
        reference_contexts=tuple(scenario.reference_contexts),
    )


async def score_one(
    data: RagasInput, judges: Judges | None, names: Sequence[str] | None = None
) -> tuple[dict[str, float | None], dict[str, str]]:
    """Every applicable registered metric for one input, and the errors of those that raised
    (recorded as absent so one bad judge reply cannot abort a run)."""
    scores: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for name, definition in RAGAS_METRICS.items():
        if names is not None and name not in names:
            continue
        if definition.llm and judges is None:
            continue
        if not all(data.has(need) for need in definition.needs):
            continue
        try:
            scores[name] = await definition.fn(data, judges)
        except Exception as exc:
            scores[name] = None
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
    return scores, errors


async def score_records(
    records: Sequence[ScenarioRecord],
    scenarios: Mapping[str, Scenario],
    *,
    judges: Judges | None = None,
    concurrency: int = 4,
    descriptors: ToolDescriptors | None = None,
) -> list[ScenarioRecord]:
    """Copies of the main-pass records with ragas scores attached (other modes unchanged)."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(record: ScenarioRecord) -> ScenarioRecord:
        scenario = scenarios.get(record.id)
        if record.mode != DEFAULT_MODE or scenario is None:
            return record
        async with gate:
            scores, errors = await score_one(ragas_input(scenario, record, descriptors), judges)
        return record.model_copy(update={"ragas": scores, "ragas_errors": errors})

    return list(await asyncio.gather(*(one(r) for r in records)))


def ragas_aggregates(records: Sequence[ScenarioRecord]) -> PerTool:
    """Mean of each ragas metric overall and per tool (absent values are skipped)."""
    import pandas as pd

    rows = [{"tool": r.tool, **r.ragas} for r in records if r.mode == DEFAULT_MODE and r.ragas]
    if not rows:
        return {"overall": {}, "per_tool": {}}
    frame = pd.DataFrame(rows)
    columns = [c for c in frame.columns if c != "tool"]
    frame[columns] = frame[columns].apply(pd.to_numeric, errors="coerce")
    overall = {c: float(v) for c, v in frame[columns].mean().items() if not pd.isna(v)}
    per_tool = {
        str(tool): {c: float(v) for c, v in group[columns].mean().items() if not pd.isna(v)}
        for tool, group in frame.groupby("tool", sort=True)
    }
    return {"overall": overall, "per_tool": per_tool}
