/** Runs a test body with the log records of some categories captured (logging reset after). */
import { configureSync, type LogLevel, type LogRecord, resetSync } from "@logtape/logtape";

export async function withLogs(
  body: (records: LogRecord[]) => Promise<void>,
  { category = ["council-gateway"], lowestLevel = "debug" }: {
    category?: string[];
    lowestLevel?: LogLevel;
  } = {},
): Promise<void> {
  const records: LogRecord[] = [];
  configureSync({
    reset: true,
    sinks: { capture: (record) => records.push(record) },
    loggers: [
      { category, lowestLevel, sinks: ["capture"] },
      { category: ["logtape", "meta"], lowestLevel: "warning", sinks: [] },
    ],
  });
  try {
    await body(records);
  } finally {
    resetSync();
  }
}
