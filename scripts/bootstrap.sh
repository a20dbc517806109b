#!/usr/bin/env bash
# Creates .venv with the pinned build/test environment (requirements.txt). Idempotent:
# re-running with an unchanged requirements.txt installs nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$root/requirements.txt"
echo "$want" > "$stamp"
echo "bootstrap: pinned environment ready in .venv"
