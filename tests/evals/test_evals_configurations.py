"""Named configurations of the reference server: names resolve to Settings, or say why not."""

from __future__ import annotations

import pytest

from reference_server.config import Settings
from reference_server.configurations import CONFIGURATIONS, ConfigurationUnavailable, resolve


def test_names_select_settings_and_environment_still_applies() -> None:
    assert Settings.from_env(env={"OCM_CONFIG": "keyword"}).mode == "keyword"
    assert Settings.from_env(env={"OCM_CONFIG": "hybrid"}) == Settings.from_env(env={})
    no_boosts = Settings.from_env(env={"OCM_CONFIG": "no-boosts", "OCM_SQL_TIMEOUT_MS": "900"})
    assert no_boosts.fusion.boosts is False and no_boosts.sql_timeout_ms == 900
    k60 = Settings.from_env(env={"OCM_CONFIG": "rrf-k60"}, fusion={"boosts": False})
    assert (k60.fusion.rrf_k, k60.fusion.vector_weight, k60.fusion.boosts) == (60.0, 1.0, False)


def test_unknown_and_unavailable_names_are_clear_errors() -> None:
    with pytest.raises(ConfigurationUnavailable, match="known: hybrid, vector, keyword"):
        resolve("bm42", {})
    with pytest.raises(ConfigurationUnavailable, match="needs OPENAI_API_KEY"):
        resolve("openai-embeddings", {})
    with pytest.raises(ConfigurationUnavailable, match="llm-rerank' is unavailable"):
        resolve("llm-rerank", {})


def test_every_configuration_builds_valid_settings_when_available() -> None:
    for name, config in CONFIGURATIONS.items():
        if config.unavailable({"OPENAI_API_KEY": "x"}) is None:
            Settings.model_validate(resolve(name, {"OPENAI_API_KEY": "x"}))
