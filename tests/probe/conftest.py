"""Fixtures for the probe tests."""

import pytest
from synthetic_world import World


@pytest.fixture
def world() -> World:
    """A fresh synthetic world (seeded)."""
    return World()
