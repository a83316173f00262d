#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks src/ against the layer table of docs/design.md ("Layer table"): every file of src/ is in
# exactly one layer, includes headers of its own layer and those below only (and, below the
# frames layer, no header includes a public one but base.h and types.h), and no chain of includes
# between modules (x.c and x.h are module x) comes back to where it started.
# Usage: tools/check-layers.sh   (exit 1 with one line per violation)
set -euo pipefail
cd "$(dirname "$0")/.."

doc=docs/design.md
# The table's rows: | N | name | `module` `module*` ... |, under the "Layer table" heading.
table=$(awk '/^### Layer table/ { on = 1; next } /^##/ { on = 0 } on && /^\| *[0-9]+ *\|/' "$doc")
[ -n "$table" ] || { echo "check-layers: no rows under '### Layer table' in $doc" >&2; exit 1; }

declare -A layer_of
failures=0
fail() {
	echo "check-layers: $*" >&2
	failures=$((failures + 1))
}

for file in src/*.c src/*.h; do
	module=$(basename "${file%.*}")
	found=
	while IFS='|' read -r _ number _ patterns _; do
		number=${number// /}
		for pattern in $(grep -o '`[^`]*`' <<<"$patterns" | tr -d '`'); do
			# shellcheck disable=SC2053 # the table's entries are glob patterns
			if [[ $module == $pattern ]]; then
				[ -z "$found" ] || [ "$found" = "$number" ] || fail "$file is in layers $found and $number"
				found=$number
			fi
		done
	done <<<"$table"
	if [ -z "$found" ]; then
		fail "$file is in no layer of $doc"
	else
		layer_of[$module]=$found
	fi
done

# Below the frames layer, a header needs the public API only for its types (a source file
# includes the public header that declares what it defines, so that it is exported).
public_types_below=5
for file in src/*.h; do
	module=$(basename "${file%.*}")
	[ -n "${layer_of[$module]:-}" ] && [ "${layer_of[$module]}" -lt "$public_types_below" ] || continue
	for public in $(sed -n 's/^#include <broadphase\/\([^>]*\)>.*/\1/p' "$file"); do
		case $public in
		base.h | types.h) ;;
		*) fail "$file (layer ${layer_of[$module]}) includes <broadphase/$public>; below layer $public_types_below only base.h and types.h" ;;
		esac
	done
done

edges=()
for file in src/*.c src/*.h; do
	module=$(basename "${file%.*}")
	[ -n "${layer_of[$module]:-}" ] || continue
	for header in $(sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$file"); do
		[ -f "src/$header.h" ] || continue
		[ -n "${layer_of[$header]:-}" ] || continue
		if [ "${layer_of[$header]}" -gt "${layer_of[$module]}" ]; then
			fail "$file (layer ${layer_of[$module]}) includes $header.h (layer ${layer_of[$header]})"
		fi
		[ "$header" = "$module" ] || edges+=("$module $header")
	done
done

# tsort names a loop on stderr and exits non-zero when the module graph has a cycle.
if [ ${#edges[@]} -gt 0 ] && ! printf '%s\n' "${edges[@]}" | tsort >/dev/null 2>/tmp/check-layers.$$; then
	fail "include cycle among modules: $(tr '\n' ' ' </tmp/check-layers.$$)"
fi
rm -f /tmp/check-layers.$$

if [ "$failures" -ne 0 ]; then
	echo "check-layers: $failures violation(s)" >&2
	exit 1
fi
echo "check-layers: ${#layer_of[@]} modules, ${#edges[@]} includes between them, layers and order hold"
