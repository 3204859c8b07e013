"""``python -m posharness`` runs the same command line as the ``posharness`` script."""

from posharness.cli import main

if __name__ == "__main__":
    main()
