#!/usr/bin/env bash
# hack/compose-check.sh: proves the workshop path of docs/workshop.md end to
# end, on a fresh machine, with the real Dockerfile and docker-compose.yml:
#
#   1. a docker engine and compose (Debian's docker.io and docker-compose,
#      installed when missing; a daemon started when none answers)
#   2. the image, built by compose from the Dockerfile (the Go base image
#      pulled, or built locally by hack/go-base-image.sh when no registry
#      answers)
#   3. `compose up -d`, then /readyz on the host's 127.0.0.1
#   4. a bundled lesson over REST, and the dashboard in headless Chromium
#   5. `compose restart`: the data volume kept the nodes and pods
#   6. room mode: MINISCHED_BIND=0.0.0.0 with a random token; refused
#      without it, served with it (header, cookie, the /?token= link)
#   7. `compose down -v --rmi all`: no container, volume, network or project
#      image left behind; a daemon this script started is stopped
#
# Each step prints its time; the first failure stops the script with a
# message and a non-zero exit. It takes about 15 minutes the first time (a
# cold Go build of Kubernetes) and a couple of minutes after that (BuildKit's
# cache mounts keep the Go caches). Too slow for every CI run: run it when
# Dockerfile, docker-compose.yml, .dockerignore or the flags they use change.
#
# It works on its own compose project (COMPOSE_PROJECT_NAME, default
# minisched-check) and image (minisched:compose-check), so a workshop already
# running on this machine keeps its container, volume and image. A daemon
# that was already running is left running.
#
# Environment:
#   MINISCHED_PORT  host port to publish (default 8080); must be free
#   GO_IMAGE        the build stage's base image (default: golang:1.26-bookworm
#                   when it can be pulled, else a local one, see above)
#   GO_BASE_IMAGE   the name of that local one (default minisched-go-base:local;
#                   kept as a cache, `docker rmi` it to rebuild)
#   KEEP_DOCKERD=1  leave a daemon this script started running
#   GOPROXY, GOSUMDB, GONOSUMDB, GOPRIVATE, GONOPROXY, GOINSECURE, GOFLAGS
#                   passed to the build; taken from `go env` when Go is here
set -euo pipefail
cd "$(dirname "$0")/.."

port=${MINISCHED_PORT:-8080}
project=${COMPOSE_PROJECT_NAME:-minisched-check}
image=minisched:compose-check
base_image=${GO_BASE_IMAGE:-minisched-go-base:local}
lesson=09-resources

export COMPOSE_PROJECT_NAME=$project MINISCHED_IMAGE=$image MINISCHED_PORT=$port
unset MINISCHED_BIND MINISCHED_TOKEN

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compose-check.XXXXXX")
dockerd_pid=
project_up=0
step_no=0
step_name=
step_t0=
t_start=$(date +%s.%N)
summary=()

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '    %s\n' "$*"; }
step() {
	end_step
	step_no=$((step_no + 1))
	step_name=$1
	step_t0=$(now)
	printf '\n==> [%d/7] %s\n' "$step_no" "$step_name"
}
end_step() {
	if [ -n "$step_t0" ]; then
		local s
		s=$(since "$step_t0")
		printf '    step %d done in %ss\n' "$step_no" "$s"
		summary+=("$(printf '%d. %-56s %6ss' "$step_no" "$step_name" "$s")")
		step_t0=
	fi
}
fail() {
	trap - ERR
	printf '\nFAILED at step %d (%s): %s\n' "$step_no" "$step_name" "$*" >&2
	exit 1
}
trap 'fail "command failed (line $LINENO, exit $?): $BASH_COMMAND"' ERR

