"""``python -m bloatlab`` is the ``bloatlab`` command."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="bloatlab")
