"""`python -m bench.quality` (from the repository root) or `python bench/quality` (from anywhere)."""

import sys
from pathlib import Path

# run as a folder (python bench/quality), the repository root is not on the path: config and deepresearch
# are imported from there
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.quality.cli import main  # noqa: E402

sys.exit(main())
