#!/usr/bin/env bash
# Installs the real tools railyard's generated files are proven against (tests/realtools.py),
# and makes sure none of them is left running as a system service: a packaged slurmctld,
# opensm, frr, kea, postgresql, redis or lldpd started by postinst would hold ports, sockets and pid files the tests
# use, an OpenSM would sweep whatever it finds, and an lldpd would talk LLDP on the host's links.
#
# Idempotent and quiet: when every package is already installed apt is not touched at all,
# so re-running it (e.g. from .ci/run) costs well under a second.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

PACKAGES=(
  slurmctld slurm-client            # slurmctld -D -c -i parses slurm.conf + topology.conf
  opensm ibsim-utils infiniband-diags  # OpenSM sweeping an ibsim fabric, ibnetdiscover/smpquery
  frr frr-pythontools               # vtysh -C -f; frr-reload.py for config diffs
  kea-dhcp4-server                  # kea-dhcp4 -t; and serving DHCP in a namespace (tests/test_ztp_netns.py)
  isc-dhcp-relay isc-dhcp-client    # dhcrelay -a (option 82) and dhclient: the ZTP DHCP exchange
  iproute2                          # ip netns for FRR tests in namespaces
  netplan.io                        # netplan generate --root-dir: the hosts' backend netplan.yaml
  iputils-ping                      # ping between loopbacks of the namespace fabric
  lldpd                             # lldpd/lldpctl in the namespace fabric: verify --lldp on real output
  chromium                          # headless print-to-pdf of reports
  fonts-dejavu-core                 # chromium pulls no fonts without recommends; text needs one
  poppler-utils                     # pdfinfo/pdftoppm: page counts and looking at PDFs
  zbar-tools                        # zbarimg: decodes the QR codes of the technician pack
  postgresql redis-server           # NetBox's database and cache (scripts/install-netbox.sh)
  libpq-dev gcc                     # psycopg[c], which NetBox pins, compiles against libpq
  # ../shared/sonic-yang/setup.sh builds libyang 3 and its Python bindings into a cache on first use
  # (tests/test_sonic_yang.py); installed here so it never has to call apt itself
  build-essential cmake libpcre2-dev pkg-config xz-utils ca-certificates python3-dev python3-venv
)

# Services that the packages above install (munge comes with slurm).
SERVICES=(slurmctld munge opensm frr kea-dhcp4-server isc-dhcp-relay postgresql redis-server lldpd)

if [[ $(id -u) -ne 0 ]]; then
  echo "install-system-deps.sh: must run as root" >&2
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true) != installed ]]; then
    missing+=("$p")
  fi
done

log=$(mktemp /tmp/install-system-deps.XXXXXX.log)
cleanup_policy=0
cleanup() {
  # Only remove a policy-rc.d that this script created; an image's own one stays.
  if [[ $cleanup_policy -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT

if ((${#missing[@]})); then
  # Without systemd as PID 1 the postinst scripts go through invoke-rc.d, which starts the
  # daemons unless policy-rc.d says 101 ("action forbidden"). Container images often ship one;
  # create it for the duration of the install when they don't.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    cleanup_policy=1
  fi
  apt_opts=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
            --no-install-recommends)
  echo "install-system-deps.sh: installing ${missing[*]}"
  if ! { apt-get -q update && apt-get "${apt_opts[@]}" install "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "install-system-deps.sh: apt-get failed (log above)" >&2
    exit 1
  fi
fi

# Stop and disable whatever the packages registered, whether or not this run installed them:
# a machine handed back from an earlier session may have had them started by hand.
for s in "${SERVICES[@]}"; do
  if [[ -d /run/systemd/system ]]; then
    systemctl disable --now "$s" >>"$log" 2>&1 || true
  elif [[ -x /etc/init.d/$s ]]; then
    # `service` runs the init script directly (policy-rc.d only gates invoke-rc.d), so stop works.
    service "$s" stop >>"$log" 2>&1 || true
    update-rc.d "$s" disable >>"$log" 2>&1 || true
  fi
done

rm -f "$log"
