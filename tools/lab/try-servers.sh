#!/bin/bash
# Try nginx, HAProxy and sshd from the lab root on loopback: render each
# servers/*.in template with sed, start the server with in-root.sh, wait
# until its port accepts a TCP connection, probe it with the root's own
# openssl s_client / ssh / h2load, stop it and show nothing is left.
#
#   tools/lab/try-servers.sh [ROOT]      (ROOT: default tools/lab/root.sh)
#   PQPROF_LAB_PORT=18443 (first port used; three in a row)
#   PQPROF_LAB_CPU=1 also measures nginx's CPU per handshake (slow, ~1 min)
set -eu
here=$(cd "$(dirname "$0")" && pwd); top=$here/../..
ROOT=${1:-$("$here/root.sh" | tail -1)}
PORT=${PQPROF_LAB_PORT:-18443}
W=$(mktemp -d /tmp/pqprof-try.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
IR=("$here/in-root.sh" -w "$W" "$ROOT")
say() { printf '\n== %s\n' "$*"; }

# toml SERVER PYEXPR: a value of servers/SERVER.toml (python3 tomllib)
toml() {
    python3 -c 'import sys, tomllib
t = tomllib.load(open(sys.argv[1], "rb")); print(eval(sys.argv[2]))' \
        "$top/servers/$1.toml" "$2"
}

# render SERVER PORT GROUPS CERT KEY RESUMPTION(on|off|-): every template
# of servers/SERVER.toml into $W (= /lab in the root), with sed
render() {
    local s=$1 sedf=$W/render.sed
    {
        # The resumption table's text first: it may hold pqprof's own placeholders ({dir}).
        [ "$6" = - ] || toml "$s" "'\n'.join('s|{%s}|%s|g' % (k, v.replace('\\\\', '\\\\\\\\').replace('\n', '\\\\n')) for k, v in t['resumption']['$6'].items())"
        printf 's|{address}|127.0.0.1|g\ns|{port}|%s|g\ns|{groups}|%s|g\ns|{cert}|%s|g\ns|{key}|%s|g\n' "$2" "$3" "$4" "$5"
        printf 's|{dir}|/lab|g\ns|{workers}|%s|g\n' "$(toml "$s" 't["workers"]')"
    } > "$sedf"
    toml "$s" "'\n'.join(k + ' ' + v for k, v in t['templates'].items())" |
    while read -r src dst; do
        sed -f "$sedf" "$top/servers/$src" > "$W/${dst#\{dir\}/}"
    done
}
# argv SERVER: the start argv of servers/SERVER.toml, one per line
argv() { toml "$1" "'\n'.join(a.replace('{dir}', '/lab') for a in t['start'])"; }

# start CPU|"" SERVER: start in the root (pinned), wait for $port
start() {
    local cpu=$1 a
    mapfile -t a < <(argv "$2")
    : > "$W/server.log"
    if [ -n "$cpu" ]; then
        taskset -c "$cpu" "${IR[@]}" "${a[@]}" >> "$W/server.log" 2>&1 &
    else
        "${IR[@]}" "${a[@]}" >> "$W/server.log" 2>&1 &
    fi
    outer=$!; pids+=("$outer")
    for _ in $(seq 100); do      # 5 s at most
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            server=$(pgrep -P "$outer")
            echo "ready: unshare $outer, tree: $(pstree -p "$outer")"
            return 0
        fi
        kill -0 "$outer" 2>/dev/null || break
        sleep 0.05
    done
    echo "server did not come up:"; cat "$W/server.log"; return 1
}

# stop SERVER: its stop_signal to the server (pid 1 of the namespace),
# SIGKILL to it after 5 s (that ends the whole pid namespace); unshare
# then exits by itself and is reaped here.  Shows what is left.
stop() {
    local sig
    sig=$(toml "$1" 't["stop_signal"]')
    kill -"$sig" "$server" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$outer" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$outer" 2>/dev/null && { echo "  $sig ignored: SIGKILL"; kill -9 "$server"; }
    wait "$outer" 2>/dev/null || true
    leftover
}
leftover() {
    left=$(ps -eo pid=,stat=,comm= | grep -E ' (nginx|haproxy|sshd|sshd-session|sshd-auth|unshare)$' || true)
    mnts=$(findmnt -rn -o TARGET,SOURCE | grep -c pqprof-lab || true)
    echo "stopped: processes left: ${left:-none}; pqprof-lab mounts left: $mnts"
}

client() { "${IR[@]}" "$@"; }

sclient() {  # sclient GROUPS [extra]: one handshake, key lines
    client sh -c "sleep 1 | openssl s_client -connect 127.0.0.1:$port \
        -tls1_3 -groups $1 ${2:-} 2>&1" |
    grep -E 'Negotiated TLS1.3 group|Peer Temp Key|Server Temp Key|Peer signature type|handshake has read|Post-Handshake New Session Ticket|alert|error' |
    sed 's/^/    /' | sort | uniq -c
}

say "certificates (root's openssl: CA + leaf, chain = leaf + CA)"
client sh -ec '
cd /lab
mk() {  # mk NAME KEYALG-ARGS...
    n=$1; shift
    openssl req -x509 -new "$@" -keyout $n-ca.key -out $n-ca.crt -nodes \
        -subj /CN=pqprof-ca -days 30 2>/dev/null
    openssl req -new "$@" -keyout $n.key -out $n.csr -nodes \
        -subj /CN=localhost 2>/dev/null
    openssl x509 -req -in $n.csr -CA $n-ca.crt -CAkey $n-ca.key -days 30 \
        -out $n.leaf 2>/dev/null
    cat $n.leaf $n-ca.crt > $n.chain
    echo "$n: chain $(wc -c < $n.chain) bytes PEM, key $(head -1 $n.key)"
}
mk p256 -newkey ec -pkeyopt ec_paramgen_curve:P-256
mk mldsa65 -newkey mldsa65
mk mldsa44 -newkey mldsa44
mk mldsa87 -newkey mldsa87
openssl genpkey -algorithm ed25519 -out ssh_host_ed25519.pem
ssh-keygen -q -t ed25519 -N "" -f id_ed25519
cp id_ed25519.pub authorized_keys
'

tickets() {  # tickets: count of tickets after one handshake; resumed?
    client sh -c "sleep 1 | openssl s_client -connect 127.0.0.1:$port -tls1_3 \
            -sess_out /tmp/s 2>&1 | grep -c 'Post-Handshake New Session Ticket';
        sleep 1 | openssl s_client -connect 127.0.0.1:$port -tls1_3 \
            -sess_in /tmp/s 2>&1 | grep -E '^(New|Reused),'" |
    tr '\n' ' ' | sed 's/^/    tickets: /; s/$/\n/'
}

# ---------------------------------------------------------------- nginx
port=$PORT
for chain in p256 mldsa65; do
    say "nginx $chain, groups X25519MLKEM768:X25519, tickets and cache off, NO NumTickets"
    render nginx $port X25519MLKEM768:X25519 /lab/$chain.chain /lab/$chain.key off
    sed -i 's/ ssl_conf_command NumTickets 0;//' "$W/nginx.conf"
    grep -E 'ssl_(session|conf)' "$W/nginx.conf"
    start "" nginx
    tickets
    echo "  s_client -groups X25519MLKEM768:";  sclient X25519MLKEM768
    echo "  s_client -groups X25519:";          sclient X25519
    echo "  s_client -groups SecP256r1MLKEM768 (not in server list):"; sclient SecP256r1MLKEM768
    stop nginx
done

say "nginx p256, resumption off as servers/nginx.toml says (NumTickets 0)"
render nginx $port \
    X25519MLKEM768:SecP256r1MLKEM768:MLKEM768:X25519 /lab/p256.chain /lab/p256.key off
start "" nginx
tickets
for g in X25519MLKEM768 SecP256r1MLKEM768 MLKEM768 X25519; do
    echo "  s_client -groups $g:"; sclient $g
done
say "nginx h2load: -c 20 -n 20 vs -c 20 -n 40 (handshakes from stub_status accepts)"
acc() { client sh -c "openssl s_client -quiet -connect 127.0.0.1:$port -tls1_3 2>/dev/null <<E
GET /status HTTP/1.1
Host: x
Connection: close

E" | awk '/^ *[0-9]+ [0-9]+ [0-9]+/ {print $1}'; }
for n in 20 40; do
    a0=$(acc)
    client h2load --groups X25519MLKEM768 -c 20 -n $n https://127.0.0.1:$port/ |
        grep -E '^finished in|^requests:|Server Temp Key|TLS Protocol' | sed 's/^/    /'
    a1=$(acc)
    echo "  -c 20 -n $n: $((a1 - a0 - 1)) handshakes at the server"
done
stop nginx

say "nginx WITHOUT any PQ group (ssl_ecdh_curve X25519)"
render nginx $port \
    X25519 /lab/p256.chain /lab/p256.key off
start "" nginx
echo "  s_client -groups X25519MLKEM768:X25519:"; sclient X25519MLKEM768:X25519
echo "  s_client -groups X25519MLKEM768 only:"; sclient X25519MLKEM768
stop nginx

# -------------------------------------------------------------- haproxy
port=$((PORT + 1))
for res in on off-trap off; do
    say "haproxy mldsa65, groups X25519MLKEM768:X25519, resumption $res"
    render haproxy $port X25519MLKEM768:X25519 /lab/mldsa65.chain /lab/mldsa65.key ${res%-trap}
    [ $res = off-trap ] && sed -i '/^NumTickets/d' "$W/haproxy-openssl.cnf"
    start "" haproxy
    tickets
    echo "  s_client -groups X25519MLKEM768:"; sclient X25519MLKEM768
    echo "  s_client -groups X25519:";         sclient X25519
    stop haproxy
done
say "haproxy p256, WITHOUT any PQ group (curves X25519)"
render haproxy $port \
    X25519 /lab/p256.chain /lab/p256.key off
start "" haproxy
echo "  s_client -groups X25519MLKEM768:X25519:"; sclient X25519MLKEM768:X25519
client h2load --groups X25519MLKEM768:X25519 -c 20 -n 20 https://127.0.0.1:$port/ |
    grep -E '^finished in|^requests:|Server Temp Key' | sed 's/^/    /'
stop haproxy

# ----------------------------------------------------------------- sshd
port=$((PORT + 2))
say "sshd, host key ed25519 (PKCS#8 PEM), KexAlgorithms mlkem768x25519-sha256,curve25519-sha256"
render sshd $port \
    mlkem768x25519-sha256,curve25519-sha256 - /lab/ssh_host_ed25519.pem -
start "" sshd
for k in mlkem768x25519-sha256 curve25519-sha256; do
    echo "  ssh -o KexAlgorithms=$k:"
    client ssh -v -T -p $port -i /lab/id_ed25519 -o BatchMode=yes \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
        -o KexAlgorithms=$k root@127.0.0.1 echo session-ok 2>&1 |
        grep -E 'kex: algorithm:|kex: host key algorithm:|Authenticated to|session-ok|Permission denied|no matching' |
        sed 's/^/    /'
done
echo "  server log:"; grep -E 'Server listening|Accepted|error' "$W/server.log" | tail -4 | sed 's/^/    /'
stop sshd

# ---------------------------------------------------- kill -9 the outer
say "kill -9 of the outer process (unshare) with nginx running"
port=$PORT
render nginx $port \
    X25519 /lab/p256.chain /lab/p256.key off
start "" nginx
echo "  mounts in its namespace: $(findmnt -N "$server" -rn | grep -c pqprof-lab)"
kill -9 "$outer"; wait "$outer" 2>/dev/null || true; sleep 0.2
echo "  after: nginx processes: $(pgrep -c -x nginx || true); pqprof-lab mounts on the host: $(findmnt -rn | grep -c pqprof-lab || true)"
leftover

# ------------------------------------------ nginx CPU per handshake (opt)
[ "${PQPROF_LAB_CPU:-0}" = 1 ] || exit 0
say "nginx CPU per handshake, ECDSA-P256 chain, no resumption, server on CPU 1, h2load on CPU 0"
grep -m1 'model name' /proc/cpuinfo
grep -m2 -E '^(cpu family|model)\s' /proc/cpuinfo | tr -s '\t ' ' ' | paste -sd';'
port=$PORT
RUNS=${PQPROF_LAB_RUNS:-20}      # h2load runs of 100 connections each
tick=$(getconf CLK_TCK)
for round in 1 2 3; do
  for g in X25519 X25519MLKEM768; do
    render nginx $port $g /lab/p256.chain /lab/p256.key off
    start 1 nginx >/dev/null
    worker=$(pgrep -P "$server")
    warm() { taskset -c 0 "${IR[@]}" h2load --groups $g -c 100 -n 100 \
        https://127.0.0.1:$port/ >/dev/null; }
    warm
    a0=$(acc)
    read -r u0 s0 < <(awk '{print $14, $15}' /proc/$worker/stat)
    read -r r0 _ < /proc/$worker/schedstat
    t0=$(date +%s%N)
    taskset -c 0 "${IR[@]}" sh -c "for i in \$(seq $RUNS); do
        h2load --groups $g -c 100 -n 100 https://127.0.0.1:$port/ |
        grep -q '100 succeeded' || echo h2load-failed; done"
    t1=$(date +%s%N)
    read -r u1 s1 < <(awk '{print $14, $15}' /proc/$worker/stat)
    read -r r1 _ < /proc/$worker/schedstat
    a1=$(acc)
    n=$((a1 - a0 - 1))
    awk -v g=$g -v n=$n -v u=$((u1-u0)) -v s=$((s1-s0)) -v r=$((r1-r0)) \
        -v hz=$tick -v w=$((t1-t0)) 'BEGIN {
        printf "  %-15s %5d handshakes: utime+stime %4.0f us/hs (user %3.0f, sys %3.0f); schedstat %4.0f us/hs; wall %.2f s\n",
            g, n, (u+s)/hz/n*1e6, u/hz/n*1e6, s/hz/n*1e6, r/1e3/n, w/1e9 }'
    stop nginx >/dev/null
  done
done
leftover
