"""The server installs with what it needs: importing and building it, and starting its command,
loads none of the harness, load or scale extras' packages (pyproject.toml's optional
dependencies), so `pip install ontario-clinical-mcp` serves the twelve tools without them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the extras' own packages, by import name (pyproject names them by distribution name)
IMPORT_NAMES = {
    "pandas": "pandas",
    "jsonschema": "jsonschema",
    "ir-measures": "ir_measures",
    "pytrec-eval-terrier": "pytrec_eval",
    "ragas": "ragas",
    "langchain-community": "langchain_community",
    "scipy": "scipy",
    "scikit-learn": "sklearn",
    "matplotlib": "matplotlib",
    "hypothesis": "hypothesis",
    "hypothesis-jsonschema": "hypothesis_jsonschema",
    "locust": "locust",
}


def extras_only() -> set[str]:
    """Distribution names in an extra and not among the server's dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def name(req: str) -> str:
        return req.split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip()

    core = {name(r) for r in project["dependencies"]}
    extra = {
        name(r)
        for group, reqs in project["optional-dependencies"].items()
        if group != "dev"
        for r in reqs
        if not r.startswith(project["name"])
    }
    return extra - core


def test_every_extra_package_is_known_by_its_import_name() -> None:
    assert extras_only() == set(IMPORT_NAMES), "update IMPORT_NAMES with the extras' packages"


def test_the_server_imports_and_builds_without_the_extras() -> None:
    blocked = sorted(IMPORT_NAMES[n] for n in extras_only())
    script = textwrap.dedent(
        f"""
        import sys
        BLOCKED = {blocked!r}

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ImportError(f"{{name}} is an extra's package")
                return None

        sys.meta_path.insert(0, Block())
        from reference_server.__main__ import build_parser
        import reference_server.http_app, reference_server.server, reference_server.tools
        from reference_server.config import Settings
        from reference_server.index.fingerprint import index_problem
        build_parser().parse_args(["--transport", "http"])
        if index_problem(Settings.from_env()) is None:
            server = reference_server.server.build_server(Settings.from_env())
            print("built", len(reference_server.tools.ALL_TOOLS))
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ok" in done.stdout


def test_the_blocker_would_catch_an_extra() -> None:
    """The same script fails when the server side imports an extra's package."""
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'scipy': raise ImportError('extra')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import ocm_common.bootstrap\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and "extra" in done.stderr
