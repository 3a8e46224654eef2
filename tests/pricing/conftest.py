from tests.cli.conftest import cli  # noqa: F401  (the CLI runner: a real process, exit code, stdout, stderr)
