"""Case family modules, one per corpus domain; importing this package registers them all."""

from evals.derive.families import (  # noqa: F401
    adp,
    adp_category,
    adp_cep,
    adp_descriptive,
    adp_paraphrase,
    coverage,
    odb,
    odb_brand_swap,
    odb_misspelling,
    odb_paraphrase,
    ohip,
    opa,
    opa_ambiguous,
    opa_by_id,
    opa_off_topic,
    opa_policy_level,
    opa_tools,
)
