#!/usr/bin/env python3
"""Classify `perf script` samples (cpu-clock, call graphs) of one process
into the stages of a request. Usage: perf script -i X.data | stages.py"""
import sys, re, collections

def stage(frames):
    # frames: leaf first, each (sym, dso)
    syms = [f[0] for f in frames]
    kernel = frames and frames[0][1] in ('[kernel.kallsyms]', '[unknown]') and not frames[0][0].startswith(('runtime.', 'main.', 'github.com'))
    joined = ' '.join(syms)
    def has(*names):
        return any(any(s.startswith(n) for s in syms) for n in names)
    if kernel:
        if has('__x64_sys_io_uring_enter', '__do_sys_io_uring_enter', 'io_uring_enter'):
            if has('io_cqring_wait', 'schedule'):
                if has('io_run_task_work', 'tctx_task_work', 'io_req_rw_complete', 'io_req_task_complete','io_handle_tw_list'):
                    return 'kernel: io_uring_enter, completions run (task work)'
                return 'kernel: io_uring_enter, waiting (sleep/wake, context switch)'
            if has('io_submit_sqes', 'io_issue_sqe', 'io_read', 'io_write'):
                return 'kernel: io_uring_enter, submission (io_read, ext4, iomap, block layer)'
            if has('io_run_task_work', 'tctx_task_work', 'io_handle_tw_list', 'io_req_rw_complete'):
                return 'kernel: io_uring_enter, completions run (task work)'
            return 'kernel: io_uring_enter, other (entry, locking, CQ flush)'
        if has('__x64_sys_io_submit'):
            return 'kernel: io_submit (AIO)'
        if has('__x64_sys_io_getevents', '__x64_sys_io_pgetevents'):
            return 'kernel: io_getevents (AIO)'
        if has('eventfd_write'):
            return 'kernel: eventfd write (waking the loop)'
        if has('__x64_sys_read', 'ksys_read') and has('eventfd'):
            return 'kernel: eventfd read'
        if has('__x64_sys_futex', 'do_futex'):
            if has('futex_wait'):
                return 'kernel: futex wait (an M parks: runtime notesleep)'
            return 'kernel: futex wake (runtime wakes an M: notewakeup)'
        if has('__x64_sys_pread64', 'ksys_pread64', '__x64_sys_preadv2'):
            return 'kernel: pread (os.File / inline read)'
        if has('__x64_sys_nanosleep', '__x64_sys_sched_yield', 'do_nanosleep'):
            return 'kernel: nanosleep/sched_yield (runtime spinning Ms, osyield/usleep)'
        if has('__x64_sys_epoll_pwait', '__x64_sys_epoll_wait', 'do_epoll_wait'):
            return 'kernel: epoll_wait (netpoll)'
        if has('__x64_sys_getrusage', '__x64_sys_openat', '__x64_sys_getdents64', 'proc_', 'seq_read'):
            return 'kernel: the testbench meter (/proc, getrusage)'
        if has('asm_sysvec_apic_timer_interrupt', 'hrtimer_interrupt', 'asm_common_interrupt', 'irq_exit_rcu', '__do_softirq', 'handle_softirqs'):
            return 'kernel: interrupts, softirq, timers'
        if has('asm_exc_page_fault', 'exc_page_fault'):
            return 'kernel: page faults'
        if has('schedule', '__schedule', 'finish_task_switch'):
            return 'kernel: scheduling, other'
        if has('io_wq_worker', 'io_worker_handle_work', 'io_wqe_worker', 'io_wq_'):
            return 'kernel: io-wq worker'
        if has('entry_SYSCALL_64', 'do_syscall_64', 'syscall_exit_to_user_mode'):
            return 'kernel: other system calls'
        return 'kernel: other'
    leaf = syms[0] if syms else '?'
    # user space: the innermost frame that names a stage
    for s in syms:
        if s.startswith('github.com/diskio-go/diskio/internal/bench.') or s.startswith('main.') and 'Histogram' in joined.split(s)[0]:
            pass
    def pkg(s):
        return s
    if leaf.startswith('runtime.'):
        if has('runtime.gcBgMarkWorker', 'runtime.gcDrain', 'runtime.markroot', 'runtime.scanobject', 'runtime.gcStart','runtime.bgsweep','runtime.bgscavenge'):
            return 'Go: garbage collector'
        if has('runtime.mallocgc', 'runtime.newobject', 'runtime.makeslice'):
            return 'Go: allocation'
        if has('runtime.chansend', 'runtime.chanrecv', 'runtime.selectgo'):
            if has('runtime.goready', 'runtime.ready', 'runtime.gopark', 'runtime.park_m','runtime.runqput','runtime.wakep'):
                return 'Go: channel hand-off, park and ready (wake channel)'
            return 'Go: channel hand-off, park and ready (wake channel)'
        if has('runtime.schedule', 'runtime.findRunnable', 'runtime.park_m', 'runtime.goschedImpl', 'runtime.gosched_m', 'runtime.mcall', 'runtime.stealWork', 'runtime.runqget','runtime.runqsteal','runtime.execute','runtime.gogo','runtime.goexit0','runtime.wakep','runtime.startm','runtime.stopm','runtime.mPark','runtime.notesleep'):
            return 'Go: scheduler (schedule, findRunnable, Gosched, wakep)'
        if has('runtime.entersyscall', 'runtime.exitsyscall', 'runtime.reentersyscall', 'runtime.exitsyscallfast','syscall.Syscall','syscall.RawSyscall','internal/runtime/syscall'):
            return 'Go: system call entry/exit'
        if has('runtime.nanotime', 'runtime.walltime', 'time.now', 'time.Now'):
            return 'Go: clock reads'
        if has('runtime.sysmon'):
            return 'Go: sysmon'
        if has('runtime/pprof', 'runtime.sigprof'):
            return 'Go: profiler'
        return 'Go: runtime, other'
    if 'internal/bench' in leaf or 'time.Now' in leaf or 'time.Since' in leaf or leaf.startswith('main.'):
        return 'testbench: its loop, clock, histogram'
    if leaf.startswith('github.com/diskio-go/diskio/sched.(*loop)') or leaf.startswith('github.com/diskio-go/diskio/sched.(*uringQueue)') or leaf.startswith('github.com/diskio-go/diskio/uring.') or leaf.startswith('github.com/diskio-go/diskio/sched.(*aioQueue)') or leaf.startswith('github.com/diskio-go/diskio/aio.') or leaf.startswith('github.com/diskio-go/diskio/sched.finish') or leaf.startswith('github.com/diskio-go/diskio/sched.(*classPolicy)'):
        return 'diskio: the loop (accept, prepare SQEs, reap, complete)'
    if leaf.startswith('github.com/diskio-go/diskio/sched.(*stats)') or 'stats' in leaf and 'sched' in leaf:
        return 'diskio: statistics'
    if leaf.startswith('github.com/diskio-go/diskio/sched.'):
        return 'diskio: callers in sched (admit, push, await, finish, pool)'
    if leaf.startswith('github.com/diskio-go/diskio.'):
        return 'diskio: root package (File.ReadAt, direct path, acquire/release)'
    if leaf.startswith('sync.') or leaf.startswith('internal/sync') or leaf.startswith('sync/atomic'):
        return 'Go: sync (pool, mutexes)'
    if leaf.startswith('os.') or leaf.startswith('internal/poll.') or leaf.startswith('syscall.'):
        return 'os.File: os, internal/poll'
    return 'user: other (' + leaf.split('(')[0][:40] + ')'

def main():
    counts = collections.Counter()
    tot = 0
    frames = []
    header = None
    def flush():
        nonlocal tot
        if header is not None and frames and not any(('bench.Fill' in f[0] or 'makeDataFile' in f[0] or f[0]=='__x64_sys_unlinkat' or 'pprof' in f[0] or 'sigprof' in f[0]) for f in frames):
            counts[stage(frames)] += 1
            tot += 1
    for line in sys.stdin:
        if not line.strip():
            flush(); frames.clear(); header = None
            continue
        if not line.startswith((' ', '\t')):
            flush(); frames.clear(); header = line
            continue
        m = re.match(r'\s*[0-9a-f]+\s+(.+?)\s+\((.*)\)\s*$', line)
        if m:
            sym = re.sub(r'\+0x[0-9a-f]+$', '', m.group(1))
            frames.append((sym, m.group(2)))
    flush()
    cpu = float(sys.argv[1]) if len(sys.argv) > 1 else None
    for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
        extra = f"  {cpu*v/tot:6.3f} µs/op" if cpu else ''
        print(f"{100*v/tot:5.1f}%  {v:7d}{extra}  {k}")
    print(f"{tot} samples")

main()
