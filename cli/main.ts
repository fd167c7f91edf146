import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ApiClient } from './api-client';
import { decideCommand, type Decision } from './decide';
import { deployCommand, type DeployOptions } from './deploy';
import { defaultFixturesDir, readFixtureDir } from './fixture-files';
import { EXIT, UsageError, type Io } from './io';
import { lintOffline, lintThroughApi } from './lint';
import { LINT_FORMATS, lintFailed, lintReport } from './lint-report';
import { pushCommand } from './push';
import { ingestCommand } from './ingest';
import { rollbackCommand, type RollbackOptions } from './rollback';
import { emitReport, type ReportFormat } from './report-output';
import { replayOne, replaySubjects, type ReplayOutcome } from './replay';
import { REPLAY_FORMATS, replayFailed, replayReport } from './replay-report';
import { testRuleFile, type RuleTestOutcome } from './rule-test';
import { ruleFiles } from './rule-files';
import { syncCommand, type SyncOptions } from './sync';
import { TEST_FORMATS, testFailed, testReport } from './test-report';
import { Deadline, wholeNumber } from './wait';
import { CLI_VERSION } from './version';

const TARGET_KINDS = ['local', 'splunk', 'elastic', 'sentinel'] as const;

type ReportOptions<F extends ReportFormat> = { format: F; output?: string };
type LintOptions = ReportOptions<(typeof LINT_FORMATS)[number]> & { target?: string; offline?: boolean; targetKind?: (typeof TARGET_KINDS)[number] };
type TestOptions = ReportOptions<(typeof TEST_FORMATS)[number]> & { target: string; fixtures?: string };
type ReplayOptions = ReportOptions<(typeof REPLAY_FORMATS)[number]> & { target: string; window: string; budget?: number; timeout: number };

const formatOption = (formats: readonly ReportFormat[]) => new Option('--format <format>', 'report format').choices(formats).default('text');
const outputOption = () => new Option('--output <file>', 'write the report to this file and print only a summary');
const textOrJsonOption = () => new Option('--format <format>', 'output format').choices(['text', 'json'] as const).default('text');
/** A human decides an approval: an hour by default; raise it with the CI job's own time limit. */
const timeoutOption = () => new Option('--timeout <seconds>', 'with --wait: give up (exit 2) after this many seconds').argParser(wholeNumber(1)).default(3600);

function waitOnly(options: { wait?: boolean }, command: Command): void {
  if (!options.wait && command.getOptionValueSource('timeout') === 'cli') throw new UsageError('--timeout applies with --wait');
}

/** An ISO 8601 duration of weeks, days, hours, minutes, seconds (P7D, PT12H); the service checks it against the tier. */
const isoDuration = (value: string) => {
  if (!/^P(?=\d|T\d)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/.test(value)) throw new InvalidArgumentError('expected an ISO 8601 duration such as P7D or PT12H');
  return value;
};

function ruleFilesOf(paths: string[]): string[] {
  const files = ruleFiles(paths);
  if (files.length === 0) throw new UsageError(`No .yml/.yaml rule files in ${paths.join(', ')}`);
  return files;
}

