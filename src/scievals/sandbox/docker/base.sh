#!/usr/bin/env bash
# The base image for the scoring runtime images where no image registry is reachable:
# Debian 12 (python 3.11) from Debian packages, made with debootstrap and `docker import`.
#
#   src/scievals/sandbox/docker/base.sh [NAME:TAG]    # default scievals-base:bookworm
#
# Built once: the root file system is kept as a tarball under the scievals cache and imported
# again (about 10 s) when the image is missing; prints the image name. Needs root, debootstrap
# and a Debian mirror (the system's, from /etc/apt/sources.list.d/debian.sources, else
# deb.debian.org). `scievals sandbox image` calls it when no official Python image can be had.
set -euo pipefail

IMAGE="${1:-scievals-base:bookworm}"
CACHE="${SCIEVALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scievals}/docker"
TARBALL="$CACHE/base-bookworm.tar"
mkdir -p "$CACHE"
say() { printf '[docker base] %s\n' "$*" >&2; }

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "$IMAGE"
    exit 0
fi
exec 9>"$CACHE/base.lock"
flock 9
if [[ ! -s "$TARBALL" ]]; then
    [[ $EUID -eq 0 ]] || { say "debootstrap needs root"; exit 1; }
    command -v debootstrap >/dev/null || { say "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
    MIRROR="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
    MIRROR="${MIRROR:-http://deb.debian.org/debian}"
    ROOT="$(mktemp -d "$CACHE/bookworm-root.XXXXXX")"
    trap 'rm -rf "$ROOT"' EXIT
    say "debootstrap bookworm from $MIRROR (one time, about 2 minutes)"
    debootstrap --variant=minbase --include=python3,python3-venv bookworm "$ROOT" "$MIRROR" >&2
    rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/*
    tar --numeric-owner -C "$ROOT" -cf "$TARBALL.tmp" . && mv "$TARBALL.tmp" "$TARBALL"
fi
say "importing $TARBALL as $IMAGE"
docker import --change 'CMD ["sleep", "infinity"]' "$TARBALL" "$IMAGE" >/dev/null
echo "$IMAGE"
