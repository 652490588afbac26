#!/usr/bin/env bash
# Builds a stand-in for the image's base, gcr.io/distroless/static-debian12:nonroot,
# and pushes it to REGISTRY/base for linux/amd64 and linux/arm64. The release
# builds on the real base; the tests use this one because this machine reaches
# no container registry. Like distroless/static it holds only /etc/passwd and
# /etc/group (root, nobody and nonroot, 65532), the CA certificates of this
# machine, /tmp and /home/nonroot, and it runs as 65532.
#   hack/base-image.sh 127.0.0.1:5000     prints 127.0.0.1:5000/base
set -euo pipefail
registry=${1:?usage: hack/base-image.sh REGISTRY}
crane=$("$(dirname "$0")/tools.sh" crane)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot"
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
GROUP
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
chmod 1777 "$root/tmp"
tar -C "$root" -cf "$work/base.tar" --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 \
	--exclude=./home/nonroot .
tar -C "$root" -rf "$work/base.tar" --numeric-owner --owner=65532 --group=65532 --mtime=@0 ./home/nonroot
# crane logs every blob it pushes: shown only when it fails.
crane() { "$crane" "$@" >/dev/null 2>"$work/log" || { cat "$work/log" >&2; return 1; }; }
refs=()
for platform in linux/amd64 linux/arm64; do
	ref="$registry/base:${platform#linux/}"
	crane append --oci-empty-base -f "$work/base.tar" -t "$ref"
	crane mutate "$ref" --set-platform "$platform" --user 65532 -t "$ref"
	refs+=(-m "$ref")
done
crane index append "${refs[@]}" -t "$registry/base"
echo "$registry/base"
