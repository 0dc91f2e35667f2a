#!/usr/bin/env bash
# Builds the pstrain image without a registry or a Dockerfile build: a
# Debian 12 root filesystem made by mmdebstrap from the Debian mirror in the
# host's apt sources, with the runtime packages of deploy/docker/Dockerfile,
# the user, folders and job specs of its runtime stage and binaries built on
# this host, imported into podman. See --help.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly repo
readonly dockerfile="$repo/deploy/docker/Dockerfile"
readonly jobs_dir="$repo/deploy/k8s/shared/jobs"
readonly suite=bookworm

usage() {
  cat <<EOF
Usage: deploy/docker/build_image.sh [BINARIES] [--tag NAME:TAG] [--mirror URL] [--verbose]

Builds the image of deploy/docker/Dockerfile without a registry, from
Debian's packages, and imports it into podman (default tag pstrain:dev):

  1. mmdebstrap makes a Debian 12 ($suite) root filesystem: the minbase
     variant plus the runtime packages listed in the Dockerfile between
     "# runtime-packages-begin" and "# runtime-packages-end" (the one list
     both use), without documentation, as debian:12-slim.
  2. It adds what the Dockerfile's runtime stage adds: the user pstrain
     (uid and gid of its USER), /var/lib/pstrain owned by it, the example
     job specs of deploy/k8s/shared/jobs in /etc/pstrain/jobs, and the five
     binaries, stripped, in /usr/local/bin. Every binary must find each
     shared library it loads in the new root filesystem.
  3. podman import turns it into an image with the runtime stage's USER,
     WORKDIR, EXPOSE, VOLUME and CMD.

BINARIES is a folder holding the binaries the Dockerfile copies (pstrain,
pstrain-coordinator, pstrain-ps, pstrain-worker, pstrain-evaluator),
either side by side or under their Bazel paths (client/pstrain, ...).
Default: the repository's opt outputs, bazel-bin after
  bazel build -c opt //client:pstrain //server/coordinator:pstrain-coordinator \\
    //server/ps:pstrain-ps //worker:pstrain-worker //evaluator:pstrain-evaluator
or bazel-out/*-opt/bin when a later build moved bazel-bin elsewhere. They
must have been built on Debian 12, against the libraries the image gets.

Options:
  --tag NAME:TAG  the image's name (default: pstrain:dev)
  --mirror URL    the Debian mirror to use, as "deb URL $suite main" (default:
                  the Debian mirrors the host's apt uses for $suite,
                  $suite-updates and $suite-security, as its package lists
                  say; other archives in its sources are left out)
  -v, --verbose   show mmdebstrap's output as it goes (by default only
                  when it fails)
  -h, --help      this text

Needs root, and podman, runc and mmdebstrap (scripts/setup.sh --image
installs them). Prints one line per step with its duration, then the
image's id and size.
deploy/docker/run_image.sh then runs a cluster from the image.
EOF
}

die() {
  echo "build_image: $*" >&2
  exit 1
}

# Microseconds since the epoch, for step durations.
now_us() { echo "${EPOCHREALTIME/./}"; }

# Prints the seconds since START_US with one decimal.
elapsed() {
  local tenths=$((($(now_us) - $1) / 100000))
  printf '%d.%d s' $((tenths / 10)) $((tenths % 10))
}

# The Dockerfile's runtime packages, one per line: the lines between the
# markers that hold a single word before the closing " \", read as
# tests/k8s_image_test reads them.
runtime_packages() {
  sed -n '/^# runtime-packages-begin$/,/^# runtime-packages-end$/p' "$dockerfile" |
    sed -n 's/^[[:space:]]*\([^[:space:]]\{1,\}\) \\$/\1/p'
}

# The binaries' paths as the Dockerfile copies them out of bazel-bin, one
# per line (client/pstrain, ...).
bazel_paths() {
  grep -o 'bazel-bin/[^[:space:]]*' "$dockerfile" | sed 's|^bazel-bin/||' | awk '!seen[$0]++'
}

# The folder of the opt build's outputs, or nothing.
default_binaries() {
  local bin
  if [[ $(readlink -f "$repo/bazel-bin" 2>/dev/null) == *-opt/bin ]]; then
    echo "$repo/bazel-bin"
    return
  fi
  for bin in "$repo"/bazel-out/*-opt/bin; do
    if [[ -d $bin ]]; then
      echo "$bin"
      return
    fi
  done
}

# The host's Debian mirrors of the suite as sources.list lines, one per
# mirror and suite: what apt on the host reads from every sources file,
# kept where the mirror's Release file says Origin: Debian and the codename
# is the suite or one of its -updates, -security. Other archives are left
# out. Needs the host's package lists (apt-get update).
host_debian_sources() {
  local format
  # shellcheck disable=SC2016 # $(FIELD) is apt's format, not the shell's
  format=$(printf '$(%s)\t' TARGET_OF IDENTIFIER ORIGIN CODENAME REPO_URI RELEASE COMPONENT)
  apt-get indextargets --format "$format" |
    awk -F '\t' -v suite="$suite" '
      $1 == "deb" && $2 == "Packages" && $3 == "Debian" &&
      ($4 == suite || index($4, suite "-") == 1) {
        mirror = $5 " " $6
        if (!(mirror in components)) order[++n] = mirror
        if (index(components[mirror] " ", " " $7 " ") == 0) components[mirror] = components[mirror] " " $7
      }
      END { for (i = 1; i <= n; i++) print "deb " order[i] components[order[i]] }'
}

binaries=""
tag="pstrain:dev"
mirror=""
verbose=false
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    -v | --verbose)
      verbose=true
      shift
      ;;
    --tag | --mirror)
      [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
      if [[ $1 == --tag ]]; then tag=$2; else mirror=$2; fi
      shift 2
      ;;
    --tag=* | --mirror=*)
      [[ -n ${1#*=} ]] || die "${1%%=*} needs a value (see --help)"
      if [[ $1 == --tag=* ]]; then tag=${1#*=}; else mirror=${1#*=}; fi
      shift
      ;;
    -*) die "unknown option $1 (see --help)" ;;
    *)
      [[ -z $binaries ]] || die "one BINARIES folder only, got '$binaries' and '$1' (see --help)"
      binaries=$1
      shift
      ;;
  esac
done

[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap's root mode, podman's root store): sudo $0"
for tool in mmdebstrap podman tar chroot; do
  command -v "$tool" >/dev/null ||
    die "$tool not found: install podman, runc and mmdebstrap with scripts/setup.sh --image"
done
readonly merged_usr_hooks=/usr/share/mmdebstrap/hooks/merged-usr
[[ -d $merged_usr_hooks ]] || die "$merged_usr_hooks not found: mmdebstrap too old (Debian 12's has it)"
[[ -f $dockerfile ]] || die "$dockerfile not found"
[[ -d $jobs_dir ]] || die "$jobs_dir not found"

for marker in begin end; do
  grep -q "^# runtime-packages-$marker\$" "$dockerfile" ||
    die "$dockerfile has no '# runtime-packages-$marker' line"
done
mapfile -t packages < <(runtime_packages)
[[ ${#packages[@]} -gt 0 ]] || die "no packages between the runtime-packages markers of $dockerfile"
for package in "${packages[@]}"; do
  [[ $package =~ ^[a-z0-9][a-z0-9+.-]+$ ]] ||
    die "'$package' between the runtime-packages markers of $dockerfile is no Debian package name"
done

# The image's settings, as the runtime stage of the Dockerfile gives them.
# podman import takes one port per EXPOSE.
changes=()
declare -A given=()
while IFS= read -r line; do
  instruction=${line%% *}
  case $instruction in
    EXPOSE)
      for port in ${line#EXPOSE }; do changes+=(--change "EXPOSE $port"); done
      ;;
    USER | WORKDIR | VOLUME | CMD) changes+=(--change "$line") ;;
    *) continue ;;
  esac
  given[$instruction]=${line#* }
done < <(sed -n '/^FROM .* AS runtime$/,$p' "$dockerfile")
for instruction in USER WORKDIR CMD; do
  [[ -n ${given[$instruction]:-} ]] || die "the runtime stage of $dockerfile has no $instruction"
done
[[ ${given[USER]} =~ ^[0-9]+:[0-9]+$ ]] ||
  die "the runtime stage of $dockerfile sets no numeric USER uid:gid (found '${given[USER]}')"
readonly uid=${given[USER]%%:*} gid=${given[USER]##*:}
# debian:12-slim sets PATH in its config; an imported image has none.
changes+=(--change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")

if [[ -z $binaries ]]; then
  binaries=$(default_binaries)
  [[ -n $binaries ]] ||
    die "no opt build in $repo (bazel-bin or bazel-out/*-opt/bin): build the binaries with bazel build -c opt (see --help) or pass their folder"
fi
[[ -d $binaries ]] || die "$binaries is not a folder"
binary_files=()
while IFS= read -r path; do
  name=${path##*/}
  if [[ -f $binaries/$name ]]; then
    binary_files+=("$binaries/$name")
  elif [[ -f $binaries/$path ]]; then
    binary_files+=("$binaries/$path")
  else
    die "$binaries has no $name (nor $path): build it with bazel build -c opt (see --help)"
  fi
  [[ -x ${binary_files[-1]} ]] || die "${binary_files[-1]} is not executable"
