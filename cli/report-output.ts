import fs from 'node:fs';
import path from 'node:path';
import type { Io } from './io';

/** Every report format; each command offers the ones that mean something for it. */
export const REPORT_FORMATS = ['text', 'json', 'junit', 'markdown', 'sarif'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Formats that are JSON documents: rendered as objects, written with JSON.stringify. */
type JsonFormat = 'json' | 'sarif';

/** One command's results, renderable in the formats `F` it offers. */
export type Renderable<F extends ReportFormat> = {
  [K in F]: () => K extends JsonFormat ? unknown : string;
} & {
  /** One or two lines for the terminal when the report itself goes to a file. */
  summary(): string;
};

export function render<F extends ReportFormat>(report: Renderable<F>, format: F): string {
  const rendered = (report[format] as () => unknown)();
  return format === 'json' || format === 'sarif' ? JSON.stringify(rendered, null, 2) + '\n' : (rendered as string);
}

/**
 * Prints the report, or writes it to `output` and prints the summary, so a CI log stays readable
 * while the JUnit, SARIF or Markdown file goes to the reporter.
 */
export function emitReport<F extends ReportFormat>(io: Io, report: Renderable<F>, options: { format: F; output: string | undefined }): void {
  const rendered = render(report, options.format);
  if (options.output === undefined) {
    io.out(rendered);
    return;
  }
  fs.mkdirSync(path.dirname(path.resolve(options.output)), { recursive: true });
  fs.writeFileSync(options.output, rendered);
  io.out(`${report.summary()}\n${options.format} report written to ${options.output}\n`);
}
