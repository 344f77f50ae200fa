"""The SDK tests' fixtures (the `wisp` executable, a work folder, its environment)."""

from tests.sdk.conftest import cli, env, work  # noqa: F401
