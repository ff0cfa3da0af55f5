#!/bin/sh
# qemu-python.sh: run Debian 12 (bookworm) arm64 CPython 3.11 on an x86-64 host
# through qemu-user, to test the aarch64 build of the Python package (venv, pip,
# ctypes loading an aarch64 libsamebits) without an arm64 machine.
#
#   sh tools/qemu-python.sh setup              build the sysroot if missing (the other commands do it too)
#   sh tools/qemu-python.sh python ARGS...     the arm64 python3.11, e.g. `python -m venv DIR`
#   sh tools/qemu-python.sh run PROGRAM ARGS... an aarch64 program of a venv or of the sysroot
#                                              (ELF, or a script whose #! leads to one)
#   sh tools/qemu-python.sh sysroot            print the sysroot path
#   sh tools/qemu-python.sh remove             delete the sysroot and its apt cache
#
# Why: binfmt_misc is not registered on the hosts this runs on, so an aarch64
# binary cannot be exec'd directly; every one has to be started as
# `qemu-aarch64 -L SYSROOT PROGRAM`. The sysroot is nothing but Debian's own
# arm64 packages, fetched with `apt-get download` and unpacked with `dpkg -x`:
# nothing is built, nothing is installed on the host, and the host's apt
# configuration is not touched (a private APT_CONFIG, sources list, state and
# cache under the cache directory; the host's apt.conf.d is not read, only its
# http/https proxy setting is carried over).
#
# One file is added to the sysroot: usr/bin/python3.11-qemu, a host shell
# script that runs `qemu-aarch64 -L SYSROOT -0 "$0" SYSROOT/usr/bin/python3.11`.
# `python` goes through it, so sys.executable is that script and a venv made with
# `python -m venv DIR` links DIR/bin/python* to it. That makes everything that
# starts sys.executable in a child process work (venv's ensurepip, pip, console
# scripts, subprocess, multiprocessing): the host kernel runs the script, which
# starts qemu again, and -0 keeps the venv's own path in argv[0] so the child
# finds its pyvenv.cfg. DIR/bin/python and DIR/bin/SCRIPT can then be run
# directly, or through `run`. A venv made from the bare ELF
# (qemu-aarch64 -L SYSROOT SYSROOT/usr/bin/python3.11 -m venv DIR) fails in
# ensurepip with "Exec format error", for the same binfmt reason.
#
# Cache: ${SAMEBITS_QEMU_SYSROOT:-$HOME/.cache/samebits-qemu/bookworm-arm64}
# (sysroot in root/, apt's private state in apt/, emptied after a good build).
# Built once: 11.3 MiB of .debs plus 9.3 MB of package indexes, about 6 s on a
# fast mirror; later calls only compare a stamp file. A change to the package
# list, the mirrors or the path rebuilds it. Under qemu, `python -m venv DIR`
# takes 25-35 s (ensurepip installing pip), `pip install` of a small wheel 5-8 s.
# Remove it: `sh tools/qemu-python.sh remove`, or rm -rf that directory.
#
# Environment: SAMEBITS_QEMU_SYSROOT (cache dir), SAMEBITS_QEMU_MIRROR
# (default http://deb.debian.org/debian), SAMEBITS_QEMU_SECURITY_MIRROR
# (default http://deb.debian.org/debian-security), SAMEBITS_QEMU_EXTRA_PKGS
# (more arm64 packages, e.g. "libsqlite3-0 libuuid1 libreadline8 libtinfo6"),
# QEMU_AARCH64 (the qemu-aarch64 binary).
#
# Modules whose shared libraries are left out on purpose (they fail to import;
# add the package to SAMEBITS_QEMU_EXTRA_PKGS when needed): sqlite3
# (libsqlite3-0), _uuid (libuuid1; uuid itself works), readline (libreadline8
# libtinfo6), curses (libncursesw6 libtinfo6), dbm.ndbm (libdb5.3), crypt
# (libcrypt1), nis (libnsl2 libtirpc3 ...). Files a package would put in /etc
# or /usr/share (mime.types, zoneinfo, CA certificates) are not needed:
# qemu -L falls back to the host's file when the sysroot has none.
set -eu

PROG=qemu-python.sh
die() { echo "$PROG: error: $*" >&2; exit 1; }

