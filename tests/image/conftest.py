"""The image tests (``make image-test``, run by .ci/run after ``make test``) start containers
from the image ``make image`` built; ``make test``'s run leaves them out (its time budget is its
own), and runs only the checks here that need no image (test_locks.py)."""

from __future__ import annotations

import os

collect_ignore = (
    [] if os.environ.get("MAHJONG_IMAGE_TESTS") == "1" else ["test_image.py", "test_stack.py"]
)
