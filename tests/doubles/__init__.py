"""Test doubles: clocks and schedulers driven by hand, used by the tests only."""
