#!/usr/bin/env python3
"""Independent cross-check of pqcount, without any plugin: QEMU's own execution
log (qemu-aarch64 -one-insn-per-tb -d exec,nochain -D FILE: one
'Trace CPU: HOSTPTR [FLAGS/PC/..] SYMBOL' line per executed guest instruction)
replayed with the plugin's rule: instructions whose symbol is a marker are not
counted; a region opens at the entry of pqprof_count_begin and closes at the
entry of pqprof_count_end (a marker's entry = the PC of its first executed
instruction). Prints one count per line, in the order the regions close.
usage: trace-count.py TRACE   (a file or a FIFO)"""
import re, sys
pat = re.compile(r"^Trace (\d+): \S+ \[[0-9a-f]+/([0-9a-f]+)/[^\]]*\] ?(\S*)")
entry = {}
count, stacks, total, marker = {}, {}, 0, 0
for line in open(sys.argv[1], errors="replace"):
    m = pat.match(line)
    if not m:
        continue
    cpu, pc, sym = int(m.group(1)), int(m.group(2), 16), m.group(3)
    if sym in ("pqprof_count_begin", "pqprof_count_end"):
        marker += 1
        e = entry.setdefault(sym, pc)
        if pc == e:
            if sym == "pqprof_count_begin":
                stacks.setdefault(cpu, []).append(count.get(cpu, 0))
            else:
                print(count.get(cpu, 0) - stacks[cpu].pop(), flush=True)
        continue
    count[cpu] = count.get(cpu, 0) + 1
    total += 1
print(f"trace: {total} instructions outside markers, {marker} inside", file=sys.stderr)
