# shellcheck shell=bash
#
# Private, throwaway PostgreSQL server for tests.
#
#   source .ci/postgres.sh && pg_start    # exports HERD_TEST_POSTGRES_URL
#                                         # and HERD_PG_DIR
#   ...
#   pg_stop                               # stops the server, deletes its files
#
# The server is independent of any cluster configured under /etc: it lives in
# a fresh temporary directory, listens on 127.0.0.1 only, trusts every local
# connection and runs with fsync off, so it must never hold data worth
# keeping. When run as root, the server runs as the postgres user (initdb and
# postgres refuse to run as root); otherwise it runs as the caller.
#
# Environment:
#   HERD_PG_BIN   directory holding initdb and pg_ctl; default: the newest
#                 /usr/lib/postgresql/*/bin, else wherever initdb is on PATH
#   HERD_PG_PORT  first TCP port to try; default 54329, the next 19 are tried
#                 when it is taken
#
# The functions return non-zero instead of exiting, so they are safe to call
# from an interactive shell and from scripts running under set -euo pipefail.

# pg_bin prints the directory of the PostgreSQL server binaries.
pg_bin() {
	if [[ -n ${HERD_PG_BIN:-} ]]; then
		printf '%s\n' "$HERD_PG_BIN"
		return
	fi
	# A client-only version (postgresql-client-NN) has a bin directory too,
	# so look for initdb rather than for the directory.
	local newest
	newest=$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/initdb' 2>/dev/null | sort -V | tail -n 1) || true
	if [[ -n $newest ]]; then
		dirname "$newest"
	elif command -v initdb >/dev/null; then
		dirname "$(command -v initdb)"
	else
		echo "pg_start: no PostgreSQL server binaries found; install postgresql or set HERD_PG_BIN" >&2
		return 1
	fi
}

# pg_as_owner runs a command as the user that owns the server, from inside
# the server's directory (so the postgres user never needs the caller's cwd).
pg_as_owner() {
	if [[ $EUID -eq 0 ]]; then
		(cd "$HERD_PG_DIR" && runuser -u postgres -- "$@")
	else
		(cd "$HERD_PG_DIR" && "$@")
	fi
}

# pg_port_busy succeeds when something accepts connections on the port.
pg_port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pg_start creates, starts and exports a fresh server.
pg_start() {
	if [[ -n ${HERD_PG_DIR:-} ]]; then
		echo "pg_start: a server is already running in $HERD_PG_DIR; call pg_stop first" >&2
		return 1
	fi
	local bin
	bin=$(pg_bin) || return 1

	HERD_PG_DIR=$(mktemp -d /tmp/herd-pg.XXXXXX) || return 1
	export HERD_PG_DIR
	if [[ $EUID -eq 0 ]]; then
		chown postgres: "$HERD_PG_DIR" || { pg_stop; return 1; }
	fi

	if ! pg_as_owner "$bin/initdb" -D "$HERD_PG_DIR/data" -U postgres \
		--auth=trust -E UTF8 --no-locale >"$HERD_PG_DIR/initdb.log" 2>&1; then
		echo "pg_start: initdb failed:" >&2
		cat "$HERD_PG_DIR/initdb.log" >&2
		pg_stop
		return 1
	fi

	# The socket lives in the private directory: the port may equal that of a
	# system cluster's socket in /var/run/postgresql without clashing.
	local port first=${HERD_PG_PORT:-54329}
	for ((port = first; port < first + 20; port++)); do
		pg_port_busy "$port" && continue
		rm -f -- "$HERD_PG_DIR/server.log"
		if pg_as_owner "$bin/pg_ctl" -D "$HERD_PG_DIR/data" -l "$HERD_PG_DIR/server.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $HERD_PG_DIR -c fsync=off" \
			start >/dev/null; then
			export HERD_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
			echo "pg_start: PostgreSQL $("$bin/postgres" -V | awk '{print $3}') on 127.0.0.1:$port, data in $HERD_PG_DIR"
			return 0
		fi
		# Another process may have bound the port between the probe and the
		# start; only that failure is worth another port.
		grep -q 'could not bind' "$HERD_PG_DIR/server.log" 2>/dev/null || break
	done

	echo "pg_start: PostgreSQL did not start; server log:" >&2
	cat -- "$HERD_PG_DIR/server.log" >&2 || true
	pg_stop
	return 1
}

# pg_stop stops the server started by pg_start and deletes its directory. It
# is idempotent, so it can serve as an EXIT trap. It signals the postmaster
# directly (SIGINT is PostgreSQL's fast shutdown, SIGQUIT its immediate one),
# which works whichever binaries started it, and waits for the process itself
# to end, which pg_ctl stop does not quite do.
pg_stop() {
	[[ -n ${HERD_PG_DIR:-} ]] || return 0
	local pid
	pid=$(head -n 1 "$HERD_PG_DIR/data/postmaster.pid" 2>/dev/null) || pid=
	if [[ $pid =~ ^[0-9]+$ ]] && kill -INT "$pid" 2>/dev/null; then
		pg_wait_exit "$pid" 300 || { kill -QUIT "$pid" 2>/dev/null; pg_wait_exit "$pid" 50; } ||
			echo "pg_stop: postmaster $pid did not exit" >&2
	fi
	rm -rf -- "$HERD_PG_DIR"
	unset HERD_PG_DIR HERD_TEST_POSTGRES_URL
}

# pg_wait_exit waits up to $2 tenths of a second for process $1 to end. A
# zombie counts as ended: the postmaster's parent is init, which may be slow
# to reap it in a container.
pg_wait_exit() {
	local i state
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		state=
		read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null || true
		[[ $state == Z ]] && return 0
		sleep 0.1
	done
	return 1
}
