#!/bin/sh
# Council Gateway installer: downloads the release archive for this OS/arch, verifies it against
# the release's SHA256SUMS, and installs `council-gateway` into ${PREFIX:-$HOME/.local}/bin.
#
#   curl -fsSL https://github.com/council-gateway/council-gateway/releases/latest/download/install.sh | sh
#
# Environment (all optional):
#   PREFIX                     install into $PREFIX/bin (default: $HOME/.local)
#   COUNCIL_GATEWAY_VERSION    release to install, e.g. 0.1.0 or v0.1.0 (default: latest)
#   COUNCIL_GATEWAY_REPO       GitHub owner/name to download from (default below)
#   COUNCIL_GATEWAY_BASE_URL   where the assets are: an http(s) URL, a file:// URL or a local
#                              directory (overrides REPO and VERSION)
#   COUNCIL_GATEWAY_OS         override the detected OS (uname -s), e.g. Linux or Darwin
#   COUNCIL_GATEWAY_ARCH       override the detected CPU (uname -m), e.g. x86_64 or arm64
set -eu

PROGRAM=council-gateway
DEFAULT_REPO=council-gateway/council-gateway

say() { printf '%s\n' "$*"; }
die() {
  printf '%s: %s\n' "$PROGRAM install" "$*" >&2
  exit 1
}

detect_os() {
  case "$1" in
    Linux | linux) echo unknown-linux-gnu ;;
    Darwin | darwin | macos | macOS) echo apple-darwin ;;
    MINGW* | MSYS* | CYGWIN* | Windows* | windows)
      die "on Windows download ${PROGRAM}-x86_64-pc-windows-msvc.zip from the release page instead" ;;
    *) die "unsupported operating system: $1 (prebuilt for Linux and macOS)" ;;
  esac
}

detect_arch() {
  case "$1" in
    x86_64 | amd64 | x64) echo x86_64 ;;
    aarch64 | arm64 | armv8*) echo aarch64 ;;
    *) die "unsupported CPU architecture: $1 (prebuilt for x86_64 and aarch64/arm64)" ;;
  esac
}

# An Intel shell under Rosetta 2 still reports x86_64; the native arm64 binary is better.
rosetta_arch() {
  if [ "$1" = apple-darwin ] && [ "$2" = x86_64 ] &&
    [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
    echo aarch64
  else
    echo "$2"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum found; cannot verify the download"
  fi
}

# fetch NAME DEST: copy one asset from the base URL or directory.
fetch() {
  case "$BASE_URL" in
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then
        curl -fsSL "$BASE_URL/$1" -o "$2" || die "download failed: $BASE_URL/$1"
      elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$BASE_URL/$1" || die "download failed: $BASE_URL/$1"
      else
        die "neither curl nor wget found"
      fi
      ;;
    file://*) cp "${BASE_URL#file://}/$1" "$2" 2>/dev/null || die "not found: $BASE_URL/$1" ;;
    *) cp "$BASE_URL/$1" "$2" 2>/dev/null || die "not found: $BASE_URL/$1" ;;
  esac
}

os_suffix=$(detect_os "${COUNCIL_GATEWAY_OS:-$(uname -s)}")
arch=$(detect_arch "${COUNCIL_GATEWAY_ARCH:-$(uname -m)}")
if [ -z "${COUNCIL_GATEWAY_ARCH:-}" ]; then arch=$(rosetta_arch "$os_suffix" "$arch"); fi
target="$arch-$os_suffix"
asset="$PROGRAM-$target.tar.gz"

repo="${COUNCIL_GATEWAY_REPO:-$DEFAULT_REPO}"
version="${COUNCIL_GATEWAY_VERSION:-latest}"
if [ -n "${COUNCIL_GATEWAY_BASE_URL:-}" ]; then
  BASE_URL="${COUNCIL_GATEWAY_BASE_URL%/}"
elif [ "$version" = latest ]; then
  BASE_URL="https://github.com/$repo/releases/latest/download"
else
  BASE_URL="https://github.com/$repo/releases/download/v${version#v}"
fi
bin_dir="${PREFIX:-$HOME/.local}/bin"

work=$(mktemp -d 2>/dev/null || mktemp -d -t council-gateway)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

say "Installing $PROGRAM for $target from $BASE_URL"
fetch SHA256SUMS "$work/SHA256SUMS"
fetch "$asset" "$work/$asset"

expected=$(awk -v name="$asset" '$2 == name || $2 == "*" name { print $1; exit }' "$work/SHA256SUMS")
[ -n "$expected" ] || die "SHA256SUMS lists no checksum for $asset; refusing to install"
actual=$(sha256_of "$work/$asset")
if [ "$expected" != "$actual" ]; then
  die "checksum mismatch for $asset (expected $expected, got $actual); refusing to install"
fi
say "Checksum OK ($actual)"

mkdir "$work/unpacked"
tar -xzf "$work/$asset" -C "$work/unpacked" || die "cannot unpack $asset"
[ -f "$work/unpacked/$PROGRAM" ] || die "$asset does not contain $PROGRAM"

mkdir -p "$bin_dir" || die "cannot create $bin_dir"
# Copy beside the destination, then rename: replaces a running binary safely on upgrade.
cp "$work/unpacked/$PROGRAM" "$bin_dir/.$PROGRAM.new.$$" || die "cannot write to $bin_dir"
chmod 755 "$bin_dir/.$PROGRAM.new.$$"
mv -f "$bin_dir/.$PROGRAM.new.$$" "$bin_dir/$PROGRAM"
say "Installed $bin_dir/$PROGRAM"
"$bin_dir/$PROGRAM" version 2>/dev/null || say "(could not run '$PROGRAM version' here)"

case ":$PATH:" in
  *":$bin_dir:"*) run="$PROGRAM" ;;
  *)
    run="$bin_dir/$PROGRAM"
    say ""
    say "$bin_dir is not on your PATH. Add it, e.g. in ~/.profile:"
    say "  export PATH=\"$bin_dir:\$PATH\""
    ;;
esac

say ""
say "Next steps:"
say "  $run doctor          # checks config, agent CLIs and the port"
say "  $run connect claude  # shows how to point Claude Code (or: connect codex) at the gateway"
say "  $run serve           # starts the gateway on http://127.0.0.1:6767"