cleanup() {
	local rc=$?
	trap - ERR
	set +e
	if [ "$project_up" = 1 ]; then
		echo "cleaning up: $compose down -v --rmi all" >&2
		$compose down -v --rmi all --remove-orphans >/dev/null 2>&1
	fi
	if [ -n "$dockerd_pid" ] && [ "${KEEP_DOCKERD:-}" != 1 ]; then
		kill "$dockerd_pid" 2>/dev/null
		for _ in $(seq 1 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
		if kill -0 "$dockerd_pid" 2>/dev/null; then
			echo "dockerd ($dockerd_pid) did not stop; its log: $tmp/dockerd.log" >&2
			return
		fi
		[ "$rc" = 0 ] || { echo "dockerd's log (last lines):" >&2; tail -5 "$tmp/dockerd.log" >&2; }
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
apt_install() {
	log "installing Debian's $*"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >"$tmp/apt.log" 2>&1 ||
		{ tail -5 "$tmp/apt.log" >&2; fail "apt-get install $* failed"; }
}

# A port is free when nothing accepts a connection on it.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_ready URL SECONDS: polls URL/readyz every 50 ms; prints the seconds
# it took.
wait_ready() {
	local t0 deadline
	t0=$(now)
	deadline=$(($(date +%s) + $2))
	until curl -fsS -o /dev/null --max-time 2 "$1/readyz" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
	since "$t0"
}

# js EXPR: evaluates EXPR over the JSON on stdin (as v) and prints it.
js() {
	node -e '
		let s = "";
		process.stdin.on("data", (d) => (s += d)).on("end", () => {
			const v = JSON.parse(s);
			const r = eval(process.argv[1]);
			console.log(typeof r === "string" ? r : JSON.stringify(r));
		});' "$1"
}

container() { $compose ps -q minisched; }

# ready_after_start: seconds from the container's start (its StartedAt) to
# now, when /readyz has just answered.
since_container_start() {
	local started
	started=$(docker inspect -f '{{.State.StartedAt}}' "$(container)")
	awk -v a="$(date -d "$started" +%s.%N)" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'
}

# up_and_ready WHAT ARGS...: runs compose ARGS, waits for /readyz, says how
# long it took from the command and from the container's start.
up_and_ready() {
	local what=$1 t0 took from_start
	shift
	t0=$(now)
	$compose "$@" >"$tmp/compose.log" 2>&1 || { cat "$tmp/compose.log" >&2; fail "$compose $* failed"; }
	project_up=1
	if ! took=$(wait_ready "$url" 60); then
		docker logs --tail 30 "$(container)" >&2 || true
		fail "/readyz did not answer on $url within 60 s of $what"
	fi
	from_start=$(since_container_start)
	log "$what: /readyz answered $(since "$t0")s after '$compose $*' began (${from_start}s after the container started)"
	ready_times+=("$from_start")
}
ready_times=()

# nodes and pods as the API lists them: names, and where each pod is bound.
cluster_state() {
	local nodes pods
	nodes=$(curl -fsS "$@" "$url/api/v1/nodes" | js 'v.items.map((n) => n.metadata.name).sort().join(" ")')
	pods=$(curl -fsS "$@" "$url/api/v1/pods" | js 'v.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}@${p.spec.nodeName || "unbound"}`).sort().join(" ")')
	echo "nodes: $nodes; pods: $pods"
}

url="http://127.0.0.1:$port"

# ---------------------------------------------------------------------------
step "docker engine and compose"
if ! command -v docker >/dev/null || ! command -v dockerd >/dev/null; then
	as_root apt-get update -q >/dev/null 2>&1 || true
	apt_install docker.io
fi
if docker compose version >/dev/null 2>&1; then
	compose="docker compose"
else
	command -v docker-compose >/dev/null || apt_install docker-compose
	compose=docker-compose
fi
log "compose: $compose ($($compose version --short 2>/dev/null || $compose version | head -1))"
if docker info >/dev/null 2>&1; then
	log "a docker daemon already answers: using it (and leaving it running)"
else
	log "no docker daemon answers: starting dockerd --iptables=false --storage-driver=vfs (log: $tmp/dockerd.log)"
	# Not through a function: $! must be dockerd itself (or sudo, which
	# passes the signal on), for the cleanup to stop it.
	if [ "$(id -u)" = 0 ]; then
		dockerd --iptables=false --storage-driver=vfs >"$tmp/dockerd.log" 2>&1 &
	else
		sudo dockerd --iptables=false --storage-driver=vfs >"$tmp/dockerd.log" 2>&1 &
	fi
	dockerd_pid=$!
	deadline=$(($(date +%s) + 60))
	until docker info >/dev/null 2>&1; do
		kill -0 "$dockerd_pid" 2>/dev/null || { tail -20 "$tmp/dockerd.log" >&2; fail "dockerd exited"; }
		[ "$(date +%s)" -lt "$deadline" ] || { tail -20 "$tmp/dockerd.log" >&2; fail "dockerd did not answer within 60 s"; }
		sleep 0.2
	done
fi
log "engine: $(docker version -f '{{.Server.Version}}'), storage driver $(docker info -f '{{.Driver}}')"

# The Dockerfile needs BuildKit. Docker 23 and later build with it through
# buildx; older CLIs (Debian's 20.10) with DOCKER_BUILDKIT=1. A newer CLI
# without buildx cannot, so compose then gets the first docker on PATH that
# can.
buildkit_cli() {
	local cli major
	for cli in $(type -ap docker); do
		if "$cli" buildx version >/dev/null 2>&1; then echo "$cli"; return; fi
		major=$("$cli" version -f '{{.Client.Version}}' 2>/dev/null | cut -d. -f1)
		if [ -n "$major" ] && [ "$major" -lt 23 ]; then echo "$cli"; return; fi
	done
	return 1
}
cli=$(buildkit_cli) || fail "no docker CLI here can build with BuildKit: install buildx (docker-buildx) or Debian's docker.io"
if [ "$cli" != "$(type -P docker)" ]; then
	mkdir -p "$tmp/bin"
	ln -s "$cli" "$tmp/bin/docker"
	export PATH="$tmp/bin:$PATH"
	log "the first docker on PATH has no buildx: building with $("$cli" version -f '{{.Client.Version}}') from the docker.io package instead"
fi
export DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1

for p in $(docker ps -aq --filter "label=com.docker.compose.project=$project"); do
	fail "compose project $project already has containers ($p): run '$compose -p $project down -v' first"
done
if port_busy "$port"; then
	fail "something already listens on 127.0.0.1:$port: set MINISCHED_PORT to a free port"
fi

# ---------------------------------------------------------------------------
step "build the image from the Dockerfile"
if [ -z "${GO_IMAGE:-}" ]; then
	GO_IMAGE=golang:1.26-bookworm
	if docker image inspect "$GO_IMAGE" >/dev/null 2>&1; then
		log "base image $GO_IMAGE: present"
	elif timeout 120 docker pull -q "$GO_IMAGE" >"$tmp/pull.log" 2>&1; then
		log "base image $GO_IMAGE: pulled"
	else
		log "base image $GO_IMAGE cannot be pulled ($(tail -1 "$tmp/pull.log" | cut -c1-100))"
		GO_IMAGE=$base_image
		if docker image inspect "$GO_IMAGE" >/dev/null 2>&1; then
			log "using the local Go base image $GO_IMAGE built earlier by hack/go-base-image.sh ($(docker run --rm "$GO_IMAGE" go version | cut -d' ' -f3))"
		else
			command -v go >/dev/null || fail "no registry answers and no Go toolchain here to build a local base image"
			log "building a local Go base image instead: hack/go-base-image.sh $GO_IMAGE"
			t0=$(now)
			if ! hack/go-base-image.sh "$GO_IMAGE" | sed 's/^/    /'; then
				fail "hack/go-base-image.sh failed"
			fi
			log "local base image built in $(since "$t0")s"
		fi
	fi
fi
export GO_IMAGE
if command -v go >/dev/null; then
	for v in GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GONOPROXY GOINSECURE GOFLAGS; do
		export "$v=$(go env "$v")"
	done
	log "module proxy and checksum settings: this machine's (go env)"
fi
t0=$(now)
if ! $compose build minisched >"$tmp/build.log" 2>&1; then
	tail -30 "$tmp/build.log" >&2
	fail "$compose build failed"
fi
log "$compose build (GO_IMAGE=$GO_IMAGE): $(since "$t0")s"
log "image $image: $(docker image ls "$image" --format '{{.Size}}')"

# ---------------------------------------------------------------------------
step "compose up -d, /readyz on 127.0.0.1:$port"
up_and_ready "first start" up -d
cid=$(container)
user=$(docker inspect -f '{{.Config.User}}' "$cid")
uid=$(docker top "$cid" -o uid,pid,args | awk 'NR == 2 { print $1 }')
[ "$uid" = 65532 ] || fail "the server runs as uid $uid, not 65532"
log "runs as uid $uid (image User $user), not root"
mounts=$(docker inspect -f '{{range .Mounts}}{{.Destination}}:{{.Type}} {{end}}' "$cid")
case " $mounts" in *" /data:volume "*) ;; *) fail "/data is not a volume: $mounts" ;; esac
log "mounts: $mounts"
published=$(docker port "$cid" 8080/tcp)
[ "$published" = "127.0.0.1:$port" ] || fail "published on $published, not 127.0.0.1:$port only"
log "published on $published only"

