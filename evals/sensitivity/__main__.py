"""`python -m evals.sensitivity [--defect ID ...] [--commands gate,pytest] [--all]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.sensitivity.defects import load_defects
from evals.sensitivity.runner import COMMANDS, run_sensitivity, table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.sensitivity", description=__doc__)
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
    args = parser.parse_args(argv)

    chosen = [n.strip() for n in args.commands.split(",") if n.strip()]
    unknown = sorted(set(chosen) - set(names))
    if unknown or not chosen:
        parser.error(f"--commands: unknown {unknown or 'none given'}; allowed: {', '.join(names)}")
    commands = [next(c for c in COMMANDS if c.name == n) for n in chosen]
    defects = load_defects()
    if args.defect:
        missing = sorted(set(args.defect) - {d.id for d in defects})
        if missing:
            parser.error(
                f"--defect: unknown {missing}; allowed: {', '.join(d.id for d in defects)}"
            )
        defects = [d for d in defects if d.id in args.defect]

    out = Path(args.out)
    run = run_sensitivity(defects, commands, out, rev=args.rev, stop_at_red=not args.all)
    text = table(run, {c.name for c in COMMANDS if c.in_make_test})
    (out / "sensitivity.md").write_text(f"# Sensitivity: seeded defects\n\n{text}\n")
    print(text)
    print(f"\n{out / 'sensitivity.md'}; exit {run.exit_code}")
    return run.exit_code


if __name__ == "__main__":
    sys.exit(main())
