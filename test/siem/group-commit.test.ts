import { GroupCommitQueue, type GroupWriter } from '../../siem/local/group-commit';

/**
 * A queue over a writer that records its transactions: `groups` holds the jobs of each committed
 * transaction; a job named in `failing` throws when written.
 */
function recordingQueue(options: { fullGroupRows: number; maxWaitMs: number }, failing: ReadonlySet<string> = new Set(), writeMs = 0) {
  const groups: string[][] = [];
  let open: string[] | undefined;
  const write = (job: string) => {
    if (failing.has(job)) throw new Error(`bad ${job}`);
    return `wrote ${job}`;
  };
  const writer: GroupWriter<string, string> = {
    begin: async () => {
      if (open) throw new Error('nested transaction');
      open = [];
    },
    add: async (jobs) => {
      const results: string[] = [];
      for (const job of jobs) {
        if (writeMs > 0) await new Promise((r) => setTimeout(r, writeMs));
        open!.push(job);
        results.push(write(job));
      }
      return results;
    },
    commit: async () => {
      groups.push(open!);
      open = undefined;
    },
    rollback: async () => {
      open = undefined;
    },
    alone: async (job) => {
      const result = write(job);
      groups.push([job]);
      return result;
    },
  };
  return { queue: new GroupCommitQueue(writer, options), groups };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GroupCommitQueue', () => {
  it('keeps the transaction open for an announced batch and commits both together', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 100, maxWaitMs: 10_000 });
    const endA = queue.announce();
    const endB = queue.announce();
    const a = queue.submit('a', 10);
    endA();
    await sleep(20);
    expect(groups).toEqual([]); // a is written but not committed: not acknowledged either
    const b = queue.submit('b', 10);
    endB();
    expect(await Promise.all([a, b])).toEqual(['wrote a', 'wrote b']);
    expect(groups).toEqual([['a', 'b']]);
  });

  it('waits at most maxWaitMs for a batch still being read', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 100, maxWaitMs: 50 });
    const endSlow = queue.announce();
    const started = performance.now();
    expect(await queue.submit('fast', 1)).toBe('wrote fast');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await Promise.all([queue.submit('slow', 1), Promise.resolve(endSlow())])).toEqual(['wrote slow', undefined]);
    expect(groups).toEqual([['fast'], ['slow']]);
  });

  it('counts the wait from the last write, so a slow write does not use it up', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 100, maxWaitMs: 100 }, new Set(), 300);
    const endB = queue.announce();
    const a = queue.submit('a', 1);
    await sleep(350); // a's write (300 ms) is longer than maxWaitMs; b arrives just after it
    const b = queue.submit('b', 1);
    endB();
    await Promise.all([a, b]);
    expect(groups).toEqual([['a', 'b']]);
  });

  it('does not wait once the group fills a row group, nor when nothing else is being read', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 100, maxWaitMs: 60_000 });
    const endOther = queue.announce();
    expect(await queue.submit('big', 100)).toBe('wrote big');
    endOther();
    expect(await queue.submit('alone', 1)).toBe('wrote alone');
    expect(groups).toEqual([['big'], ['alone']]);
  });

  it('writes each job of a failed group alone, so only the failing one fails', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 100, maxWaitMs: 10_000 }, new Set(['bad']));
    const ends = [queue.announce(), queue.announce(), queue.announce()];
    const results = Promise.allSettled([queue.submit('good', 1), queue.submit('bad', 1), queue.submit('also good', 1)]);
    ends.forEach((end) => end());
    const [good, bad, alsoGood] = await results;
    expect(good).toEqual({ status: 'fulfilled', value: 'wrote good' });
    expect(bad).toMatchObject({ status: 'rejected', reason: new Error('bad bad') });
    expect(alsoGood).toEqual({ status: 'fulfilled', value: 'wrote also good' });
    expect(groups).toEqual([['good'], ['also good']]);
  });

  it('runs exclusive tasks and groups one at a time, in queue order, whatever their outcome', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 100, maxWaitMs: 0 });
    const order: string[] = [];
    const first = queue.exclusive(async () => {
      await sleep(20);
      order.push('first');
      throw new Error('boom');
    });
    const batch = queue.submit('x', 1).then(() => order.push(`group ${groups.length}`));
    const last = queue.exclusive(async () => order.push('last'));
    await expect(first).rejects.toThrow('boom');
    await Promise.all([batch, last]);
    expect(order).toEqual(['first', 'group 1', 'last']);
  });

  it('starts a new group for jobs submitted after a group stopped taking them', async () => {
    const { queue, groups } = recordingQueue({ fullGroupRows: 2, maxWaitMs: 10_000 });
    const results = await Promise.all([queue.submit('a', 1), queue.submit('b', 1), queue.submit('c', 1)]);
    expect(results).toEqual(['wrote a', 'wrote b', 'wrote c']);
    expect(groups).toEqual([['a', 'b', 'c']]); // all three were ready when the group was filled
    await Promise.all([queue.submit('d', 2), queue.submit('e', 1)]);
    expect(groups.slice(1).flat()).toEqual(['d', 'e']);
  });
  it('waits for batches still being read at most maxWaitMs in all, however often the next one arrives', async () => {
    // A batch is always being read: each one is announced before the previous is submitted, and
    // arrives 10 ms later. Waiting up to 50 ms in all, the first group closes after a handful of
    // batches; waiting up to 50 ms at a time (and 500 ms in all), it held about 45.
    const { queue, groups } = recordingQueue({ fullGroupRows: 1_000_000, maxWaitMs: 50 });
    const acks: Promise<string>[] = [];
    let reading = queue.announce();
    for (let i = 0; i < 40; i++) {
      await sleep(10);
      const submitted = reading;
      reading = queue.announce();
      acks.push(queue.submit(`job${i}`, 1));
      submitted();
    }
    reading();
    await Promise.all(acks);
    expect(groups.flat()).toEqual(Array.from({ length: 40 }, (_, i) => `job${i}`));
    expect(groups[0]!.length).toBeLessThanOrEqual(12);
    expect(groups.length).toBeGreaterThanOrEqual(4);
  });
  it('commits a group kept busy by a steady trickle of small batches, so they are acknowledged', async () => {
    // Each write submits the next batch, so one is always ready when the writer looks again.
    const groups: string[][] = [];
    let open: string[] = [];
    const acknowledged: string[] = [];
    const submitted: string[] = [];
    let queue: GroupCommitQueue<string, string>;
    const next = (n: number) => {
      if (n >= 60) return;
      const job = `job${n}`;
      submitted.push(job);
      void queue.submit(job, 1).then(() => acknowledged.push(job));
    };
    queue = new GroupCommitQueue<string, string>(
      {
        begin: async () => void (open = []),
        add: async (jobs) => {
          for (const job of jobs) {
            await sleep(2);
            open.push(job);
            next(Number(job.slice(3)) + 1);
          }
          return [...jobs];
        },
        commit: async () => void groups.push(open),
        rollback: async () => undefined,
        alone: async (job) => job,
      },
      { fullGroupRows: 1_000_000, maxWaitMs: 3 },
    );
    next(0);
    while (acknowledged.length < 60) await sleep(5);
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.flat()).toEqual(submitted);
    // The first batch was acknowledged while the trickle went on.
    expect(acknowledged.indexOf('job0')).toBeLessThan(59);
  });
});