CACHE=${SAMEBITS_QEMU_SYSROOT:-${HOME:?HOME is not set}/.cache/samebits-qemu/bookworm-arm64}
ROOT=$CACHE/root
APTDIR=$CACHE/apt
MIRROR=${SAMEBITS_QEMU_MIRROR:-http://deb.debian.org/debian}
SECMIRROR=${SAMEBITS_QEMU_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PYVER=3.11
WRAPPER=$ROOT/usr/bin/python$PYVER-qemu

# The minimal set: the interpreter and its stdlib (python3.11-minimal,
# libpython3.11-minimal, libpython3.11-stdlib), ensurepip (python3.11-venv) and
# the wheels it installs (it needs both pip and setuptools in
# /usr/share/python-wheels), and the shared libraries that python3.11 and the
# lib-dynload modules ctypes, zlib, pyexpat, _ssl, _hashlib, _bz2, _lzma need.
# Not python3.11 itself: it holds only pdb/pydoc/pygettext scripts and NEWS.gz.
PKGS="python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3.11-venv
python3-pip-whl python3-setuptools-whl
libc6 libgcc-s1 libffi8 zlib1g libexpat1 libssl3 libbz2-1.0 liblzma5
${SAMEBITS_QEMU_EXTRA_PKGS:-}"
# shellcheck disable=SC2086 # split on purpose: package names have no glob characters
PKGS=$(printf '%s\n' $PKGS)   # one a line
STAMP_KEY="bookworm arm64 $ROOT $MIRROR $SECMIRROR
$PKGS"

QEMU_BIN=${QEMU_AARCH64:-qemu-aarch64}
find_qemu() {
  QEMU=$(command -v "$QEMU_BIN" 2>/dev/null) \
    || die "$QEMU_BIN not found (apt-get install qemu-user, or set QEMU_AARCH64)"
}

case "$CACHE" in *"'"*|*'
'*) die "SAMEBITS_QEMU_SYSROOT must not contain a quote or a newline: $CACHE" ;; esac

# ---------------------------------------------------------------- setup

private_apt() {
  # A private apt: read APT_CONFIG first, and make it point every other
  # config, state and cache path into $APTDIR (init.cc reads APT_CONFIG, then
  # Dir::Etc::parts, then Dir::Etc::main).
  mkdir -p "$APTDIR/etc/apt.conf.d" "$APTDIR/etc/preferences.d" "$APTDIR/etc/sources.list.d" \
    "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/log" "$APTDIR/debs"
  : >"$APTDIR/state/status"
  opts="[arch=arm64 signed-by=$KEYRING]"
  cat >"$APTDIR/etc/sources.list" <<EOF
deb $opts $MIRROR bookworm main
deb $opts $MIRROR bookworm-updates main
deb $opts $SECMIRROR bookworm-security main
EOF
  # The host's proxy (env http_proxy is honoured by apt anyway).
  hp=$(APT_CONFIG='' apt-config dump Acquire::http::Proxy Acquire::https::Proxy 2>/dev/null \
       | grep -E '^Acquire::https?::Proxy ' || true)
  cat >"$APTDIR/apt.conf" <<EOF
Dir::Etc "$APTDIR/etc/";
Dir::Etc::main "/dev/null";
Dir::Etc::parts "$APTDIR/etc/apt.conf.d/";
Dir::Etc::sourcelist "$APTDIR/etc/sources.list";
Dir::Etc::sourceparts "$APTDIR/etc/sources.list.d/";
Dir::Etc::preferences "$APTDIR/etc/preferences";
Dir::Etc::preferencesparts "$APTDIR/etc/preferences.d/";
Dir::State "$APTDIR/state/";
Dir::State::status "$APTDIR/state/status";
Dir::Cache "$APTDIR/cache/";
Dir::Log "$APTDIR/log/";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
Acquire::Languages "none";
Acquire::GzipIndexes "true";
Acquire::Retries "2";
APT::Sandbox::User "$(id -un)";
$hp
EOF
  APT_CONFIG=$APTDIR/apt.conf
  export APT_CONFIG
}

build_sysroot() {
  find_qemu
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found (this needs a Debian or Ubuntu host)"
  command -v dpkg >/dev/null 2>&1 || die "dpkg not found"
  [ -r "$KEYRING" ] || die "$KEYRING missing (apt-get install debian-archive-keyring)"
  mkdir -p "$CACHE" || die "cannot create $CACHE"
  echo "$PROG: building the bookworm arm64 sysroot in $ROOT (once)" >&2
  t0=$(date +%s)
  rm -rf "$APTDIR"
  private_apt

  log=$APTDIR/log/update.log
  if ! apt-get -q update >"$log" 2>&1 || grep -q -E '^(E|W): (Failed|Some index)' "$log"; then
    cat "$log" >&2
    die "no Debian mirror reachable: apt-get update failed for $MIRROR / $SECMIRROR (set SAMEBITS_QEMU_MIRROR)"
  fi
  missing=""
  for p in $PKGS; do
    cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    case "$cand" in ""|"(none)") missing="$missing $p" ;; esac
  done
  [ -z "$missing" ] || die "package(s) missing from bookworm arm64 at $MIRROR:$missing"

  log=$APTDIR/log/download.log
  # shellcheck disable=SC2086
  (cd "$APTDIR/debs" && apt-get -q download $PKGS) >"$log" 2>&1 || {
    cat "$log" >&2; die "apt-get download failed (see above)"; }
  n=0; for d in "$APTDIR"/debs/*.deb; do [ -f "$d" ] && n=$((n + 1)); done
  [ "$n" -eq "$(printf '%s\n' "$PKGS" | grep -c .)" ] || {
    cat "$log" >&2; die "expected one .deb a package, got $n in $APTDIR/debs"; }

  tmp=$CACHE/root.tmp.$$
  rm -rf "$tmp"; mkdir -p "$tmp"
  for d in "$APTDIR"/debs/*.deb; do
    dpkg -x "$d" "$tmp" || { rm -rf "$tmp"; die "dpkg -x failed on $d"; }
  done
  rm -rf "$tmp/usr/share/doc" "$tmp/usr/share/man" "$tmp/usr/share/lintian"
  if [ ! -x "$tmp/usr/bin/python$PYVER" ] || [ ! -e "$tmp/lib/ld-linux-aarch64.so.1" ]; then
    rm -rf "$tmp"; die "the unpacked packages have no usr/bin/python$PYVER or lib/ld-linux-aarch64.so.1"
  fi
  write_wrapper "$tmp" "$ROOT"

  # Check it before calling it done (from its final path, which the wrapper names).
  rm -rf "$ROOT" "$CACHE/root.broken"
  mv "$tmp" "$ROOT"
  if ! out=$("$WRAPPER" -c "import ctypes, venv, ensurepip, zipfile, json, hashlib, ssl, bz2, lzma, platform
assert platform.machine() == 'aarch64', platform.machine()
print('python', platform.python_version(), platform.machine())" 2>&1); then
    echo "$out" >&2
    mv "$ROOT" "$CACHE/root.broken"
    die "the sysroot's python$PYVER fails under qemu (kept in $CACHE/root.broken)"
  fi
  for d in "$APTDIR"/debs/*.deb; do
    # shellcheck disable=SC2016 # dpkg-deb's own ${Field} syntax
    dpkg-deb --show --showformat='${Package} ${Version} ${Architecture}\n' "$d"
  done >"$ROOT/.samebits-packages"
  bytes=$(cat "$APTDIR"/debs/*.deb | wc -c)
  idx=$(sed -n 's/^Fetched \([0-9.]* [kMG]*B\).*/\1/p' "$APTDIR/log/update.log" | tail -n 1)
  printf '%s\n' "$STAMP_KEY" >"$ROOT/.samebits-stamp"
  rm -rf "$APTDIR"   # indexes and .debs: ~60 MB unpacked, not needed again
  echo "$PROG: $out; $n packages, $((bytes / 1024)) KiB of .debs (indexes: ${idx:-?}), $(( $(date +%s) - t0 )) s" >&2
}

write_wrapper() {  # $1: where it is written, $2: the sysroot path it names
  cat >"$1/usr/bin/python$PYVER-qemu" <<EOF
#!/bin/sh
# Written by samebits tools/qemu-python.sh (not part of any Debian package):
# run the arm64 python$PYVER under qemu-user with argv[0] kept, so a venv
# whose bin/python links here finds its pyvenv.cfg.
exec '$QEMU' -L '$2' -0 "\$0" '$2/usr/bin/python$PYVER' "\$@"
EOF
  chmod 755 "$1/usr/bin/python$PYVER-qemu"
}

ensure_sysroot() {
  if [ -f "$ROOT/.samebits-stamp" ] && [ -x "$WRAPPER" ] \
     && [ "$(cat "$ROOT/.samebits-stamp")" = "$STAMP_KEY" ]; then
    return 0
  fi
  if command -v flock >/dev/null 2>&1; then
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    flock 9
    # Someone else may have built it while we waited.
    if [ -f "$ROOT/.samebits-stamp" ] && [ "$(cat "$ROOT/.samebits-stamp")" = "$STAMP_KEY" ]; then
      exec 9>&-; return 0
    fi
    build_sysroot
    exec 9>&-
  else
    build_sysroot
  fi
}

# ---------------------------------------------------------------- run

is_aarch64_elf() {  # ELF, 64-bit, little-endian, e_machine 183 (EM_AARCH64)
  [ -f "$1" ] || return 1
  h=$(od -An -tx1 -N20 "$1" 2>/dev/null | tr -d ' \n')
  [ "$h" != "${h#7f454c460201}" ] && [ "${h#????????????????????????????????????}" = "b700" ]
}

locate() {  # like qemu -L: an absolute path is looked up in the sysroot first
  case "$1" in
    */*) case "$1" in
           "$ROOT"/*) echo "$1" ;;
           /*) if [ -e "$ROOT$1" ]; then echo "$ROOT$1"; else echo "$1"; fi ;;
           *) echo "$1" ;;
         esac ;;
    *) for d in /usr/bin /usr/sbin /bin /sbin; do
         if [ -f "$ROOT$d/$1" ]; then echo "$ROOT$d/$1"; return 0; fi
       done
       command -v "$1" 2>/dev/null || echo "$1" ;;
  esac
}

in_venv_dir() {  # $1: a path in some bin/ directory
  d=$(dirname "$1")
  [ -f "$d/pyvenv.cfg" ] || [ -f "$d/../pyvenv.cfg" ]
}

run_prog() {  # $1: program as given; the rest: its arguments
  depth=${depth:-0}
  [ "$depth" -lt 4 ] || die "too many #! levels starting $1"
  given=$1; shift
  p=$(locate "$given")
  [ -e "$p" ] || die "no such program: $given"
  if is_aarch64_elf "$p"; then
    argv0=$given
    # The sysroot's python itself: go through the wrapper so that
    # sys.executable can be started again from inside (venv, subprocess).
    if [ "$(readlink -f "$p")" = "$(readlink -f "$ROOT/usr/bin/python$PYVER")" ] && ! in_venv_dir "$given"; then
      argv0=$WRAPPER
    fi
    exec "$QEMU" -L "$ROOT" -0 "$argv0" "$p" "$@"
  fi
  if [ "$(head -c 2 "$p" 2>/dev/null)" = "#!" ]; then
    line=$(head -n 1 "$p" | sed 's/^#![[:space:]]*//; s/[[:space:]]*$//')
    interp=${line%%[[:space:]]*}
    arg=${line#"$interp"}; arg=$(printf '%s' "$arg" | sed 's/^[[:space:]]*//')
    ip=$(locate "$interp")
    if is_aarch64_elf "$ip"; then
      depth=$((depth + 1))
      if [ "$ip" != "$interp" ] && [ "${interp#/}" != "$interp" ]; then
        interp=$ip   # found in the sysroot: name the file qemu can open
      fi
      if [ -n "$arg" ]; then run_prog "$interp" "$arg" "$p" "$@"; else run_prog "$interp" "$p" "$@"; fi
    fi
  fi
  # A host program or a script whose #! chain ends in a host program (the
  # wrapper, a venv's bin/python linking to it, a console script): the kernel
  # runs it, with argv[0] as given.
  [ -x "$p" ] || die "$given is neither an aarch64 ELF nor executable"
  exec "$p" "$@"
}

# ---------------------------------------------------------------- main

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  setup) ensure_sysroot; echo "$ROOT" ;;
  python) ensure_sysroot; find_qemu; exec "$WRAPPER" "$@" ;;
  run)
    [ $# -gt 0 ] || die "usage: $PROG run PROGRAM [ARGS...]"
    ensure_sysroot; find_qemu; run_prog "$@" ;;
  sysroot) ensure_sysroot; echo "$ROOT" ;;
  remove) rm -rf "$CACHE"; echo "$PROG: removed $CACHE" ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
