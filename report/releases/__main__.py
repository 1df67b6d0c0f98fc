"""`python -m report.releases`: the next torch release to measure (report/releases/next.py)."""

import sys

from report.releases.next import main

sys.exit(main())
