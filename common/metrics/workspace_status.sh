#!/bin/sh
# Bazel's --workspace_status_command for release builds: the commit the
# tree is at, with "-dirty" when it has uncommitted changes.
commit=$(git rev-parse HEAD 2>/dev/null) || commit=unknown
if [ "$commit" != unknown ] && ! git diff --quiet HEAD 2>/dev/null; then
  commit="$commit-dirty"
fi
echo "STABLE_GIT_COMMIT $commit"
