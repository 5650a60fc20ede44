# audit.sh - the hardening audit in Bash, run by tests/languages/run.sh
# in every language's image (as the bash language, that image named for
# it): the lines test_integ_docker's Python audit prints, read without
# Python, and the image's own set-uid or set-gid files.
while IFS=: read -r k v; do
    case $k in NoNewPrivs | Seccomp | CapEff | CapBnd) echo "$k ${v//[[:space:]]/}" ;; esac
done </proc/self/status
echo "uid $(id -u) $(id -g)"
while read -r dev mnt fs opts rest; do [ "$mnt" = / ] && root=$opts; done </proc/self/mounts
case ,$root, in *,ro,*) echo "rootfs ro" ;; *) echo "rootfs rw: $root" ;; esac
for p in /usr/x /etc/x /x /run/x; do
    if (: >"$p") 2>/dev/null; then echo "writable $p"; fi
done
echo "ifaces $(ls /sys/class/net | tr '\n' ' ')"
echo "env $(env | cut -d= -f1 | grep -E 'DOCKER|REDIS|LLMSB' | tr '\n' ' ')"
echo "nofile $(ulimit -n) fsize $(ulimit -f) core $(ulimit -c) nproc $(ulimit -u)"
for d in /work /tmp /var/tmp /dev/shm; do
    echo "size $d $(($(stat -f -c '%b * %S' "$d") >> 20))"
done
echo "setid $(find / -xdev \( -perm -4000 -o -perm -2000 \) -type f 2>/dev/null | head -5 | tr '\n' ' ')"
read -r mem </sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || read -r mem _ </sys/fs/cgroup/memory.max
echo "mem $((mem >> 20))"
