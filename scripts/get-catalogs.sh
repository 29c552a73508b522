#!/usr/bin/env bash
# Software catalogs as an English-Chinese corpus: downloads a fixed list of
# Debian packages that carry zh_CN gettext catalogs (apt-get download: no
# root, nothing installed), and writes their translated messages, split by
# package, to OUT_DIR (data/catalogs by default; not committed):
#   train.tsv, dev.tsv, test.tsv  source<TAB>target, one pair per line
#   sources.tsv                   each package's version, licence (from its
#                                 copyright file), split, catalogs, pairs
# The test and dev packages are programs the training packages do not
# include; a pair is held once per split, and dev and test drop the
# sources of earlier splits (scripts/catalogs.py split). Prints OUT_DIR.
#   scripts/get-catalogs.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

out_dir="${1:-data/catalogs}"

# package:split. Desktop, office and graphics programs, and GNU tools.
packages=(
  libreoffice-l10n-zh-cn:train gimp-data:train inkscape:train
  libgtk-3-common:train libglib2.0-data:train gnome-control-center-data:train
  rhythmbox-data:train totem-common:train xfce4-panel:train
  gnupg-l10n:train tar:train sed:train make:train coreutils:train
  findutils:train grep:train diffutils:train bash:train dpkg:train
  apt:train gettext:train
  wget:dev nano:dev
  mousepad:test gedit-common:test
)

work_dir=$(mktemp -d)
trap 'rm -rf "$work_dir"' EXIT
mkdir -p "$out_dir"
package_dirs=()
for entry in "${packages[@]}"; do
  package="${entry%%:*}"
  split="${entry##*:}"
  (cd "$work_dir" && apt-get download -q "$package" >/dev/null) || {
    echo "get-catalogs.sh: apt-get download $package failed" >&2
    exit 1
  }
  deb=$(ls "$work_dir"/"${package}"_*.deb)
  dir="$work_dir/packages/$package"
  mkdir -p "$dir"
  dpkg-deb -x "$deb" "$dir"
  dpkg-deb -f "$deb" Version >"$dir/VERSION"
  echo "$split" >"$dir/SPLIT"
  rm "$deb"
  package_dirs+=("$dir")
done
python3 scripts/catalogs.py split "$out_dir" "${package_dirs[@]}"
echo "$out_dir"
