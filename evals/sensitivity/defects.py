"""The seeded defects (defects.yaml): one model, loading, and applying one to a checkout."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

DEFECTS_FILE = Path(__file__).with_name("defects.yaml")


class Defect(BaseModel):
    """A plausible bug written as one exact replacement: `find` occurs once in `file`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9-]+$")
    layer: str
    what: str
    file: str
    find: str = Field(min_length=1)
    replace: str

    def problem(self, root: Path) -> str | None:
        """Why this defect cannot be applied to the checkout at `root`, or None."""
        path = root / self.file
        if not path.is_file():
            return f"{self.file} does not exist"
        count = path.read_text(encoding="utf-8").count(self.find)
        if count != 1:
            return (
                f"its text occurs {count} times in {self.file} (must be once: update defects.yaml)"
            )
        if self.find == self.replace:
            return "its replacement changes nothing"
        return None

    def apply(self, root: Path) -> None:
        problem = self.problem(root)
        if problem:
            raise ValueError(f"defect {self.id}: {problem}")
        path = root / self.file
        path.write_text(
            path.read_text(encoding="utf-8").replace(self.find, self.replace), encoding="utf-8"
        )


def load_defects(path: Path = DEFECTS_FILE) -> list[Defect]:
    defects = [Defect.model_validate(item) for item in yaml.safe_load(path.read_text()) or []]
    ids = [d.id for d in defects]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate defect ids in {path}")
    return defects
