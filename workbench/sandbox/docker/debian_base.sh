#!/usr/bin/env bash
# Give the Docker engine the base image task Dockerfiles start FROM, with no registry: debian:bookworm-slim
# built with debootstrap (minbase, the slim image's variant) from the mirror apt uses, and imported.
# The host's extra CA certificates (/usr/local/share/ca-certificates) and WORKBENCH_CA_BUNDLE, if set, go
# into the image: HTTPS in builds (pip) behind a TLS-intercepting proxy needs them. The image is cached
# as a `docker save` tarball keyed by this recipe and the certificates, so a new engine loads it in
# seconds instead of building it again (~90 s). Idempotent; prints what it did and how long it took.
set -euo pipefail
image=debian:bookworm-slim
docker image inspect "$image" >/dev/null 2>&1 && exit 0
t0=$SECONDS
certs=$(mktemp -d /tmp/workbench-certs.XXXXXX)
trap 'rm -rf "$certs"' EXIT
if [ -d /usr/local/share/ca-certificates ]; then cp -r /usr/local/share/ca-certificates/. "$certs/"; fi
if [ -n "${WORKBENCH_CA_BUNDLE:-}" ]; then
  [ -f "$WORKBENCH_CA_BUNDLE" ] || { echo "WORKBENCH_CA_BUNDLE=$WORKBENCH_CA_BUNDLE: no such file" >&2; exit 1; }
  cp "$WORKBENCH_CA_BUNDLE" "$certs/workbench-extra.crt"
fi
key=$( (cat "$0"; find "$certs" -type f | sort | xargs -r cat) | sha256sum | cut -c1-16)
cache=${WORKBENCH_IMAGE_CACHE:-/var/cache/workbench/images}/debian-bookworm-slim-$key.tar
if [ -f "$cache" ]; then
  docker load -q -i "$cache" >/dev/null
  echo "$image loaded from $cache in $((SECONDS - t0)) s"
  exit 0
fi
root=$(mktemp -d /tmp/bookworm-rootfs.XXXXXX)
trap 'rm -rf "$certs" "$root"' EXIT
# the mirror apt itself uses (uncommented lines only)
mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null || true) \
  | grep -E '^[[:space:]]*(URIs:|deb )' | grep -oE 'https?://[^ ]+/debian/?' | head -1 || true)
debootstrap --variant=minbase bookworm "$root" "${mirror:-http://deb.debian.org/debian}" >/tmp/debootstrap.log 2>&1 \
  || { tail -20 /tmp/debootstrap.log >&2; exit 1; }
cp -r "$certs/." "$root/usr/local/share/ca-certificates/"
tar -C "$root" -c . | docker import - "$image" >/dev/null
mkdir -p "$(dirname "$cache")"
docker save -o "$cache.part" "$image" && mv "$cache.part" "$cache"
echo "$image built from debootstrap in $((SECONDS - t0)) s (cached in $cache)"
