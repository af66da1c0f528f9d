"""Exact vector search (the flat index): the true nearest chunks, filters applied exactly, ties
broken by id, and the same answers from Chroma's HNSW index where it has no misses."""

from __future__ import annotations

import numpy as np
from fastmcp import FastMCP

from reference_server import ranking
from reference_server.embedding import make_embedder
from reference_server.retrieval.vector import FlatIndex, VectorClient
from tests.conftest import make_settings


def test_the_nearest_rows_are_exact_and_ties_go_to_the_smaller_id() -> None:
    flat = FlatIndex.build({"c": [1.0, 0.0], "a": [2.0, 0.0], "b": [0.0, 1.0], "d": [1.0, 1.0]})
    hits = flat.nearest([1.0, 0.0], 3, None)
    assert [doc_id for doc_id, _ in hits] == ["a", "c", "d"]  # a and c tie at 1.0: id order
    assert hits[0][1] == hits[1][1] == 1.0
    assert hits[2][1] == 0.7071  # 2**-0.5 at the stated precision
    # Ties at the cut: every tied row competes, so the smaller id wins whatever the row order.
    assert [doc_id for doc_id, _ in flat.nearest([1.0, 0.0], 1, None)] == ["a"]


def test_last_bit_differences_reorder_nothing() -> None:
    """Two CPUs computing the same similarity differ in the last bits; rounded to
    `ranking.SIMILARITY_DECIMALS`, the scores tie and the id decides, on either machine."""
    base = np.array([0.6, 0.8], dtype=np.float64)
    nudged = base + np.array([3e-7, -3e-7])  # what another CPU's kernel might compute for "b"
    for b_vector in (base, nudged):
        flat = FlatIndex.build({"b": list(b_vector), "a": [0.6, 0.8], "c": [0.0, 1.0]})
        hits = flat.nearest([0.6, 0.8], 2, None)
        assert [doc_id for doc_id, _ in hits] == ["a", "b"]
        assert hits[0][1] == hits[1][1] == 1.0
    # A difference at the stated precision still ranks.
    flat = FlatIndex.build({"b": [0.6, 0.8], "a": [0.62, 0.78]})
    assert [i for i, _ in flat.nearest([0.6, 0.8], 2, None)] == ["b", "a"]


def test_ranking_sorts_on_rounded_scores_then_ids() -> None:
    items = [("z", 0.50000001), ("y", 0.5), ("x", 0.49), ("w", 0.5 - 1e-9)]
    ordered = ranking.best_first(items, lambda i: i[1], lambda i: i[0])
    assert [i[0] for i in ordered] == ["w", "y", "z", "x"]
    assert ranking.similarity(0.123456) == 0.1235 and ranking.score(1 / 3) == 0.333333


def test_a_filter_keeps_only_its_rows_and_an_empty_filter_answers_nothing() -> None:
    flat = FlatIndex.build({"a": [1.0, 0.0], "b": [0.9, 0.1], "c": [0.0, 1.0]})
    rows = np.array([flat.row_of["b"], flat.row_of["c"]])
    assert [i for i, _ in flat.nearest([1.0, 0.0], 5, rows)] == ["b", "c"]
    assert flat.nearest([1.0, 0.0], 5, np.array([], dtype=np.intp)) == []


def test_flat_search_matches_brute_force_on_a_real_collection(server: FastMCP) -> None:
    vectors: VectorClient = server.runtime.vectors  # type: ignore[attr-defined]
    where = {"policy_level": "expectation"}
    hits = vectors.search("opa_cpso_corpus", "consent for a minor", 15, where)
    flat = vectors._flat["opa_cpso_corpus"]
    query = np.asarray(
        vectors.embed_query("consent for a minor", "opa_cpso_corpus"), dtype=np.float32
    )
    query /= np.linalg.norm(query)
    allowed = [
        row
        for row, doc_id in enumerate(flat.ids)
        if vectors._payloads["opa_cpso_corpus"][doc_id][1].get("policy_level") == "expectation"
    ]
    expected = sorted(
        allowed, key=lambda row: (-ranking.similarity(flat.matrix[row] @ query), flat.ids[row])
    )
    assert [h.id for h in hits] == [flat.ids[row] for row in expected[:15]]
    assert all(h.metadata["policy_level"] == "expectation" for h in hits)


