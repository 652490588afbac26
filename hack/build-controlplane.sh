#!/usr/bin/env bash
# Builds the Kubernetes control plane that the fargatekit emulator runs --
# etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok
# and kwokctl (whose binary runtime the emulator uses to run them) -- from
# source through the Go module proxy, into a versioned cache
# directory, and prints that bin directory as the last line on stdout:
#
#   bin=$(hack/build-controlplane.sh)      # progress on stderr
#   bin=$(hack/build-controlplane.sh -q)   # errors only
#
# Idempotent: when every binary is already cached and runs, it prints the
# directory and exits at once. The versions live in hack/controlplane/go.mod
# (etcd, Kubernetes) and hack/controlplane/kwok/go.mod (kwok); see
# hack/controlplane/README.md.
#
# The cache directory is
#   ${FARGATEKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fargatekit}/controlplane/<kubernetes version>-<hash>/bin
# where <hash> covers both modules' go.mod/go.sum, cmd/etcd/main.go and the
# build settings below (Go version, target, flags), so changing any of them
# builds into a new directory and never reuses a stale binary.
set -euo pipefail

quiet=0
while getopts ":qh" opt; do
	case "$opt" in
	q) quiet=1 ;;
	h)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
		exit 0
		;;
	*)
		echo "usage: $0 [-q]" >&2
		exit 2
		;;
	esac
done