/** Builds the `detflow` program; `run` returns the exit code instead of exiting, so tests can call it. */
export function buildProgram(io: Io, setCode: (code: number) => void): Command {
  const program = new Command('detflow')
    .description('Detection rules as code: lint, test and deploy Sigma rules through detflow')
    // Only before a command: `deploy --version <n>` names a rule version.
    .version(CLI_VERSION, '-V, --version', 'print the version of detflow')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  program
    .command('push')
    .description('Store rule files in the registry as new versions (unchanged files keep their version)')
    .argument('<files...>', 'rule files or directories of .yml/.yaml files')
    .addOption(textOrJsonOption())
    .action(async (paths: string[], options: { format: 'text' | 'json' }) => {
      const files = ruleFilesOf(paths);
      setCode(await pushCommand(io, ApiClient.fromEnv(io.env), files, options.format));
    });

  program
    .command('ingest')
    .description('Send events to a target’s event store: JSONL/NDJSON, JSON arrays (.json) or Parquet (.parquet)')
    .argument('<files...>', 'event files')
    .option('--target <name>', 'a target of your tenant whose store takes events', 'local')
    .option('--timestamp-field <field>', 'the field holding each event’s time', '@timestamp')
    .option('--product <product>', 'logsource.product of every event')
    .option('--category <category>', 'logsource.category of every event')
    .option('--service <service>', 'logsource.service of every event')
    .addOption(new Option('--batch-lines <n>', 'events per request (each request is stored atomically)').argParser(wholeNumber(1)).default(100_000))
    .addOption(textOrJsonOption())
    .action(
      async (
        files: string[],
        options: { target: string; timestampField: string; product?: string; category?: string; service?: string; batchLines: number; format: 'text' | 'json' },
      ) => {
        setCode(await ingestCommand(io, ApiClient.fromEnv(io.env), files, options));
      },
    );

  program
    .command('lint')
    .description('Lint rule files for a target: through the service, or with --offline in this process')
    .argument('<files...>', 'rule files or directories of .yml/.yaml files')
    .option('--target <name>', 'a target of your tenant (e.g. local); the service lints for its kind and field mapping')
    .option('--offline', 'lint in this process without the service (for pre-commit hooks)')
    .addOption(new Option('--target-kind <kind>', 'with --offline: the kind of target to lint for').choices(TARGET_KINDS))
    .addOption(formatOption(LINT_FORMATS))
    .addOption(outputOption())
    .action(async (paths: string[], options: LintOptions) => {
      if (options.offline && options.target !== undefined) throw new UsageError('--target names a target of the service; with --offline use --target-kind');
      if (!options.offline && options.targetKind !== undefined) throw new UsageError('--target-kind is for --offline; through the service use --target');
      if (!options.offline && options.target === undefined) throw new UsageError('lint needs --target <name> (a target of your tenant, e.g. local), or --offline');
      const files = ruleFilesOf(paths);
      const kind = options.targetKind ?? 'local';
      const results = options.offline ? lintOffline(files, kind) : await lintThroughApi(ApiClient.fromEnv(io.env), files, options.target!);
      emitReport(io, lintReport(results, options.offline ? `offline-${kind}` : options.target!), { format: options.format, output: options.output });
      setCode(lintFailed(results) ? EXIT.failed : EXIT.ok);
    });

  program
    .command('test')
    .description('Push each rule file, then run its fixtures (*.json) against it on a target')
    .argument('<rules...>', 'rule files or directories of .yml/.yaml files')
    .requiredOption('--target <name>', 'the target to run the fixtures on (e.g. local)')
    .option('--fixtures <dir>', 'directory of *.json fixtures (default: <rule>.fixtures next to each rule file)')
    .addOption(formatOption(TEST_FORMATS))
    .addOption(outputOption())
    .action(async (paths: string[], options: TestOptions) => {
      const files = ruleFilesOf(paths);
      if (options.fixtures !== undefined && files.length > 1) throw new UsageError('--fixtures applies to one rule file; with several, each uses <rule>.fixtures next to it');
      // Every fixture directory is read before anything is pushed: a missing one is a usage error, not half a run.
      const suites = files.map((file) => ({ file, fixtures: readFixtureDir(options.fixtures ?? defaultFixturesDir(file)) }));
      const client = ApiClient.fromEnv(io.env);
      const outcomes: RuleTestOutcome[] = [];
      for (const s of suites) outcomes.push(await testRuleFile(client, s.file, s.fixtures, options.target));
      emitReport(io, testReport(outcomes, options.target), { format: options.format, output: options.output });
      setCode(testFailed(outcomes) ? EXIT.failed : EXIT.ok);
    });

  program
    .command('replay')
    .description('Replay rules over a past window of a target and wait: events, alerts, projected alerts/day with its 95% interval, cost (rule files are pushed first)')
    .argument('<rules...>', 'rule files, directories of .yml/.yaml files, or ids of rules already in the registry')
    .requiredOption('--target <name>', 'the target whose stored events are replayed (e.g. local)')
    .addOption(new Option('--window <duration>', 'the window ending now, an ISO 8601 duration (at most the tier’s replay window)').argParser(isoDuration).default('P7D'))
    .addOption(new Option('--budget <alerts>', 'noise budget: a rule over this many alerts on any day of the window fails (exit 1)').argParser(wholeNumber(0)))
    .addOption(
      new Option('--timeout <seconds>', 'give up (exit 2) when the replays have not all ended after this many seconds, cancelling the one still running')
        .argParser(wholeNumber(1))
        .default(1800),
    )
    .addOption(formatOption(REPLAY_FORMATS))
    .addOption(outputOption())
    .action(async (args: string[], options: ReplayOptions) => {
      const subjects = replaySubjects(args);
      const client = ApiClient.fromEnv(io.env);
      const deadline = new Deadline(options.timeout);
      const outcomes: ReplayOutcome[] = [];
      // One at a time: a tier runs only a few replays and shadows at once, and other pipelines share them.
      for (const subject of subjects) {
        const name = subject.kind === 'file' ? subject.file : subject.ruleId;
        io.err(`replaying ${name} on ${options.target} over ${options.window}…\n`);
        outcomes.push(await replayOne(client, subject, { target: options.target, window: options.window, budget: options.budget }, deadline));
      }
      emitReport(io, replayReport(outcomes, options), { format: options.format, output: options.output });
      setCode(replayFailed(outcomes) ? EXIT.failed : EXIT.ok);
    });

  program
    .command('deploy')
    .description('Deploy a rule to a target (a rule file is pushed first); with --wait, until it is live or refused')
    .argument('<rule>', 'a rule file, or the id of a rule already in the registry')
    .requiredOption('--target <name>', 'the target to deploy to (e.g. local)')
    .option('--approval', "a reviewer's decision before deploying (the default)")
    .option('--no-approval', 'deploy without a decision, where the service allows it (not over the noise budget)')
    .addOption(new Option('--budget <alerts>', 'noise budget: the most alerts per day the rule may raise').argParser(wholeNumber(0)))
    .addOption(new Option('--version <version>', 'with a rule id: the version to deploy (default: the latest)').argParser(wholeNumber(1)))
    .option('--wait', 'wait for the decision and the deployment; exit 0 only when the rule is live')
    .addOption(timeoutOption())
    .addOption(textOrJsonOption())
    .action(async (rule: string, options: DeployOptions, command: Command) => {
      waitOnly(options, command);
      setCode(await deployCommand(io, ApiClient.fromEnv(io.env), rule, options));
    });

  program
    .command('sync')
    .description('Make a target match a folder of rule files: print the plan (create, update, delete, unchanged, with diffs); --apply carries it out')
    .argument('<dir>', 'the folder of .yml/.yaml rule files that is the source of truth for the target')
    .requiredOption('--target <name>', 'the target to compare with (e.g. local)')
    .option('--apply', 'carry the plan out: store new versions, deploy them, and (with --allow-delete) take off what the folder lacks')
    .option('--allow-delete', 'with --apply: also take rules off the target that no file in the folder has')
    .option('--approval', "with --apply: each deployment waits for a reviewer's decision (the default)")
    .option('--no-approval', 'with --apply: deploy without a decision, where the service allows it')
    .addOption(new Option('--budget <alerts>', 'with --apply: noise budget of every deployment, the most alerts per day a rule may raise').argParser(wholeNumber(0)))
    .option('--reason <text>', 'with --apply --allow-delete: why rules are taken off (default: not in <dir>)')
    .option('--wait', 'with --apply: wait until every change is live or removed; exit 0 only then')
    .addOption(timeoutOption())
    .addOption(textOrJsonOption())
    .action(async (dir: string, options: SyncOptions, command: Command) => {
      waitOnly(options, command);
      const applyOnly = (['allowDelete', 'approval', 'budget', 'reason', 'wait'] as const).filter((k) => options[k] !== undefined);
      if (!options.apply && applyOnly.length > 0)
        throw new UsageError(
          `${applyOnly.map((k) => (k === 'approval' && options.approval === false ? '--no-approval' : '--' + k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()))).join(', ')} appl${applyOnly.length === 1 ? 'ies' : 'y'} with --apply`,
        );
      setCode(await syncCommand(io, ApiClient.fromEnv(io.env), dir, options));
    });

  const decisions: Array<{ name: string; decision: Decision; description: string; commentRequired: boolean }> = [
    { name: 'approve', decision: 'approve', description: 'Approve a change waiting for a decision (not with the token that requested it)', commentRequired: false },
    { name: 'reject', decision: 'reject', description: 'Reject a change waiting for a decision, saying why', commentRequired: true },
    { name: 'request-changes', decision: 'request_changes', description: 'Send a change back to its author, saying what to change', commentRequired: true },
  ];
  for (const d of decisions) {
    const command = program.command(d.name).description(d.description).argument('<approval>', 'the approval id (printed by `detflow deploy`)');
    // A refusal without a reason leaves the author guessing: reject and request-changes need one.
    if (d.commentRequired) command.requiredOption('--comment <text>', 'why, for the author of the change');
    else command.option('--comment <text>', 'a note kept with the decision');
    command.addOption(textOrJsonOption()).action(async (approvalId: string, options: { comment?: string; format: 'text' | 'json' }) => {
      setCode(await decideCommand(io, ApiClient.fromEnv(io.env), approvalId, d.decision, options.comment, options.format));
    });
  }

  program
    .command('rollback')
    .description('Roll a deployed rule back on a target: to the version before (or --to-version), or off the target when there is none')
    .argument('<rule-id>', 'the id of the deployed rule')
    .requiredOption('--target <name>', 'the target to roll back on')
    .requiredOption('--reason <text>', 'why, kept with the rollback and sent in its notification')
    .addOption(new Option('--to-version <version>', 'the version to restore (default: the one live before)').argParser(wholeNumber(1)))
    .option('--wait', 'wait until the rollback completed; exit 0 only then')
    .addOption(timeoutOption())
    .addOption(textOrJsonOption())
    .action(async (ruleId: string, options: RollbackOptions, command: Command) => {
      waitOnly(options, command);
      setCode(await rollbackCommand(io, ApiClient.fromEnv(io.env), ruleId, options));
    });

  return program;
}

export async function run(argv: string[], io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env }): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => (code = c));
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    // Commander has already printed its message; --help and --version exit 0, every misuse is a usage error.
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.unusable;
    io.err(`detflow: ${(err as Error).message}\n`);
    return EXIT.unusable;
  }
}