done < <(bazel_paths)
[[ ${#binary_files[@]} -gt 0 ]] || die "$dockerfile copies no bazel-bin/... binaries"

if [[ -n $mirror ]]; then
  [[ $mirror == *://* ]] || die "--mirror wants a URL such as http://deb.debian.org/debian, got '$mirror'"
  sources=("deb $mirror $suite main")
else
  mapfile -t sources < <(host_debian_sources)
  [[ ${#sources[@]} -gt 0 ]] ||
    die "apt on this host knows no Debian $suite mirror (Origin: Debian in its lists): run apt-get update, or pass --mirror URL"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pstrain-image.XXXXXX")
# apt downloads as user _apt, who must reach the root filesystem's lists.
chmod 0755 "$work"
cleanup() {
  # An mmdebstrap that did not end by itself may leave /proc, /sys and /dev
  # mounted in the root filesystem: unmount them, deepest first, and keep
  # rm on this file system in any case.
  local mount_point
  while read -r mount_point; do
    umount "$mount_point" 2>/dev/null || umount --lazy "$mount_point" || true
  done < <(awk -v work="$work/" 'index($2, work) == 1 { print $2 }' /proc/self/mounts | sort -r)
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
readonly rootfs="$work/rootfs" log="$work/mmdebstrap.log"

echo "build_image: ${#packages[@]} runtime packages from deploy/docker/Dockerfile"
printf 'build_image: from %s\n' "${sources[@]}"
echo "build_image: binaries from $binaries"

start=$(now_us)
# The root filesystem is made as debian:12-slim, which the Dockerfile's
# runtime stage starts from: /usr merged the way debootstrap merges it (the
# usrmerge package would bring perl), no documentation but copyright files,
# no manuals or translations. The host's name and resolver stay out: podman
# provides both. mmdebstrap's output goes to a log, shown when it fails, and
# as it goes with --verbose. On Ctrl-C mmdebstrap unmounts what it mounted
# before it ends; tee ignores the signal so that mmdebstrap can still write.
mmdebstrap_output=/dev/null
if $verbose; then mmdebstrap_output=/dev/stderr; fi
# shellcheck disable=SC2016 # the hook's $1 is the root, given by mmdebstrap
if ! mmdebstrap --mode=root --format=directory --variant=minbase \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --hook-dir="$merged_usr_hooks" \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='rm -f "$1/etc/hostname" "$1/etc/resolv.conf"' \
  "$suite" "$rootfs" "${sources[@]}" 2>&1 | (trap '' INT TERM; tee "$log") >"$mmdebstrap_output"; then
  $verbose || tail -n 40 "$log" >&2
  die "mmdebstrap failed (its output above): can the mirrors be reached, and do they have every package of the list?"
fi
echo "build_image: mmdebstrap $suite, minbase + ${#packages[@]} packages: $(elapsed "$start") ($(du -sh "$rootfs" | cut -f1))"

start=$(now_us)
# useradd warns that a system uid above 999 is unusual; the manifests want
# this one, so its output is shown only when it fails.
if ! output=$(chroot "$rootfs" groupadd --system --gid "$gid" pstrain 2>&1 &&
  chroot "$rootfs" useradd --system --uid "$uid" --gid "$gid" --home-dir /var/lib/pstrain \
    --no-create-home --shell /usr/sbin/nologin pstrain 2>&1); then
  die "adding the user pstrain ($uid:$gid) failed: $output"
fi
mkdir -p "$rootfs/var/lib/pstrain" "$rootfs/etc/pstrain/jobs"
chown "$uid:$gid" "$rootfs/var/lib/pstrain"
install -m 0644 "$jobs_dir"/* "$rootfs/etc/pstrain/jobs/"
install -m 0755 "${binary_files[@]}" "$rootfs/usr/local/bin/"
if command -v strip >/dev/null; then
  strip --strip-unneeded "$rootfs"/usr/local/bin/*
else
  echo "build_image: no strip (binutils) on this host: the binaries keep their symbols"
fi
for file in "${binary_files[@]}"; do
  name=${file##*/}
  if ! libraries=$(chroot "$rootfs" ldd "/usr/local/bin/$name" 2>&1); then
    die "ldd /usr/local/bin/$name in the image failed: $libraries"
  fi
  if missing=$(grep 'not found' <<<"$libraries"); then
    die "$name does not load in the image: a library's package is missing from the Dockerfile's list, or the binary was built elsewhere than on Debian 12:
$missing"
  fi
done
echo "build_image: user $uid:$gid, /var/lib/pstrain, /etc/pstrain/jobs, ${#binary_files[@]} binaries: $(elapsed "$start")"

start=$(now_us)
old_id=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null) || old_id=""
# /dev stays empty, as in a registry's image: the runtime mounts its own.
if ! id=$(tar --numeric-owner --exclude='./dev/*' -C "$rootfs" -c . |
  podman import --quiet "${changes[@]}" - "$tag" 2>"$work/import.log"); then
  cat "$work/import.log" >&2
  die "podman import failed (its output above)"
fi
id=${id#sha256:}
# The image that had the tag before would stay behind untagged.
if [[ -n $old_id && $old_id != "$id" ]]; then
  podman rmi "$old_id" >/dev/null 2>&1 || true
fi
echo "build_image: podman import as $tag: $(elapsed "$start")"

size=$(podman images --format '{{.Size}}' "$tag" | head -n 1)
echo "build_image: $tag ${id:0:12}, $size; run a cluster from it with deploy/docker/run_image.sh"
