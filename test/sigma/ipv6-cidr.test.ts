import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { ipv6HexExpression, SqlBackend } from '../../sigma/backends/sql';
import { compileRule } from '../../sigma/evaluate';
import { parseIp } from '../../sigma/net';
import { rule } from './support/rules';

/**
 * IPv6 `cidr` in the DuckDB SQL backend is plain SQL (no inet extension). It must give the local
 * evaluator's verdict (sigma/net.ts) on every address, including the textual forms that are easy
 * to get wrong: `::` in every position, mixed case, IPv4 tails, zone ids, surrounding whitespace,
 * and near misses that are not addresses at all.
 */
let instance: DuckDBInstance;
let con: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  con = await instance.connect();
});

afterAll(() => {
  con.closeSync();
  instance.closeSync();
});

const TRICKY: readonly string[] = [
  // canonical and compressed
  '::1',
  '::',
  '::0',
  '0:0:0:0:0:0:0:1',
  '0000:0000:0000:0000:0000:0000:0000:0001',
  '::2',
  '1::',
  '1::1',
  'fe80::1',
  'FE80::1',
  'Fe80::aBcD',
  'fe80:0:0:0:0:0:0:1',
  'fe80::',
  'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'fec0::1',
  'fe7f::1',
  'fc00::',
  'fd12:3456:789a:1::1',
  'fdff::',
  'fe00::1',
  'fb00::1',
  '2001:db8::',
  '2001:DB8:0:0:8:800:200C:417A',
  '2001:db8::8:800:200c:417a',
  '2001:db9::1',
  '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
  '1:2:3:4:5:6:7::',
  '::2:3:4:5:6:7:8',
  '1:2:3::6:7:8',
  '1:2:3:4:5:6::8',
  'ff02::1',
  'ff02::1:ff00:1',
  // IPv4 tails
  '::ffff:127.0.0.1',
  '::FFFF:10.1.2.3',
  '::ffff:0.0.0.0',
  '::0.0.0.1',
  '::127.0.0.1',
  '64:ff9b::192.0.2.33',
  '::ffff:256.1.1.1',
  '::ffff:1.2.3',
  '::ffff:01.02.003.4',
  '::ffff:0001.2.3.4',
  '1:2:3:4:5:6:1.2.3.4',
  '1:2:3:4:5:6:7:1.2.3.4',
  'fe80::1.2.3.4',
  // zone ids and whitespace
  'fe80::1%eth0',
  'fe80::1%25',
  'fe80::1%',
  ' fe80::1 ',
  '\tfe80::1\n',
  '\u00a0fe80::1\u3000',
  '::1%lo\n',
  // not IPv6 addresses
  '',
  ' ',
  ':',
  ':::',
  '::1::',
  '1::2::3',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7',
  '1:2:3:4::5:6:7:8',
  ':1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7:',
  '12345::1',
  'g::1',
  'fe80::1/64',
  'fe80::1 x',
  '[::1]',
  '127.0.0.1',
  '10.0.0.1',
  'fe80',
  'localhost',
  '::ffff:1.2.3.4.5',
  '::1\nfe80::1',
];

const NETWORKS: readonly string[] = [
  '::1/128',
  '::/128',
  '::/0',
  'fe80::/10',
  'fc00::/7',
  '2001:db8::/32',
  'ff00::/8',
  '::ffff:0:0/96',
  '::ffff:127.0.0.0/104',
  '2001:db8::8:800:200c:417a/127',
  'fe80::/9',
  'fe80::/11',
];

async function sqlVerdicts(network: string, addresses: readonly string[]): Promise<boolean[]> {
  const where = new SqlBackend().where(rule(`    s:\n        Ip|cidr: '${network}'\n    condition: s`), { fieldExpression: () => 'ip' });
  const values = addresses.map((a) => `(${addresses.indexOf(a)}, '${a.replace(/'/g, "''")}')`).join(', ');
  const rows = (await con.runAndReadAll(`SELECT id, coalesce((${where}), false) AS m FROM (VALUES ${values}) t(id, ip) ORDER BY id`)).getRowObjects();
  return rows.map((r) => r.m === true);
}

