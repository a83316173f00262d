#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks src/ against its layers: each folder of src/ is a layer, numbered in the table under
# "### Layer table" in docs/design.md (| N | `folder` | what |). Every folder is in the table and
# every table row is a folder; a file includes internal headers by layer ("view/view.h") of its
# own layer and those below only; below the view layer no header includes a public one but base.h
# and types.h; and no chain of includes between modules (folder/x.c and folder/x.h are module
# folder/x) comes back to where it started.
# Usage: tools/check-layers.sh   (exit 1 with one line per violation)
set -euo pipefail
cd "$(dirname "$0")/.."

doc=docs/design.md
table=$(awk '/^### Layer table/ { on = 1; next } /^##/ { on = 0 } on && /^\| *[0-9]+ *\|/' "$doc")
[ -n "$table" ] || { echo "check-layers: no rows under '### Layer table' in $doc" >&2; exit 1; }

declare -A layer_of
failures=0
fail() {
	echo "check-layers: $*" >&2
	failures=$((failures + 1))
}

while IFS='|' read -r _ number folder _; do
	number=${number// /}
	folder=$(grep -o '`[^`]*`' <<<"$folder" | tr -d '`')
	[ -d "src/$folder" ] || fail "$doc lists layer $number, \`$folder\`, which is no folder of src/"
	[ -z "${layer_of[$folder]:-}" ] || fail "$doc lists \`$folder\` twice"
	layer_of[$folder]=$number
done <<<"$table"

for dir in src/*/; do
	folder=$(basename "$dir")
	[ -n "${layer_of[$folder]:-}" ] || fail "src/$folder is in no layer of $doc"
done
for file in src/*.c src/*.h; do
	[ -e "$file" ] && fail "$file lies outside the layers' folders"
done

# Below the view layer, a header needs the public API only for its types (a source file
# includes the public header that declares what it defines, so that it is exported).
public_types_below=${layer_of[view]:-0}
files=$(find src -mindepth 2 -name '*.[ch]' | sort)
for file in $files; do
	folder=$(basename "$(dirname "$file")")
	[ -n "${layer_of[$folder]:-}" ] || continue
	case $file in *.h) ;; *) continue ;; esac
	[ "${layer_of[$folder]}" -lt "$public_types_below" ] || continue
	for public in $(sed -n 's/^#include <broadphase\/\([^>]*\)>.*/\1/p' "$file"); do
		case $public in
		base.h | types.h) ;;
		*) fail "$file (layer ${layer_of[$folder]}) includes <broadphase/$public>; below layer $public_types_below only base.h and types.h" ;;
		esac
	done
done

edges=()
modules=0
for file in $files; do
	folder=$(basename "$(dirname "$file")")
	[ -n "${layer_of[$folder]:-}" ] || continue
	modules=$((modules + 1))
	module=$folder/$(basename "${file%.*}")
	for header in $(sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$file"); do
		if [[ $header != */* ]]; then
			fail "$file includes \"$header.h\": internal headers are named by layer (\"folder/name.h\")"
			continue
		fi
		[ -f "src/$header.h" ] || { fail "$file includes \"$header.h\", which is not in src/"; continue; }
		to=${header%%/*}
		if [ "${layer_of[$to]}" -gt "${layer_of[$folder]}" ]; then
			fail "$file (layer ${layer_of[$folder]}, $folder) includes $header.h (layer ${layer_of[$to]}, $to)"
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
echo "check-layers: ${#layer_of[@]} layers, $modules files, ${#edges[@]} includes between modules, layers and order hold"
