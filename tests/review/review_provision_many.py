"""``review_provision`` with twelve low-confidence facts to review as well: more than one page of the queue."""

from __future__ import annotations

import sys

from tests.review.review_provision import main

if __name__ == "__main__":
    sys.exit(main(extra=12))
