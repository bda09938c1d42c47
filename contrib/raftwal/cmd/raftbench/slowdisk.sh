#!/usr/bin/env bash
# Runs raftbench on a slow disk: an ext4 loop device whose reads and writes
# from the cluster's processes are throttled to IOPS requests per second
# by the cgroup v1 blkio controller. Needs root, losetup, mkfs.ext4 and
# /sys/fs/cgroup/blkio. Everything it sets up is removed on exit.
#
#   sudo IOPS=300 ./slowdisk.sh /tmp/raftbench -rounds 3 -clients 16,256
#
# The arguments are the raftbench binary and its flags (-dir is added).
set -euo pipefail
IOPS=${IOPS:-300}
SIZE=${SIZE:-4G}
blkio=/sys/fs/cgroup/blkio
[ "$(id -u)" = 0 ] || { echo "slowdisk.sh needs root" >&2; exit 2; }
[ -e "$blkio/blkio.throttle.write_iops_device" ] || { echo "no cgroup v1 blkio throttling at $blkio" >&2; exit 2; }
work=$(mktemp -d /var/tmp/raftbench-slow.XXXXXX)
cg="$blkio/raftbench-slow-$$"
loop=""
cleanup() {
	if mountpoint -q "$work/mnt"; then
		for _ in 1 2 3 4 5; do umount "$work/mnt" && break; sleep 1; done
	fi
	[ -n "$loop" ] && losetup -d "$loop" || true
	[ -d "$cg" ] && rmdir "$cg" || true
	rm -rf "$work"
}
trap cleanup EXIT
truncate -s "$SIZE" "$work/disk.img"
loop=$(losetup --find --show --direct-io=on "$work/disk.img" 2>/dev/null || losetup --find --show "$work/disk.img")
mkfs.ext4 -q "$loop"
mkdir "$work/mnt"
mount "$loop" "$work/mnt"
dev=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
mkdir "$cg"
echo "$dev $IOPS" > "$cg/blkio.throttle.write_iops_device"
echo "$dev $IOPS" > "$cg/blkio.throttle.read_iops_device"
echo "slow disk: $loop ($dev) on $work/mnt, reads and writes throttled to $IOPS/s for the cluster's processes"
bin=$1
shift
# The subshell moves itself into the cgroup; raftbench and its nodes inherit it.
( echo $BASHPID > "$cg/cgroup.procs"; exec "$bin" -dir "$work/mnt/run" "$@" )
echo "requests let through by the throttle: $(grep -c . "$cg/blkio.throttle.io_serviced") lines"; grep "^$dev Total" "$cg/blkio.throttle.io_serviced" || true
