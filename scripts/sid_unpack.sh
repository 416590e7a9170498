# Sourced by the scripts that need packages from Debian sid (glslang_nv2.sh, ggml_vulkan.sh, ggml_clients.sh,
# vk_xml.sh): sid_unpack PREFIX WHO PACKAGE... fetches the packages with apt through a temporary
# sources list under PREFIX (nothing is installed system-wide) and unpacks them under PREFIX/root.
# It returns 1 with a reason on stderr, naming WHO, when apt cannot fetch them. With SID_DEBS=DIR
# (a machine without network, e.g. the device machine, given the .debs fetched here) it unpacks
# DIR's .debs instead of fetching.
sid_unpack() {
  local P=$1 who=$2; shift 2
  mkdir -p "$P/apt/lists/partial" "$P/apt/cache/archives/partial" "$P/apt/sources" "$P/debs" "$P/root"
  if [ -n "${SID_DEBS:-}" ]; then
    cp "$SID_DEBS"/*.deb "$P/debs/" || { echo "$who: no .debs in SID_DEBS=$SID_DEBS" >&2; return 1; }
  else
    cat > "$P/apt/sources/sid.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    local APT=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$P/apt/sources"
               -o Dir::State::Lists="$P/apt/lists" -o Dir::Cache="$P/apt/cache" -o Debug::NoLocking=1)
    apt-get "${APT[@]}" update -qq >&2 || { echo "$who: apt-get update failed (no network to Debian?)" >&2; return 1; }
    (cd "$P/debs" && apt-get "${APT[@]}" download "$@" >&2 2>/dev/null) \
      || { echo "$who: could not download $* from sid" >&2; return 1; }
  fi
  local d
  for d in "$P"/debs/*.deb; do dpkg-deb -x "$d" "$P/root"; done
}

# sid_wrap PREFIX NAME PROGRAM [LIBRARY-PATH]: PREFIX/NAME runs PROGRAM with the unpacked runtime's
# own dynamic loader (bookworm's is too old for it), its libraries from PREFIX/root first
sid_wrap() {
  local L=$1/root/usr/lib/x86_64-linux-gnu
  cat > "$1/$2" <<RUN
#!/bin/sh
exec "$L/ld-linux-x86-64.so.2" --library-path "${4:-$L}" "$3" "\$@"
RUN
  chmod +x "$1/$2"
}
