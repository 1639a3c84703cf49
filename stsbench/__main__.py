"""``python -m stsbench`` (used by ``torchrun -m stsbench train``)."""

from stsbench.cli import main

main()
