#!/usr/bin/env bash
# Makes sure the tests' system prerequisites are here before `make test`, so
# that no test fails late or skips because a tool is missing. Everything that
# builds from the Go module proxy (control plane, kubectl, Prometheus) comes
# from hack/cluster-bins.sh; this script covers what Debian provides.
#
# Chromium (the web UI's browser tests): installed with apt-get when running
# as root, otherwise the script stops with the command to run.
set -euo pipefail

chromium=/usr/bin/chromium
if [ ! -x "$chromium" ]; then
	install="apt-get update -qq && apt-get install -y -qq chromium"
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "installing Chromium for the browser tests (first run only): $install" >&2
		if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; then
			echo "installing Chromium failed; run as root: $install" >&2
			exit 1
		fi
	else
		echo "the browser tests need $chromium; install it with: sudo sh -c '$install'" >&2
		exit 1
	fi
fi
