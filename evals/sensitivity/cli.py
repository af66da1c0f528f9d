"""`ocm sensitivity [--defect ID ...] [--commands gate,pytest] [--all]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from evals.sensitivity.defects import load_defects
from evals.sensitivity.runner import COMMANDS, run_sensitivity, table
from ocm_common.cli_errors import usage_error


def build_parser(prog: str = "ocm sensitivity") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--defect", action="append", help="only this defect id (repeatable)")
    names = [c.name for c in COMMANDS]
    parser.add_argument(
        "--commands",
        default=",".join(names),
        help=f"comma-separated, run in this order (default: {','.join(names)})",
    )
    parser.add_argument(
        "--all", action="store_true", help="run every command on each defect, not only until red"
    )
    parser.add_argument("--rev", default="HEAD", help="the commit to judge (default: HEAD)")
    parser.add_argument("--out", default="reports/sensitivity/latest")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Seed each chosen defect and run the chosen commands on it; a wrong name is exit 2."""
    names = [c.name for c in COMMANDS]

    chosen = [n.strip() for n in args.commands.split(",") if n.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown or not chosen:
        return usage_error(
            f"--commands: unknown {unknown or 'none given'}; allowed: {', '.join(names)}"
        )
    commands = [next(c for c in COMMANDS if c.name == n) for n in chosen]
    defects = load_defects()
    if args.defect:
        missing = sorted(set(args.defect) - {d.id for d in defects})
        if missing:
            return usage_error(
                f"--defect: unknown {missing}; allowed: {', '.join(d.id for d in defects)}"
            )
        defects = [d for d in defects if d.id in args.defect]

    out = Path(args.out)
    result = run_sensitivity(defects, commands, out, rev=args.rev, stop_at_red=not args.all)
    text = table(result, {c.name for c in COMMANDS if c.in_make_test})
    (out / "sensitivity.md").write_text(f"# Sensitivity: seeded defects\n\n{text}\n")
    print(text)
    print(f"\n{out / 'sensitivity.md'}; exit {result.exit_code}")
    return result.exit_code