# ---------------------------------------------------------------------------
step "a bundled lesson over REST, the dashboard in Chromium"
run=$(curl -fsS -X POST "$url/api/v1/scenarios?bundled=$lesson&reset=true&wait=true") ||
	fail "POST /api/v1/scenarios?bundled=$lesson failed"
state=$(echo "$run" | js 'v.report ? v.report.state : v.state')
[ "$state" = passed ] || fail "lesson $lesson: $state: $(echo "$run" | js 'v.report ? v.report.message || v.report.expectations : v.error')"
log "lesson $lesson: $state ($(echo "$run" | js '`${v.report.steps.length} steps, ${v.report.expectations.length} expectations, ${v.report.seconds.toFixed(1)}s`'))"
before=$(cluster_state)
log "$before"
command -v node >/dev/null || fail "the browser check needs Node.js 20 or later"
command -v chromium >/dev/null || apt_install chromium
if [ ! -d node_modules/playwright-core ]; then
	log "installing the npm test dependencies (npm ci: playwright-core, no browser download)"
	npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
if ! node test/compose/dashboard.mjs "$url" small large | sed 's/^/    /'; then
	fail "the dashboard did not load"
fi

# ---------------------------------------------------------------------------
step "compose restart keeps the data volume"
up_and_ready "restart" restart
after=$(cluster_state)
[ "$after" = "$before" ] || fail "after the restart: $after; before: $before"
log "same after the restart: $after"
# A crash: the server killed from outside; restart: unless-stopped brings it
# back, with the same data.
restarts=$(docker inspect -f '{{.RestartCount}}' "$cid")
kill -KILL "$(docker inspect -f '{{.State.Pid}}' "$cid")"
t0=$(now)
deadline=$(($(date +%s) + 60))
until [ "$(docker inspect -f '{{.RestartCount}}' "$cid")" -gt "$restarts" ] && curl -fsS -o /dev/null --max-time 2 "$url/readyz" 2>/dev/null; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "not restarted and ready within 60 s of a crash"
	sleep 0.05
