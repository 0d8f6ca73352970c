#!/usr/bin/env bash
# Checks the structure rules in figures (file and function sizes, the include graph between
# modules, OS calls only in os/, getenv only in the credentials providers, no bare ENOMEM return
# where an err can say it, digests and doubling arrays only through util) against the known debt
# in scripts/structure-debt.txt. Run by scripts/test.sh (CI). Usage: scripts/check-structure.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec node scripts/check-structure.mjs "$@"
