"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    """The real traces in ``../shared/traces`` next to the repository; skip when absent."""
    path = (REPO_ROOT / ".." / "shared" / "traces").resolve()
    if not path.is_dir():
        pytest.skip(f"real traces not found at {path}: tests need ../shared/traces")
    return path
