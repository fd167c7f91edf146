import { compareInventory } from '../../domain/drift/compare-inventory';
import type { TargetObject } from '../../siem/adapter';

const D1 = '11111111-1111-4111-8111-111111111111';
const D0 = '00000000-0000-4000-8000-000000000000';
const live = [{ deploymentId: D1, ruleId: 'rule-a', version: 3 }];
const object = (o: Partial<TargetObject> = {}): TargetObject => ({
  name: 'detflow-rule-a',
  ruleId: 'rule-a',
  deploymentId: D1,
  version: 3,
  query: 'q',
  queryUnchanged: true,
  enabled: true,
  ...o,
});
const compare = (inventory: TargetObject[], settling: string[] = []) =>
  compareInventory({ live, inventory, objectNameOf: (r) => `detflow-${r}`, settling: new Set(settling) }).map((f) => [f.kind, f.objectName, f.deploymentId]);

describe('compareInventory', () => {
  it('finds nothing when the target holds exactly what detflow deployed', () => {
    expect(compare([object()])).toEqual([]);
  });
  it('reports a deleted object as missing, under the name it would have', () => {
    expect(compare([])).toEqual([['missing', 'detflow-rule-a', D1]]);
  });
  it('reports an edited query and a disabled object, both at once', () => {
    expect(compare([object({ queryUnchanged: false, enabled: false })])).toEqual([
      ['edited', 'detflow-rule-a', D1],
      ['disabled', 'detflow-rule-a', D1],
    ]);
  });
  it('reports another deployment, or no marker, as other_version', () => {
    expect(compare([object({ deploymentId: D0, version: 2 })])).toEqual([['other_version', 'detflow-rule-a', D1]]);
    expect(compare([object({ deploymentId: null, version: null })])).toEqual([['other_version', 'detflow-rule-a', D1]]);
  });
  it('reports objects under the naming scheme that no live deployment accounts for', () => {
    expect(compare([object(), object({ name: 'detflow-rule-b', ruleId: 'rule-b', deploymentId: D0 })])).toEqual([['unmanaged', 'detflow-rule-b', null]]);
  });
  it('leaves rules with a change in flight alone', () => {
    expect(compare([object({ deploymentId: D0 })], ['rule-a'])).toEqual([]);
    expect(compare([], ['rule-a'])).toEqual([]);
  });
});
