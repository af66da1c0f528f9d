"""Case family modules, one per corpus domain; importing this package registers them all."""

from evals.derive.families import (  # noqa: F401
    adp,
    adp_category,
    adp_paraphrase,
    coverage,
    odb,
    odb_paraphrase,
    ohip,
    opa,
    opa_ambiguous,
    opa_off_topic,
    opa_tools,
)
