/**
 * Prometheus text exposition (format 0.0.4) and the process's own memory, for `opcat serve`'s `/metrics`
 * and the controllers' (src/cluster/health.ts).
 */

/**
 * One metric family: its samples as [labels, value] or, for a histogram's series, [labels, value,
 * suffix] (`_bucket`, `_sum`, `_count`).
 */
export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  samples: ([Record<string, string>, number] | [Record<string, string>, number, string])[];
}

const escapeLabel = (v: string): string => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

/** Prometheus text exposition of `families`. */
export function prometheusText(families: MetricFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    for (const [labels, value, suffix] of f.samples) {
      const l = Object.entries(labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(",");
      const v = Number.isFinite(value) ? value : 0;
      out.push(`${f.name}${suffix ?? ""}${l ? `{${l}}` : ""} ${v}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** The process's memory now, in bytes: resident set, V8 heap (used, total), memory outside the heap. */
export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

export function processMemory(): ProcessMemory {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
}

/** The process's memory as metric families (the names prom-client's default metrics use). */
export function memoryMetrics(m: ProcessMemory = processMemory()): MetricFamily[] {
  const gauge = (name: string, help: string, v: number): MetricFamily => ({
    name,
    help,
    type: "gauge",
    samples: [[{}, v]],
  });
  return [
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.", m.rss),
    gauge("nodejs_heap_size_total_bytes", "V8 heap size in bytes.", m.heapTotal),
    gauge("nodejs_heap_size_used_bytes", "V8 heap used in bytes.", m.heapUsed),
    gauge("nodejs_external_memory_bytes", "Memory of C++ objects bound to JavaScript objects, in bytes.", m.external),
  ];
}
