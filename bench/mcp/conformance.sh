#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# in client mode against turnstone's MCP client.
#
# usage: bench/mcp/conformance.sh [SCENARIO...]   (default: initialize tools_call sse-retry)
#
# Environment:
#   CONFORMANCE_DIR  npm prefix holding @modelcontextprotocol/conformance and
#                    node@22 (default /tmp/mcp-conformance; installed there
#                    with npm when missing)
#   TURNSTONE_BIN    a built turnstone binary: the suite then drives
#                    `turnstone --mcp-config F mcp list` and
#                    `turnstone --mcp-config F tools run mcp__conf__TOOL JSON`.
#                    Unset: the Go driver internal/mcp/testdata/conformance-client
#                    (the same Manager, without the CLI) is built and used.
#
# Exit status is non-zero when any scenario fails. Results land in
# $CONFORMANCE_DIR/results/.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${CONFORMANCE_DIR:-/tmp/mcp-conformance}
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(initialize tools_call sse-retry)

if [ ! -x "$dir/node_modules/.bin/conformance" ] || [ ! -x "$dir/node_modules/node/bin/node" ]; then
	mkdir -p "$dir"
	# A package.json of its own keeps npm from installing into a parent
	# project, and allowScripts lets node@22 run the preinstall that fetches
	# its binary (npm 11 skips dependency install scripts by default).
	[ -f "$dir/package.json" ] || echo '{"private": true, "allowScripts": {"node": true}}' >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund @modelcontextprotocol/conformance node@22 >/dev/null)
fi
node22="$dir/node_modules/node/bin/node"
"$node22" --version | grep -q '^v22\.' || { echo "node@22 did not install a v22 node: $("$node22" --version)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The client command: the suite appends the server URL.
client="$work/client.sh"
if [ -n "${TURNSTONE_BIN:-}" ]; then
	cat >"$client" <<EOS
#!/usr/bin/env bash
set -euo pipefail
url="\${@: -1}"
cfg=\$(mktemp)
trap 'rm -f "\$cfg"' EXIT
printf '{"mcpServers": {"conf": {"type": "http", "url": "%s"}}}\n' "\$url" >"\$cfg"
case "\${MCP_CONFORMANCE_SCENARIO:-}" in
tools_call) exec "$TURNSTONE_BIN" --mcp-config "\$cfg" tools run mcp__conf__add_numbers '{"a": 5, "b": 3}' ;;
sse-retry)  exec "$TURNSTONE_BIN" --mcp-config "\$cfg" tools run mcp__conf__test_reconnection '{}' ;;
*)          exec "$TURNSTONE_BIN" --mcp-config "\$cfg" mcp list ;;
esac
EOS
else
	(cd "$root" && go build -o "$work/conformance-client" ./internal/mcp/testdata/conformance-client)
	printf '#!/usr/bin/env bash\nexec %q "$@"\n' "$work/conformance-client" >"$client"
fi
chmod +x "$client"

status=0
cd "$dir"
for s in "${scenarios[@]}"; do
	echo "== scenario $s"
	if ! PATH="$(dirname "$node22"):$PATH" "$node22" node_modules/.bin/conformance client --command "$client" --scenario "$s"; then
		status=1
	fi
done
exit $status