prog=build-controlplane.sh
say() { [ "$quiet" = 1 ] || echo "$prog: $*" >&2; }
die() {
	echo "$prog: error: $*" >&2
	exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
mod="$root/hack/controlplane"
kwokmod="$mod/kwok"
command -v go >/dev/null 2>&1 || die "go is not on PATH (Go 1.26 or newer is needed)"
for f in "$mod/go.mod" "$mod/go.sum" "$kwokmod/go.mod" "$kwokmod/go.sum" "$mod/cmd/etcd/main.go"; do
	[ -f "$f" ] || die "missing $f"
done

# The module's own go.mod and go.sum are the only source of dependencies:
# no go.work, no vendor directory, no silent go.mod updates.
export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"

# modversion FILE MODULE prints MODULE's required version in go.mod FILE.
modversion() {
	awk -v m="$2" '$1 !~ /^\/\// { for (i = 1; i < NF; i++) if ($i == m) { print $(i + 1); exit } }' "$1"
}
kube_version=$(modversion "$mod/go.mod" k8s.io/kubernetes)
etcd_version=$(modversion "$mod/go.mod" go.etcd.io/etcd/server/v3)
kwok_version=$(modversion "$kwokmod/go.mod" sigs.k8s.io/kwok)
[ -n "$kube_version" ] || die "no k8s.io/kubernetes requirement in $mod/go.mod"
[ -n "$etcd_version" ] || die "no go.etcd.io/etcd/server/v3 requirement in $mod/go.mod"
[ -n "$kwok_version" ] || die "no sigs.k8s.io/kwok requirement in $kwokmod/go.mod"

# Build settings. Everything here goes into the cache hash; bump schema when
# the way binaries are built changes in a way the rest does not show.
schema=1
goenv=$(cd "$mod" && go env GOVERSION GOOS GOARCH) || die "go env failed in $mod"
{ read -r goversion && read -r goos && read -r goarch; } <<<"$goenv"
buildflags=(-trimpath)
base_ldflags="-s -w"
kube_minor=${kube_version#v*.}
kube_minor=${kube_minor%%.*}
kube_major=${kube_version#v}
kube_major=${kube_major%%.*}
# What Kubernetes' own hack/lib/version.sh stamps, so that --version, the
# apiserver's /version and kubectl version report the real release. The
# commit is not known from the module proxy, so it is left empty.
kube_ldflags="$base_ldflags"
for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
	kube_ldflags+=" -X $p.gitVersion=$kube_version -X $p.gitMajor=$kube_major -X $p.gitMinor=$kube_minor"
	kube_ldflags+=" -X $p.gitTreeState=clean -X $p.gitCommit= -X $p.buildDate=@BUILDDATE@"
done
settings="schema=$schema go=$goversion target=$goos/$goarch cgo=0 flags=${buildflags[*]}"
settings+=" ldflags=[$base_ldflags] kube-ldflags=[$kube_ldflags]"
settings+=" kubernetes=$kube_version etcd=$etcd_version kwok=$kwok_version"

hash=$({
	cat "$mod/go.mod" "$mod/go.sum" "$kwokmod/go.mod" "$kwokmod/go.sum" "$mod/cmd/etcd/main.go"
	printf '%s\n' "$settings"
} | sha256sum | cut -c1-12)
cache="${FARGATEKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fargatekit}"
dir="$cache/controlplane/$kube_version-$hash"
bin="$dir/bin"

# The binaries, in build order: name, module directory, package, version
# shown in the progress line, and the argument that prints the version.
names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl)
declare -A moddir=(
	[etcd]=$mod [kube-apiserver]=$mod [kube-controller-manager]=$mod
	[kube-scheduler]=$mod [kubectl]=$mod [kwok]=$kwokmod [kwokctl]=$kwokmod
)
declare -A pkg=(
	[etcd]=./cmd/etcd
	[kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
	[kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
	[kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
	[kubectl]=k8s.io/kubernetes/cmd/kubectl
	[kwok]=sigs.k8s.io/kwok/cmd/kwok
	[kwokctl]=sigs.k8s.io/kwok/cmd/kwokctl
)
declare -A version=(
	[etcd]=$etcd_version [kube-apiserver]=$kube_version [kube-controller-manager]=$kube_version
	[kube-scheduler]=$kube_version [kubectl]=$kube_version [kwok]=$kwok_version [kwokctl]=$kwok_version
)
# kubectl has no --version flag; the rest do.
versioncmd() {
	case "$1" in
	kubectl) echo "version --client" ;;
	*) echo "--version" ;;
	esac
}
runs() { # runs PATH NAME: the binary exists and prints its version
	[ -x "$1" ] || return 1
	# shellcheck disable=SC2046
	"$1" $(versioncmd "$2") >/dev/null 2>&1 </dev/null
}

# Fast path: everything cached. The checks run in parallel to stay well under
# a second.
allcached() {
	local n pids=() ok=0
	for n in "${names[@]}"; do
		runs "$bin/$n" "$n" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || ok=1
	done
	return $ok
}
if allcached; then
	say "control plane $kube_version is cached"
	echo "$bin"
	exit 0
fi

# Slow path. One build at a time per cache directory.
mkdir -p "$bin" || die "cannot create $bin"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$dir/.lock"
	if ! flock -n 9; then
		say "another build of $dir is running; waiting for it"
		flock 9
	fi
fi
# Leftovers of a build that was killed outright (SIGKILL, power loss).
rm -rf "$dir"/.tmp.*
tmp=$(mktemp -d "$dir/.tmp.XXXXXX")
child=
stop() { # stop STATUS: end the running go build, then exit (the EXIT trap cleans up)
	if [ -n "$child" ]; then
		kill "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	say "interrupted; nothing half-built was installed"
	exit "$1"
}
trap 'rm -rf "$tmp"' EXIT
trap 'stop 130' INT
trap 'stop 143' TERM

elapsed() { # elapsed SECONDS -> 5m48s
	if [ "$1" -ge 60 ]; then echo "$(($1 / 60))m$(($1 % 60))s"; else echo "$1s"; fi
}

say "building the control plane into $bin"
builddate=
total_start=$SECONDS
i=0
for n in "${names[@]}"; do
	i=$((i + 1))
	step="[$i/${#names[@]}]"
	if runs "$bin/$n" "$n"; then
		say "$step $n ${version[$n]} is cached"
		continue
	fi
	ldflags=$base_ldflags
	case "$n" in
	kube-* | kubectl)
		if [ -z "$builddate" ]; then
			# The release's tag time, so that rebuilds are reproducible.
			builddate=$(cd "$mod" && go list -m -f '{{if .Time}}{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}{{end}}' k8s.io/kubernetes 2>/dev/null) || true
			builddate=${builddate:-1970-01-01T00:00:00Z}
		fi
		ldflags=${kube_ldflags//@BUILDDATE@/$builddate}
		;;
	esac
	case "$n" in
	etcd | kwok) hint="" ;;
	*) hint=" (a few minutes the first time)" ;;
	esac
	say "$step building $n ${version[$n]}$hint…"
	start=$SECONDS
	log="$tmp/$n.log"
	status=0
	gobuild() {
		cd "${moddir[$n]}" && CGO_ENABLED=0 exec go build "${buildflags[@]}" -ldflags "$ldflags" -o "$tmp/$n" "${pkg[$n]}"
	}
	# In the background so that a signal to this script is handled at once
	# (bash runs traps only between commands, but wait is interruptible).
	if [ "$quiet" = 1 ]; then
		(gobuild) 2>"$log" &
	else
		(gobuild) &
	fi
	child=$!
	wait "$child" || status=$?
	child=
	if [ "$status" != 0 ]; then
		[ "$quiet" = 1 ] && cat "$log" >&2
		die "building $n failed after $(elapsed $((SECONDS - start))) (go build ${pkg[$n]} in ${moddir[$n]}); nothing was installed for it"
	fi
	if ! runs "$tmp/$n" "$n"; then
		die "the freshly built $n does not run: $tmp/$n $(versioncmd "$n")"
	fi
	mv -f "$tmp/$n" "$bin/$n"
	say "$step built $n in $(elapsed $((SECONDS - start)))"
done
say "control plane $kube_version ready in $(elapsed $((SECONDS - total_start)))"
echo "$bin"
