#!/bin/sh
# Publishes Clients/RoostKit as a repository of its own (a Swift package needs
# its Package.swift at the root of its repository), with a version tag.
#
#   scripts/publish-roostkit.sh [--repo DIR] [--branch NAME] [--push REMOTE]
#
# 1. Reads the version from Sources/RoostKit/RoostKitVersion.swift and checks
#    that CHANGELOG.md's newest entry is that version.
# 2. `git subtree split --prefix=Clients/RoostKit` of the committed HEAD into
#    the local branch NAME (default roostkit-release): the package's history
#    alone, Package.swift at its root. Splitting again appends to it.
# 3. Tags the split commit roostkit-<version> locally (the main repository's
#    own tags belong to roostd); refuses if that tag names another commit.
# 4. With --push, pushes the branch as REMOTE's main and the tag as <version>
#    (a plain semantic version, what SwiftPM's `from:` resolves).
#
# Committed state only: uncommitted changes under Clients/RoostKit stop it.
set -eu

repo=.
branch=roostkit-release
remote=
while [ $# -gt 0 ]; do
    case "$1" in
        --repo) repo=$2; shift 2 ;;
        --branch) branch=$2; shift 2 ;;
        --push) remote=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done

cd "$repo"
cd "$(git rev-parse --show-toplevel)"
prefix=Clients/RoostKit
[ -f "$prefix/Package.swift" ] || { echo "no $prefix/Package.swift here" >&2; exit 1; }

version=$(sed -n 's/.*static let current = "\([0-9][0-9.]*[0-9A-Za-z.-]*\)".*/\1/p' "$prefix/Sources/RoostKit/RoostKitVersion.swift")
[ -n "$version" ] || { echo "no version in RoostKitVersion.swift" >&2; exit 1; }
newest=$(sed -n 's/^## \[\([^]]*\)\].*/\1/p' "$prefix/CHANGELOG.md" | head -n 1)
[ "$newest" = "$version" ] || { echo "CHANGELOG.md's newest entry is $newest, the code says $version" >&2; exit 1; }

if [ -n "$(git status --porcelain -- "$prefix")" ]; then
    echo "uncommitted changes under $prefix: commit them first" >&2
    exit 1
fi

split=$(git subtree split -q --prefix="$prefix" HEAD)
git update-ref "refs/heads/$branch" "$split"
tag="roostkit-$version"
if existing=$(git rev-parse -q --verify "refs/tags/$tag^{commit}"); then
    [ "$existing" = "$split" ] || { echo "$tag already names $existing, not $split: bump the version" >&2; exit 1; }
else
    git tag "$tag" "$split"
fi
echo "RoostKit $version: branch $branch and tag $tag at $split"

if [ -n "$remote" ]; then
    git push --quiet "$remote" "$split:refs/heads/main" "refs/tags/$tag:refs/tags/$version"
    echo "pushed to $remote: main and tag $version"
fi
