import type { FakeKind, FakeSiem } from './fake-siem';
import { startFakeElastic } from './elastic';
import { startFakeSentinel } from './sentinel';
import { startFakeSplunk } from './splunk';

/** Each remote kind's fake vendor server, started on loopback (test/fakes/<kind>/). */
export const FAKES: Partial<Record<FakeKind, () => Promise<FakeSiem>>> = {
  splunk: () => startFakeSplunk(),
  elastic: () => startFakeElastic(),
  sentinel: () => startFakeSentinel(),
};
