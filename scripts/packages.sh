# Sourced by setup.sh and test.sh: `install PACKAGE...` installs from the distribution's
# packages (apt-get update once, quietly; sudo when not root).
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_updated=""
install() {
  [ $# -gt 0 ] || return 0
  echo "installing $* from the distribution's packages"
  [ -n "$apt_updated" ] || { $SUDO apt-get update -qq; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
