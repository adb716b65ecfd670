#!/usr/bin/env bash
# Simulated host report script for gameserver-api's tests and demo. demo/host.ts copies it to
# <root>/bin/servreport.sh. Tests steer it with <root>/control/report-mode:
# normal (default), slow (1 s, then the report), fail (text, exit 3), empty (nothing), large (2 MiB of "a"), hang (never ends),
# escape (the report, then a child that leaves the process group holding stdout open).
set -u

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
# Same marker as serv: host.remove() kills every process whose starting environment carries it.
if [ "${GAMESERVER_HOST_ROOT:-}" != "$root" ]; then
  GAMESERVER_HOST_ROOT=$root exec "$BASH" "${BASH_SOURCE[0]}" "$@"
fi

server_dir=${SERVER_DIR:-$root/server}
backup_dir=${BACKUP_DIR:-$root/backups}

newest_backup() {
  find "$backup_dir" -maxdepth 1 -type f -name '*.tar.gz' -printf '%T@ %f\n' 2>/dev/null |
    sort -rn | head -n 1 | cut -d ' ' -f 2-
}

print_report() {
  local up load _
  read -r up _ < /proc/uptime
  up=${up%.*}
  read -r load _ < /proc/loadavg
  printf 'Gameserver host report — %s\n' "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  printf 'Host:         %s\n' "$(uname -n)"
  printf 'Uptime:       %d days, %02d:%02d (load %s)\n' $((up / 86400)) $((up % 86400 / 3600)) $((up % 3600 / 60)) "$load"
  printf 'Server dir:   %s in %s\n' "$(du -sh -- "$server_dir" 2>/dev/null | cut -f 1)" "$server_dir"
  printf 'Last backup:  %s\n' "$(newest_backup)"
}

echo "$$" >> "$root/report-calls.txt"
# Which of the daemon's secrets reached the script (the answer must be none): one line per run
secrets=()
for name in API_KEY API_KEY_FILE EVENT_WEBHOOK_URL EVENT_WEBHOOK_URL_FILE EVENT_WEBHOOK_SECRET EVENT_WEBHOOK_SECRET_FILE; do [ -n "${!name+set}" ] && secrets+=("$name"); done
echo "${secrets[*]}" >> "$root/report-secrets.txt"
mode=normal
[ -f "$root/control/report-mode" ] && read -r mode < "$root/control/report-mode"
case ${mode:-normal} in
  normal) print_report ;;
  slow) sleep 1; print_report ;;
  fail) echo "servreport: cannot read $server_dir/logs: permission denied"; exit 3 ;;
  empty) ;;
  large) head -c 2097152 /dev/zero | tr '\0' a ;;
  hang)
    # A child that only a kill of the whole process group reaches: the daemon must not leave it behind.
    sleep 300 &
    echo "$!" >> "$root/control/report-children"
    exec sleep 300
    ;;
  escape)
    # A child outside the script's process group (setsid) that keeps stdout open after the script exits:
    # no kill of the group reaches it, so the daemon must not wait for the pipe to close.
    print_report
    setsid sleep 300 &
    child=$!
    echo "$child" >> "$root/control/report-children"
    # exit once it has left the group (setsid runs before the exec of sleep), or the daemon's kill of the group still reaches it
    comm=
    until [ "$comm" = sleep ]; do read -r comm 2>/dev/null < "/proc/$child/comm" || break; done
    exit 0
    ;;
  *) echo "servreport: unknown report mode '$mode'" >&2; exit 2 ;;
esac
