#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that the repository cites only documents it holds: every citation
# `docs/design.md "Section"` names a "## Section" heading of docs/design.md, no citation
# points at a numbered section of a document the repository does not hold ("DESIGN §N"),
# and every relative link of the Markdown files leads to a file that exists.
# Usage: tools/check-citations.sh   (exit 1 with one line per dangling citation)
set -euo pipefail
cd "$(dirname "$0")/.."

failures=0
fail() {
	echo "check-citations: $*" >&2
	failures=$((failures + 1))
}

files=$(git ls-files '*.c' '*.h' '*.cpp' '*.md' '*.sh' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt' '.ci/*' |
	grep -vx tools/check-citations.sh)
headings=$(sed -n 's/^## //p' docs/design.md)

cited=0
while IFS= read -r hit; do
	[ -n "$hit" ] || continue
	location=${hit%%:docs/design.md*}
	section=${hit#*docs/design.md \"}
	section=${section%%\"*}
	cited=$((cited + 1))
	grep -qxF -- "$section" <<<"$headings" || fail "$location cites docs/design.md \"$section\": no such section"
done < <(grep -noE 'docs/design\.md "[^"]+"' $files || true)

while IFS= read -r hit; do
	[ -n "$hit" ] || continue
	fail "${hit%%:*}: cites a section number of a document the repository does not hold: ${hit#*:}"
done < <(grep -nE '\bDESIGN §[0-9]' $files | cut -d: -f1,3- || true)

links=0
for doc in $(git ls-files '*.md'); do
	dir=$(dirname "$doc")
	while IFS= read -r target; do
		target=${target%%#*}
		[ -n "$target" ] || continue
		links=$((links + 1))
		[ -e "$dir/$target" ] || fail "$doc links to $target, which does not exist"
	done < <(grep -oE '\]\([^)[:space:]]+\)' "$doc" | sed 's/^](//; s/)$//' | grep -vE '^[a-z]+:' || true)
done

if [ "$failures" -ne 0 ]; then
	echo "check-citations: $failures dangling citation(s) or link(s)" >&2
	exit 1
fi
echo "check-citations: $cited citations of docs/design.md and $links relative links, all resolve"
