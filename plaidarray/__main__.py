import sys

from plaidarray.cli import main

sys.exit(main())
