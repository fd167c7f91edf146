/**
 * The fake Splunk (test/fakes/splunk/server.ts) behind the FakeSiem handles the cross-kind tests
 * drive, plus Splunk-specific ones. References: see server.ts and spl.ts.
 */
import type { FakeSiem, ProcessEvent } from '../fake-siem';
import { FakeSplunkServer } from './server';
import type { Row } from './spl';

export interface FakeSplunkOptions {
  /** Serve https with this key and certificate (PEM). */
  readonly tls?: { readonly key: string; readonly cert: string };
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
  /** The index process events go to (and the connection's `index`). */
  readonly index?: string;
  /** Largest page of a collection answer (default 2, so that every listing pages). */
  readonly pageCap?: number;
  readonly now?: () => Date;
}

/** One scheduled run of a saved search, as the scheduler log and the audit log record it. */
export interface FakeRun {
  readonly time: Date;
  readonly status: 'success' | 'skipped' | 'continued' | 'delegated_remote_error' | 'delegated_remote_completion';
  readonly runTimeSeconds?: number;
  readonly resultCount?: number;
  readonly scanCount?: number;
  readonly reason?: string;
}

export type FakeSplunk = FakeSiem & {
  readonly url: string;
  readonly server: FakeSplunkServer;
  /** Events in CIM field names (`index`, `_time` as a Date, any other field). */
  addEvents(events: ReadonlyArray<Record<string, unknown> & { readonly time: Date }>): void;
  /** Scheduler-log and audit-log events of a saved search's runs. */
  recordRuns(name: string, runs: readonly FakeRun[]): void;
  /** Every search job's search text, in order. */
  searches(): string[];
  /** The next `times` writes are done but answered 500, as if the answer were lost on the way back. */
  loseWriteAnswers(times: number): void;
};

function basename(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

export async function startFakeSplunk(options: FakeSplunkOptions = {}): Promise<FakeSplunk> {
  const token = options.token ?? 'fake-splunk-token-5f3c2a';
  const username = options.username ?? 'detflow-svc';
  const password = options.password ?? 'fake-splunk-password-9d1e';
  const index = options.index ?? 'main';
  const now = options.now ?? (() => new Date());
  const server = new FakeSplunkServer({ token, username, password, pageCap: options.pageCap ?? 2, now, ...(options.tls ? { tls: options.tls } : {}) });
  const url = await server.listen();
  let serial = 0;
  const add = (row: Row, at: Date) => {
    serial++;
    server.events.push({ ...row, _time: at.getTime() / 1000, _cd: `0:${serial}`, _bkt: `${String(row.index)}~0~FAKE`, _serial: serial, splunk_server: 'fake-splunk' });
  };
  return {
    kind: 'splunk',
    url,
    server,
    connection: () => ({ management_url: url, token, index }),
    addProcessEvents(events: readonly ProcessEvent[]) {
      for (const e of events) {
        const fields: Row = {
          index,
          sourcetype: 'XmlWinEventLog',
          source: 'XmlWinEventLog:Microsoft-Windows-Sysmon/Operational',
          host: e.host ?? 'fake-host',
          tag: ['process', 'report'],
          signature_id: 1,
          process_path: e.image,
          process_name: basename(e.image),
          process: e.commandLine,
          ...(e.parentImage !== undefined ? { parent_process_path: e.parentImage, parent_process_name: basename(e.parentImage) } : {}),
          ...(e.user !== undefined ? { user: e.user } : {}),
          dest: e.host ?? 'fake-host',
        };
        const raw = Object.entries(fields)
          .filter(([k]) => !['index', 'tag', 'sourcetype', 'source'].includes(k))
          .map(([k, v]) => `${k}="${String(v)}"`)
          .join(' ');
        add({ ...fields, _raw: raw }, e.time);
      }
    },
    addEvents(events) {
      for (const { time, ...rest } of events) add({ index, ...(rest as Row), _raw: (rest._raw as string | undefined) ?? JSON.stringify(rest) }, time);
    },
    objects: () => server.objects(),
    editQuery(name, query) {
      const s = [...server.savedSearches.values()].find((x) => x.name === name);
      if (!s) throw new Error(`no saved search ${name}`);
      s.settings.search = query;
      s.updated = now();
    },
    setEnabled(name, enabled) {
      const s = [...server.savedSearches.values()].find((x) => x.name === name);
      if (!s) throw new Error(`no saved search ${name}`);
      s.settings.disabled = enabled ? '0' : '1';
      s.updated = now();
    },
    remove(name) {
      for (const [k, s] of server.savedSearches) if (s.name === name) server.savedSearches.delete(k);
    },
    recordAlerts(name, times) {
      for (const at of times) server.firedAlerts.push({ savedsearch: name, at, sid: server.newSid(name, at) });
    },
    recordRuns(name, runs) {
      const s = [...server.savedSearches.values()].find((x) => x.name === name);
      const app = s?.app ?? 'search';
      for (const r of runs) {
        const sid = server.newSid(name, r.time);
        add(
          {
            index: '_internal',
            sourcetype: 'scheduler',
            source: '/opt/splunk/var/log/splunk/scheduler.log',
            savedsearch_name: name,
            app,
            user: 'nobody',
            sid,
            status: r.status,
            ...(r.runTimeSeconds !== undefined ? { run_time: r.runTimeSeconds } : {}),
            ...(r.resultCount !== undefined ? { result_count: r.resultCount } : {}),
            ...(r.reason !== undefined ? { reason: r.reason } : {}),
            _raw: `status=${r.status}, savedsearch_name="${name}"`,
          },
          r.time,
        );
        if (r.status === 'success')
          add(
            {
              index: '_audit',
              sourcetype: 'audittrail',
              action: 'search',
              info: 'completed',
              search_id: `'${sid}'`,
              savedsearch_name: name,
              scan_count: r.scanCount ?? 0,
              total_run_time: r.runTimeSeconds ?? 0,
              _raw: `Audit:[action=search, info=completed, savedsearch_name="${name}"]`,
            },
            r.time,
          );
      }
    },
    expireCredentials() {
      server.credentialsExpired = true;
    },
    restoreCredentials() {
      server.credentialsExpired = false;
    },
    fault(fault) {
      server.faults.push({ ...fault, left: fault.times });
    },
    requests: () => [...server.log],
    writes: () => [...server.writeLog],
    searches: () => [...server.searches],
    loseWriteAnswers(times) {
      server.lostWriteAnswers += times;
    },
    close: () => server.close(),
  };
}
