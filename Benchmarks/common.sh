# Helpers the benchmark scripts share; sourced, not run.
#   show CMD...            print a command line as it will run (+ cmd args)
#   free_port              a free TCP port on 127.0.0.1
#   bench_workspace        $work (a temporary folder) and $pids, both cleaned up on exit;
#                          a script may define on_cleanup for more
#   base_checkout BASE           $base_tree: $BASE_TREE when set (built there), else a clone
#                          of this checkout at commit BASE in $work
#   nginx_rtmp_conf DIR PORT CONNECTIONS
#                          writes DIR/nginx.conf: nginx-rtmp with 1 worker, live on,
#                          chunk size 4096, listening on 127.0.0.1:PORT
#   start_serve LIVELINE   in $work (bench_workspace first): `LIVELINE serve` on free
#                          ports $rtmp_port / $http_port, ready when it returns, stopped on exit
#   start_relays LIVELINE  start_serve, and nginx-rtmp on $nginx_port, both ready when it
#                          returns, both stopped on exit
#   timed FILE CMD...      runs CMD (stdin from /dev/null) and writes to FILE "WALL USER SYS":
#                          seconds from before its start to after its exit on the monotonic
#                          clock, and the CPU seconds it and its children used (getrusage);
#                          the one way every side of a comparison is timed
#   machine_note           the date (UTC), the CPU and the load averages, for the record

show() { printf '+'; printf ' %q' "$@"; printf '\n'; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

bench_workspace() {
  work=$(mktemp -d)
  pids=()
  trap bench_cleanup EXIT
}

bench_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
  if declare -F on_cleanup >/dev/null; then on_cleanup; fi
}

base_checkout() {
  if [[ -n ${BASE_TREE:-} ]]; then
    base_tree=$BASE_TREE
  else
    base_tree=$work/base
    git clone -q "$(pwd)" "$base_tree"
    git -C "$base_tree" checkout -q "$1"
  fi
}

nginx_rtmp_conf() {
  local dir=$1 port=$2 connections=$3
  mkdir -p "$dir/logs"
  cat >"$dir/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
worker_processes 1;
worker_rlimit_nofile $connections;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections $connections; }
rtmp { server { listen 127.0.0.1:$port; chunk_size 4096; application live { live on; } } }
CONF
}

start_serve() {
  local bin=$1
  rtmp_port=$(free_port); http_port=$(free_port)
  show "$bin" serve --rtmp "127.0.0.1:$rtmp_port" --http "127.0.0.1:$http_port"
  "$bin" serve --rtmp "127.0.0.1:$rtmp_port" --http "127.0.0.1:$http_port" >"$work/serve.out" 2>"$work/serve.err" &
  pids+=($!)
  for _ in $(seq 100); do grep -q '^ready' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
}

start_relays() {
  start_serve "$1"
  nginx_port=$(free_port)
  nginx_rtmp_conf "$work/nginx" "$nginx_port" 1024
  show nginx -p "$work/nginx" -c "$work/nginx/nginx.conf"
  nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/logs/error.log" &
  pids+=($!)
  sleep 0.5
}

timed() {
  local out=$1
  shift
  python3 -c '
import os, resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.monotonic()
code = subprocess.call(sys.argv[2:], stdin=subprocess.DEVNULL)
wall = time.monotonic() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write("%.4f %.4f %.4f\n" % (wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime))
sys.exit(code)
' "$out" "$@"
}

machine_note() {
  printf '%s; %s cores (%s); load average %s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$(nproc)" \
    "$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
