/**
 * CPU accounting from /proc (Linux), so the report can say where the machine's two cores went:
 * the server's process tree, its PostgreSQL, and the load generator. Elsewhere every reading is
 * undefined and the report leaves those columns blank.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const TICK_MS = 10; // USER_HZ is 100 on Linux

type Proc = { pid: number; ppid: number; ticks: number };

function readProcs(): Proc[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return undefined;
  }
  const procs: Proc[] = [];
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // Fields after the command, which is parenthesised and may itself hold spaces or parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime + stime, and cutime + cstime: the time of children that exited and were reaped
      // (PostgreSQL backends closed during the window), which would otherwise vanish from the tree.
      procs.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
      });
    } catch {
      // The process ended meanwhile.
    }
  }
  return procs;
}

/** The pid of the process listening on a TCP port (any address), or undefined. */
export function findListener(port: number): number | undefined {
  const inodes = new Set<string>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== "0A") continue; // 0A = LISTEN
      if (parseInt(cols[1].split(":")[1], 16) === port) inodes.add(cols[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const proc of readProcs() ?? []) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${proc.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${proc.pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        if (inode && inodes.has(inode)) return proc.pid;
      } catch {
        // fd closed meanwhile
      }
    }
  }
  return undefined;
}

/** CPU milliseconds (user + system) used so far by `root` and all its descendants, or undefined. */
export function treeCpuMs(root: number | undefined): number | undefined {
  if (root === undefined) return undefined;
  const procs = readProcs();
  if (!procs?.some((p) => p.pid === root)) return undefined;
  const children = new Map<number, Proc[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  let ticks = 0;
  const stack = [procs.find((p) => p.pid === root)!];
  while (stack.length > 0) {
    const p = stack.pop()!;
    ticks += p.ticks;
    stack.push(...(children.get(p.pid) ?? []));
  }
  return ticks * TICK_MS;
}

/** Busy and total CPU milliseconds of the whole machine (all cores) since boot, or undefined. */
export function machineCpuMs(): { busy: number; total: number } | undefined {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = cpu[3] + cpu[4]; // idle + iowait
    return { busy: (total - idle) * TICK_MS, total: total * TICK_MS };
  } catch {
    return undefined;
  }
}

/** Resident memory of one process in bytes (VmRSS, worker threads included), or undefined. */
export function rssBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}
