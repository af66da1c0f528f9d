import sys

from ocm_cli.program import main

sys.exit(main())