done
log "killed with SIGKILL: restarted by the engine and ready in $(since "$t0")s"
after=$(cluster_state)
[ "$after" = "$before" ] || fail "after the crash: $after; before: $before"
log "same after the crash"

# ---------------------------------------------------------------------------
step "room mode: MINISCHED_BIND=0.0.0.0 with a token"
# Beyond loopback without a token: minisched must refuse to start.
MINISCHED_BIND=0.0.0.0 $compose up -d >"$tmp/compose.log" 2>&1 || { cat "$tmp/compose.log" >&2; fail "$compose up -d failed"; }
deadline=$(($(date +%s) + 60))
until docker logs "$(container)" 2>&1 | grep -q 'give a token'; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "no refusal in the logs within 60 s of starting beyond loopback without a token"
	sleep 0.2
done
if curl -fsS -o /dev/null --max-time 2 "$url/readyz" 2>/dev/null; then fail "started beyond loopback without a token"; fi
log "without a token, refused to start: $(docker logs "$(container)" 2>&1 | grep -m1 'give a token' | cut -c1-120)"
# down without -v keeps the data volume; then the room, with a token.
$compose down >"$tmp/compose.log" 2>&1 || { cat "$tmp/compose.log" >&2; fail "$compose down failed"; }
log "$compose down (the volume kept)"
token=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
MINISCHED_BIND=0.0.0.0 MINISCHED_TOKEN=$token up_and_ready "room start" up -d
cid=$(container)
published=$(docker port "$cid" 8080/tcp | head -1)
log "published on $published"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$url/api/v1/nodes")
[ "$code" = 401 ] || fail "without the token: HTTP $code, want 401"
log "without the token: HTTP $code"
[ "$(cluster_state -H "Authorization: Bearer $token")" = "$before" ] ||
	fail "with the token (Authorization: Bearer): $(cluster_state -H "Authorization: Bearer $token")"
