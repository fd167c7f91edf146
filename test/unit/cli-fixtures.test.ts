import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultFixturesDir, readFixtureDir } from '../../cli/fixture-files';
import { UsageError } from '../../cli/io';

describe('fixture directories', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-fixtures-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('sends each *.json file as one fixture, sorted by name, and each element of an array file as its own', () => {
    fs.writeFileSync(path.join(dir, 'b.json'), '[{"name":"b1"},{"name":"b2"}]');
    fs.writeFileSync(path.join(dir, 'a.json'), '{"name":"a"}\n');
    fs.writeFileSync(path.join(dir, 'notes.md'), 'not a fixture');
    const set = readFixtureDir(dir);
    expect(set.fixtures).toEqual(['{"name":"a"}\n', '{"name":"b1"}', '{"name":"b2"}']);
    expect(set.origins).toEqual([path.join(dir, 'a.json'), `${path.join(dir, 'b.json')}[0]`, `${path.join(dir, 'b.json')}[1]`]);
  });

  it('passes a file that is not JSON through unchanged, for the service to report', () => {
    fs.writeFileSync(path.join(dir, 'broken.json'), '{"name": ');
    expect(readFixtureDir(dir).fixtures).toEqual(['{"name": ']);
  });

  it('is a usage error when the directory is missing or holds no fixtures', () => {
    expect(() => readFixtureDir(path.join(dir, 'nope'))).toThrow(UsageError);
    expect(() => readFixtureDir(dir)).toThrow(/No \*\.json fixtures/);
  });

  it("finds a rule file's fixtures next to it by convention", () => {
    expect(defaultFixturesDir('rules/x.yml')).toBe('rules/x.fixtures');
    expect(defaultFixturesDir('rules/x.YAML')).toBe('rules/x.fixtures');
  });
});
