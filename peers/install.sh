#!/usr/bin/env bash
# Installs the real MCP peer servers the tests talk to, under target/peers/.
#
# usage: peers/install.sh [everything|python|rmcp|rmcp-bench|all]...   (default: all)
#
# rmcp-bench (the rmcp side of `cargo xtask bench`, a release build) is not part of
# `all`: only the benchmark needs it, and it installs it itself.
#
# Idempotent: each peer writes a marker file named after its pinned version once
# its install succeeded, and is skipped while that marker exists. Callers that may
# run in parallel (the test harness) serialise calls with a lock of their own.
# Needs only node 20 + npm, python3.11+ with venv/pip, and cargo.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS="${BRAIN_PEERS_DIR:-$ROOT/target/peers}"

EVERYTHING_VERSION="2026.8.31"
PYTHON_MCP_VERSION="2.3.0"
RMCP_MARKER_VERSION="rmcp-3.11"

mkdir -p "$PEERS"

log() { echo "peers/install.sh: $*" >&2; }

install_everything() {
    local dir="$PEERS/everything"
    local lock_sum
    lock_sum="$(sha256sum "$ROOT/peers/everything/package-lock.json" | cut -c1-12)"
    local marker="$dir/.installed-$EVERYTHING_VERSION-$lock_sum"
    [[ -f "$marker" ]] && return 0
    if ! grep -q "\"@modelcontextprotocol/server-everything\": \"$EVERYTHING_VERSION\"" \
        "$ROOT/peers/everything/package.json"; then
        log "peers/everything/package.json does not pin server-everything $EVERYTHING_VERSION"
        return 1
    fi
    log "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION (npm ci, committed lockfile)"
    mkdir -p "$dir"
    rm -f "$dir"/.installed-*
    cp "$ROOT/peers/everything/package.json" "$ROOT/peers/everything/package-lock.json" "$dir/"
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
    test -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    touch "$marker"
}

install_python() {
    local venv="$PEERS/python-venv"
    local pins_sum
    pins_sum="$(sha256sum "$ROOT/peers/python/constraints.txt" | cut -c1-12)"
    local marker="$venv/.installed-mcp-$PYTHON_MCP_VERSION-$pins_sum"
    [[ -f "$marker" ]] && return 0
    log "installing mcp==$PYTHON_MCP_VERSION into $venv"
    local py="${PYTHON:-python3}"
    "$py" -m venv "$venv"
    rm -f "$venv"/.installed-*
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$ROOT/peers/python/constraints.txt" "mcp==$PYTHON_MCP_VERSION"
    "$venv/bin/python" -c "import mcp.server.mcpserver"
    touch "$marker"
}

install_rmcp() {
    local target="$PEERS/rmcp"
    local marker="$target/.installed-$RMCP_MARKER_VERSION"
    local bin="$target/debug/rmcp-peer-server"
    # cargo decides itself whether anything changed; the marker only records success.
    log "building peers/rmcp-server"
    cargo build --locked --quiet --manifest-path "$ROOT/peers/rmcp-server/Cargo.toml" \
        --target-dir "$target"
    test -x "$bin"
    touch "$marker"
}

install_rmcp_bench() {
    local target="$PEERS/rmcp-bench"
    local bin="$target/release/rmcp-bench-client"
    log "building peers/rmcp-bench-client (release)"
    cargo build --locked --release --quiet \
        --manifest-path "$ROOT/peers/rmcp-bench-client/Cargo.toml" --target-dir "$target"
    test -x "$bin"
    touch "$target/.installed-$RMCP_MARKER_VERSION"
}

targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(all)
for t in "${targets[@]}"; do
    case "$t" in
        everything) install_everything ;;
        python) install_python ;;
        rmcp) install_rmcp ;;
        rmcp-bench) install_rmcp_bench ;;
        all) install_everything; install_python; install_rmcp ;;
        *) echo "peers/install.sh: unknown peer '$t' (everything|python|rmcp|rmcp-bench|all)" >&2; exit 2 ;;
    esac
done
