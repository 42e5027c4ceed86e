#!/bin/sh
# mg-shm-sweep MARKER [SHM_DIR]: removes the MPI shared-memory segments that a
# launch which did not finalize (killed, aborted) left behind: this user's
# files in SHM_DIR (default /dev/shm) with the libraries' segment names
# (MPICH mpich_shm_*, Open MPI sm_segment.*, vader_segment.*, osc_sm.*),
# changed since MARKER was modified (touched before the launch), that no
# process maps or holds open. Segments that only dying processes use (ranks
# on their way out after the launcher ended) are waited for, up to 30 s; what
# a live process uses is left alone. The same rules as mpiguide.core.segments,
# for ctest's launcher, without Python. Never fails.
marker=$1
dir=${2:-/dev/shm}
[ -f "$marker" ] && [ -d "$dir" ] || exit 0
dir=$(cd "$dir" && pwd -P)
uid=$(id -u)

candidates() {
    find "$dir" -maxdepth 1 -type f -user "$uid" -cnewer "$marker" \( -name 'mpich_shm_*' -o -name 'sm_segment.*' \
         -o -name 'vader_segment.*' -o -name 'osc_sm.*' \) 2>/dev/null
}

users() {  # "PID PATH" for every mapping and open file under $dir
    grep -sF " $dir/" /proc/[0-9]*/maps | sed -n 's|^/proc/\([0-9]*\)/maps:.* \(/.*\)$|\1 \2|p'
    find /proc/[0-9]*/fd -maxdepth 1 -lname "$dir/*" -printf '%h %l\n' 2>/dev/null |
        sed -n 's|^/proc/\([0-9]*\)/fd |\1 |p'
}

dying() {  # gone, a zombie, or SIGKILL/SIGTERM pending: it will unmap its files
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    state=${stat##*) }
    case ${state%% *} in Z | X | x) return 0 ;; esac
    for mask in $(sed -n 's/^\(SigPnd\|ShdPnd\):[[:space:]]*//p' "/proc/$1/status" 2>/dev/null); do
        [ $((0x$mask & 0x4100)) -ne 0 ] && return 0
    done
    return 1
}

deadline=$(($(date +%s) + 30))
while :; do
    found=$(candidates)
    [ -n "$found" ] || exit 0
    table=$(users)
    wait_more=0
    for f in $found; do
        pids=$(printf '%s\n' "$table" | awk -v f="$f" '$2 == f { print $1 }' | sort -u)
        if [ -z "$pids" ]; then
            rm -f "$f" 2>/dev/null && echo "mg-shm-sweep: removed $f" >&2
            continue
        fi
        all_dying=1
        for p in $pids; do dying "$p" || all_dying=0; done
        [ "$all_dying" = 1 ] && wait_more=1
    done
    [ "$wait_more" = 1 ] && [ "$(date +%s)" -lt "$deadline" ] || exit 0
    sleep 0.05
done