def test_above_the_limit_chroma_searches_and_finds_the_same_top_hits() -> None:
    settings = make_settings()
    embedder = make_embedder(settings, for_queries=True)
    exact = VectorClient(settings, embedder)
    approximate = VectorClient(make_settings(exact_search_max=0), embedder)
    query = "informed consent capacity"
    top_exact = [h.id for h in exact.search("opa_cpso_corpus", query, 5)]
    top_hnsw = [h.id for h in approximate.search("opa_cpso_corpus", query, 5)]
    assert "opa_cpso_corpus" in exact._flat and not approximate._flat
    assert top_hnsw == top_exact  # HNSW misses are deep in the ranking, not at the top


def test_above_the_limit_filters_are_searched_without_chromas_where() -> None:
    """A large collection: a selective filter is searched exactly over its own vectors, a broad
    one by an unfiltered HNSW query filtered here; both give the exact search's answer."""
    settings = make_settings()
    embedder = make_embedder(settings, for_queries=True)
    exact = VectorClient(settings, embedder)
    query = "informed consent capacity"
    broad = {"chunk_type": {"$in": ["parent", "child"]}}  # every chunk: unfiltered HNSW
    half = {"policy_level": "expectation"}  # about half: HNSW, over-fetched and filtered here
    small = {"$and": [{"chunk_type": "parent"}, {"document_type": "advice"}]}  # exact subset
    # The limit sits just above the small filter, whatever size the corpus has grown to.
    exact.search("opa_cpso_corpus", query, 1)  # loads the collection's metadata
    limit = len(exact._ids_where("opa_cpso_corpus", small)) + 10
    assert len(exact._ids_where("opa_cpso_corpus", half)) > limit
    large = VectorClient(make_settings(exact_search_max=limit), embedder)
    for where in (broad, half, small):
        expected = [h.id for h in exact.search("opa_cpso_corpus", query, 8, where)]
        found = large.search("opa_cpso_corpus", query, 8, where)
        assert [h.id for h in found] == expected, where
    assert "opa_cpso_corpus" not in large._flat
    n_small = len(large._ids_where("opa_cpso_corpus", small))
    assert 0 < n_small <= limit, "the advice filter should be small enough for an exact subset"
    assert any(len(f.ids) == n_small for f in large.derived.members("subset_flat"))


def test_a_selective_filter_is_searched_on_its_kept_rows_with_the_same_answer(
    server: FastMCP,
) -> None:
    """A filter keeping under half a flat collection gets its own copy of its rows, once; the
    answer (ids, scores, tie-break) is the one scoring those rows in place gives."""
    vectors: VectorClient = server.runtime.vectors  # type: ignore[attr-defined]
    collection = "opa_cpso_corpus"
    where = {"$and": [{"chunk_type": "parent"}, {"policy_level": "advice"}]}
    query = "closing a practice and patient records"
    hits = vectors.search(collection, query, 12, where)
    flat = vectors._flat[collection]
    rows = vectors._rows_where(collection, flat, where)
    assert 0 < len(rows) * 2 < len(flat.ids)
    in_place = flat.nearest(vectors.embed_query(query, collection), 12, rows)
    assert [(h.id, h.similarity) for h in hits] == [(i, max(0.0, s)) for i, s in in_place]
    wanted = [flat.ids[r] for r in rows]  # other tests of this process keep subsets of their own

    def copies() -> list[FlatIndex]:
        return [f for f in vectors.derived.members("subset_flat") if f.ids == wanted]

    kept = copies()
    assert len(kept) == 1
    vectors.search(collection, "another question about records", 5, where)
    assert copies() == kept