function evaluatorVerdicts(network: string, addresses: readonly string[]): boolean[] {
  const match = compileRule(rule(`    s:\n        Ip|cidr: '${network}'\n    condition: s`)).match;
  return addresses.map((a) => match({ Ip: a }));
}

describe('IPv6 cidr in DuckDB SQL', () => {
  it.each(NETWORKS)('agrees with the evaluator on tricky addresses for %s', async (network) => {
    const unique = [...new Set(TRICKY)];
    const sql = await sqlVerdicts(network, unique);
    const expected = evaluatorVerdicts(network, unique);
    const disagreements = unique
      .filter((_, i) => sql[i] !== expected[i])
      .map((a) => `${JSON.stringify(a)}: sql=${sql[unique.indexOf(a)]} evaluator=${expected[unique.indexOf(a)]}`);
    expect(disagreements).toEqual([]);
  });

  it('gives the verdicts an IPv6 reading of each address implies', async () => {
    // Independent of the evaluator: a shared bug on both sides would pass the agreement test.
    const cases: Array<[string, string, boolean]> = [
      ['::1/128', '0:0:0:0:0:0:0:1', true],
      ['::1/128', '::0.0.0.1', true],
      ['::1/128', '::2', false],
      ['::1/128', '127.0.0.1', false],
      ['fe80::/10', 'FEBF::1', true],
      ['fe80::/10', 'fec0::1', false],
      ['fe80::/10', 'fe80::1%eth0', true],
      ['fc00::/7', 'fd00::1', true],
      ['fc00::/7', 'fe00::1', false],
      ['::ffff:0:0/96', '::ffff:192.168.0.1', true],
      ['::ffff:0:0/96', '::fffe:192.168.0.1', false],
      ['::/0', '1:2:3:4:5:6:7:8', true],
      ['::/0', '1:2:3:4:5:6:7', false],
      ['::/0', '10.0.0.1', false],
    ];
    for (const [network, address, expected] of cases) {
      expect({ network, address, matched: (await sqlVerdicts(network, [address]))[0] }).toEqual({ network, address, matched: expected });
    }
  });

  it('normalises random spellings of random addresses like parseIp', async () => {
    // Seeded, so a failure reproduces: random 128-bit values written with random compression,
    // case, zero padding and IPv4 tails, plus random corruptions of those spellings.
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const spellings: string[] = [];
    for (let k = 0; k < 1500; k++) {
      const groups = Array.from({ length: 8 }, () => (rand(3) === 0 ? 0 : rand(65536)));
      let parts = groups.map((g) => {
        const h = g.toString(16).padStart(rand(2) === 0 ? 4 : 1, '0');
        return rand(2) === 0 ? h.toUpperCase() : h;
      });
      let text: string;
      if (rand(4) === 0) {
        const v4 = `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
        parts = [...parts.slice(0, 6), v4];
      }
      const start = rand(parts.length);
      const length = rand(parts.length - start + 1);
      text = length > 0 ? `${parts.slice(0, start).join(':')}::${parts.slice(start + length).join(':')}` : parts.join(':');
      if (rand(5) === 0) {
        const at = rand(text.length + 1);
        text = text.slice(0, at) + ':.0g%'[rand(5)] + text.slice(at + (rand(2) === 0 ? 1 : 0));
      }
      spellings.push(text);
    }
    const unique = [...new Set(spellings)];
    const values = unique.map((a, i) => `(${i}, '${a.replace(/'/g, "''")}')`).join(', ');
    const rows = (await con.runAndReadAll(`SELECT id, ${ipv6HexExpression('ip')} AS hex FROM (VALUES ${values}) t(id, ip) ORDER BY id`)).getRowObjects();
    const wrong = unique.flatMap((a, i) => {
      const ip = parseIp(a);
      const expected = ip?.version === 6 ? ip.value.toString(16).padStart(32, '0') : null;
      return rows[i]!.hex === expected ? [] : [`${JSON.stringify(a)}: sql=${String(rows[i]!.hex)} parseIp=${expected}`];
    });
    expect(wrong).toEqual([]);
    // The corpus of spellings covers both outcomes, or the comparison would prove little.
    const valid = unique.filter((a) => parseIp(a)?.version === 6).length;
    expect(valid).toBeGreaterThan(unique.length / 2);
    expect(valid).toBeLessThan(unique.length);
  });
});
