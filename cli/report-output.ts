import fs from 'node:fs';
import path from 'node:path';
import type { Io } from './io';

export const REPORT_FORMATS = ['text', 'json', 'junit'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** One command's results, renderable in every format. */
export type Renderable = {
  text(): string;
  json(): unknown;
  junit(): string;
  /** One or two lines for the terminal when the report itself goes to a file. */
  summary(): string;
};

/**
 * Prints the report, or writes it to `output` and prints the summary, so a CI log stays readable
 * while the JUnit file goes to the reporter.
 */
export function emitReport(io: Io, report: Renderable, options: { format: ReportFormat; output: string | undefined }): void {
  const rendered = options.format === 'json' ? JSON.stringify(report.json(), null, 2) + '\n' : options.format === 'junit' ? report.junit() : report.text();
  if (options.output === undefined) {
    io.out(rendered);
    return;
  }
  fs.mkdirSync(path.dirname(path.resolve(options.output)), { recursive: true });
  fs.writeFileSync(options.output, rendered);
  io.out(`${report.summary()}\n${options.format} report written to ${options.output}\n`);
}
