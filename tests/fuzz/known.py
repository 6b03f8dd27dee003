"""Failure signatures of bugs already filed (issue 9); the CI run xfails these and fails on anything new.

Each entry: a regex over the outcome signature (see harness.normalize) -> the filed class.
Remove an entry when its bug is fixed: the CI run then fails if the class comes back.
"""

import re

KNOWN: dict[str, str] = {}


def known_class(signature: str) -> str | None:
    for pattern, name in KNOWN.items():
        if re.search(pattern, signature):
            return name
    return None