log "with the token (Authorization: Bearer): the cluster as before, kept by the volume"
[ "$(cluster_state -b "minisched_token=$token")" = "$before" ] || fail "with the token's cookie: refused or different"
log "with the token's cookie: the same"
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer not-$token" "$url/api/v1/nodes")
[ "$code" = 401 ] || fail "with a wrong token: HTTP $code, want 401"
log "with a wrong token: HTTP $code"
listing=$(docker top "$cid" -o pid,args)
case "$listing" in *"$token"*) fail "the token shows in the process listing" ;; *minisched*) ;; *) fail "no process listing: $listing" ;; esac
log "the token is not in the container's process listing"
# Reached through the host's own address, as a participant's laptop would.
host_ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -v -e '^127\.' -e ':' -e '^$' | head -1 || true)
if [ -n "$host_ip" ]; then
	room_url="http://$host_ip:$port"
	curl -fsS -o /dev/null -H "Authorization: Bearer $token" "$room_url/api/v1/nodes" || fail "$room_url refused the token"
	log "reachable beyond loopback at the host's address, with the token"
else
	room_url=$url
	log "the host has no non-loopback IPv4 address: the browser uses loopback"
fi
# A shared instance: participants keep apart by a name prefix in "default";
# other namespaces do not exist (and cannot be made over REST).
pod='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"alice-web"},"spec":{"containers":[{"name":"app","image":"pause:3.10","resources":{"requests":{"cpu":"100m"}}}]}}'
curl -fsS -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -X POST "$url/api/v1/pods" -d "$pod" ||
	fail "creating pod alice-web failed"
deadline=$(($(date +%s) + 30))
until node=$(curl -fsS -H "Authorization: Bearer $token" "$url/api/v1/pods/default/alice-web" | js 'v.spec.nodeName || ""') && [ -n "$node" ]; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "pod alice-web was not scheduled within 30 s"
	sleep 0.2
done
log "a participant's pod (alice-web): created with the token, scheduled to $node"
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -X POST "$url/api/v1/pods" \
	-d "${pod/\"name\":\"alice-web\"/\"name\":\"web\",\"namespace\":\"alice\"}")
[ "$code" = 404 ] || fail "a pod in namespace alice: HTTP $code; docs/workshop.md says only default exists (404)"
log "a pod in another namespace (alice): HTTP 404, as docs/workshop.md says"
# A participant's browser: the room's link sets the cookie and the stream
# opens; then the server restarts under the open page, which must reconnect
# by itself (same token, same data).
if ! MINISCHED_TOKEN=$token RESTART="$compose restart" node test/compose/dashboard.mjs "$room_url" small large | sed 's/^/    /'; then
	fail "the dashboard failed with the room's link"
fi

# ---------------------------------------------------------------------------
step "compose down -v --rmi all leaves nothing behind"
$compose down -v --rmi all --remove-orphans >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log" >&2; fail "$compose down failed"; }
project_up=0
left=$(docker ps -aq --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "containers left: $left"
left=$(docker volume ls -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "volumes left: $left"
left=$(docker network ls -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "networks left: $left"
if docker image inspect "$image" >/dev/null 2>&1; then fail "image $image left"; fi
log "no container, volume, network or image of project $project left"
if [ "$GO_IMAGE" = "$base_image" ]; then
	log "kept as a cache: the local Go base image $base_image ($(docker image ls "$base_image" --format '{{.Size}}')) and BuildKit's Go caches (docker builder prune removes those)"
fi
if [ -n "$dockerd_pid" ] && [ "${KEEP_DOCKERD:-}" != 1 ]; then
	log "stopping the dockerd this script started"
fi
end_step

echo
echo "compose-check passed in $(since "$t_start")s"
printf '  %s\n' "${summary[@]}"
echo "  container start to /readyz: ${ready_times[*]} s (load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores)"
