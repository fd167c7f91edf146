import { shuttingDown } from './drain';

/**
 * `?wait=N` for CI: reads the resource until `settled` holds, the seconds run out or the client
 * left or the API began shutting down, polling every 100 ms. Answers whatever it read last (undefined when the resource is gone).
 */
export async function longPoll<T>(
  read: () => Promise<T | undefined>,
  settled: (view: T) => boolean,
  seconds: number,
  gone: () => boolean = () => false,
): Promise<T | undefined> {
  const deadline = Date.now() + seconds * 1000;
  let view = await read();
  while (view !== undefined && !settled(view) && Date.now() < deadline && !gone() && !shuttingDown()) {
    await new Promise((r) => setTimeout(r, 100));
    view = await read();
  }
  return view;
}
