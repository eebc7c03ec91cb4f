"""Write docs/reference/ from the code (fmbench.reference); --check exits 1 when a page is out of date."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fmbench.reference import reference_pages

DOCS = Path(__file__).resolve().parents[1] / "docs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page differs")
    args = parser.parse_args()
    stale = []
    for name, text in reference_pages().items():
        path = DOCS / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for name in stale:
        print(f"{'out of date' if args.check else 'wrote'}: docs/{name}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
