#!/usr/bin/env bash
# Installs from Debian the programs the end-to-end tests run, when missing
# (all of them, or those named: hack/debian-packages.sh iproute2):
#   iproute2  `ip`, which makes the test network's namespaces, bridge and veths;
#   frr       FRR's zebra, bgpd and vtysh: the BGP router of the BGP stories;
#   iptables  what kube-proxy's iptables mode runs (iptables, iptables-restore,
#             ip6tables...) in the node-address stories.
# Packages never start a service here: where no policy-rc.d keeps them from it
# (as a container's does), one does for the time of the install, so that no
# routing daemon runs in the machine's own network. Without root it only says
# what is missing: the stories that need them skip.
set -euo pipefail

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(iproute2 frr iptables)
present() {
  case $1 in
    iproute2) command -v ip >/dev/null ;;
    frr) [ -x /usr/lib/frr/bgpd ] && [ -x /usr/lib/frr/zebra ] && command -v vtysh >/dev/null ;;
    iptables) command -v iptables-restore >/dev/null && command -v ip6tables-restore >/dev/null ;;
    *) echo "unknown package: $1 (want iproute2, frr or iptables)" >&2; exit 2 ;;
  esac
}
missing=()
for p in "${wanted[@]}"; do present "$p" || missing+=("$p"); done
[ ${#missing[@]} -gt 0 ] || exit 0

if [ "$(id -u)" != 0 ]; then
  echo "NOTE: ${missing[*]} missing and cannot be installed without root"
  exit 0
fi
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
