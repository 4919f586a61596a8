# Sourced by scripts/test, scripts/e2e, scripts/e2e-embed and
# scripts/skill-check: the tests run with a HOME of their own, so that
# nothing they start (npm, npx, the MCP Inspector, which keeps its
# settings in ~/.mcp-inspector, the skills installer, go's telemetry)
# writes into the real one. Kept:
#   - Go's settings and caches (GOCACHE, GOMODCACHE, GOPATH and the go env
#     file's values), read before HOME changes: the build cache is shared
#     by design, and without it every run would rebuild and re-download;
#   - npm's cache, moved out of ~/.npm to $SYNAPSE_NPM_CACHE (default
#     ${TMPDIR:-/tmp}/synapse-npm-cache-$UID), so that runs after the
#     first do not fetch Node 22 and the packages again.
# A script that sourced this already (scripts/test runs the others) is
# not given a second HOME. The calling script removes $SYNAPSE_TEST_HOME
# when it owns it (synapse_test_home_cleanup).
if [ -z "${SYNAPSE_TEST_HOME:-}" ]; then
  if command -v go >/dev/null; then
    for v in GOCACHE GOMODCACHE GOPATH GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GOFLAGS GOTOOLCHAIN; do
      export "$v=$(go env "$v")"
    done
  fi
  export npm_config_cache="${SYNAPSE_NPM_CACHE:-${TMPDIR:-/tmp}/synapse-npm-cache-$(id -u)}"
  mkdir -p "$npm_config_cache"
  SYNAPSE_TEST_HOME=$(mktemp -d "${TMPDIR:-/tmp}/synapse-test-home.XXXXXX")
  export SYNAPSE_TEST_HOME
  synapse_test_home_owner=$$
  export HOME="$SYNAPSE_TEST_HOME"
  unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME CODEX_HOME
fi

# synapse_test_home_cleanup removes the test HOME if this script made it.
synapse_test_home_cleanup() {
  if [ "${synapse_test_home_owner:-}" = "$$" ] && [ -n "${SYNAPSE_TEST_HOME:-}" ]; then
    rm -rf "$SYNAPSE_TEST_HOME"
  fi
}
