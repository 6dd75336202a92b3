/** What the numbers were measured on: CPU, memory, OS, Deno, load. */

export interface MachineInfo {
  cpuCount: number;
  cpuModel: string;
  memoryMb: number;
  os: string;
  osRelease: string;
  arch: string;
  deno: string;
  v8: string;
  /** 1/5/15-minute load averages when the run started (other work skews the figures). */
  loadAverage: number[];
}

function cpuModel(): string {
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? "unknown";
  } catch {
    try {
      const out = new Deno.Command("sysctl", { args: ["-n", "machdep.cpu.brand_string"] })
        .outputSync();
      return new TextDecoder().decode(out.stdout).trim() || "unknown";
    } catch {
      return "unknown";
    }
  }
}

function orDefault<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

export function machineInfo(): MachineInfo {
  return {
    cpuCount: navigator.hardwareConcurrency,
    cpuModel: cpuModel(),
    memoryMb: orDefault(() => Math.round(Deno.systemMemoryInfo().total / 2 ** 20), 0),
    os: Deno.build.os,
    osRelease: orDefault(() => Deno.osRelease(), "unknown"),
    arch: Deno.build.arch,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    loadAverage: orDefault(() => Deno.loadavg().map((l) => Math.round(l * 100) / 100), []),
  };
}

export function describeMachine(info: MachineInfo): string {
  return `${info.cpuCount} × ${info.cpuModel}, ${(info.memoryMb / 1024).toFixed(1)} GB, ` +
    `${info.os} ${info.osRelease} ${info.arch}, Deno ${info.deno}, ` +
    `load ${info.loadAverage.join(" ")}`;
}
